// Keys, as the faces manage them (`dumbwaiter keys`, the app's keys.* calls): who may call through
// which spool. A revoked key's waiting requests are rejected and its sandbox is told.
import { keyFileOf, type KeyWithSecret, type Scope } from '../keys/keyStore';
import { readSettings, writeSettings, withCeilingsMoved } from '../settings';
import { resolveSpool } from '../spool/registry';
import { spendReport, type CeilingReport } from '../policy/spend';
import { writeInboxMessage } from '../spool/inbox';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { agentSetupLines } from '../agentSetup';
import type { KeyView } from '../../../shared/ipc/views';
import type { KeyFile } from '../../../shared/protocol/types';
import type { HostContext } from './context';

export class HostKeys {
  constructor(private readonly ctx: HostContext) {}

  /** A key for one spool (by default the one commands act on): requests through any other are `unknown_key`.
   *  `save`: where its secret goes (the key file): the key exists only once that succeeded. */
  create(name: string, scope: Scope, ops: string[] | null, actor: string, spool = this.ctx.requireSpool().name, save?: (key: KeyWithSecret) => void): KeyWithSecret {
    const { db, keys, audit } = this.ctx.core;
    resolveSpool(this.ctx.settings, spool);
    return db.transaction(() => {
      const key = keys.create(name, scope, ops, spool);
      save?.(key);
      audit.record({
        kind: 'key_created',
        actor,
        key_id: key.key_id,
        spool,
        message: `key ${key.key_id} "${name}" created for spool ${spool} (${scope}${ops ? `, ops ${ops.join(',')}` : ''})`,
      });
      return key;
    })();
  }

  /** Revokes a key; its requests that have not started are rejected and the sandbox is told. */
  revoke(keyId: string, actor: string): boolean {
    const changed = this.ctx.core.keys.revoke(keyId);
    if (changed) this.afterRevoke(keyId, actor, 'key_revoked', `key ${keyId} revoked by ${actor}`);
    return changed;
  }

  /**
   * A new key for the holder of `keyId`, which is revoked. The new key inherits what limits the old:
   * its spend so far counts for the new key (policy/spend.ts follows rotated_to), and the ceilings
   * pinned to the old key id are pinned to the new one.
   */
  rotate(keyId: string, actor: string, save?: (key: KeyWithSecret) => void): KeyWithSecret {
    const { db, keys, home } = this.ctx.core;
    const settings = readSettings(home.settings); // read first: settings that cannot be read stop the rotation before it starts
    // The old key stays and no new one is made unless its secret went where it should (`save`).
    const fresh = db.transaction(() => {
      const k = keys.rotate(keyId);
      save?.(k);
      return k;
    })();
    const moved = settings.ceilings.filter((c) => c.key_id === keyId).map((c) => c.name);
    if (moved.length) writeSettings(home.settings, withCeilingsMoved(settings, keyId, fresh.key_id));
    const carried = moved.length ? `; ceiling${moved.length === 1 ? '' : 's'} ${moved.map((n) => `"${n}"`).join(', ')} now name ${fresh.key_id}` : '';
    this.afterRevoke(keyId, actor, 'key_rotated', `key ${keyId} rotated by ${actor}: replaced by ${fresh.key_id} and revoked; its spend so far counts for ${fresh.key_id}${carried}`);
    return fresh;
  }

  /** The per-key ceilings that hold key `keyId` (pinned to it or to every key), with its spend against each. */
  ceilings(keyId: string): CeilingReport[] {
    return spendReport(this.ctx.core.requests, this.ctx.settings.ceilings.filter((c) => c.per === 'key' && (c.key_id === undefined || c.key_id === keyId)), [keyId]);
  }

  private afterRevoke(keyId: string, actor: string, kind: 'key_revoked' | 'key_rotated', message: string): void {
    const { audit, decisions, keys, results } = this.ctx.core;
    audit.record({ kind, actor, key_id: keyId, message });
    this.ctx.wake(); // its queued requests must not start
    const rejected = decisions.rejectPendingOfKey(keyId, actor);
    const spool = keys.get(keyId)?.spool;
    const pinned = spool ? results.reach(spool) : null;
    const to = keys.signer(keyId); // the revoked key: only its holder needs to know
    if (pinned && to) {
      const n = rejected.length;
      writeInboxMessage(
        pinned.paths.inbox,
        to,
        'key_revoked',
        keyId,
        `Key ${keyId} was revoked on the host: requests signed with it are rejected${n ? ` (${n} waiting request${n === 1 ? ' was' : 's were'} rejected)` : ''}.`,
      );
    }
  }

  /** `spool`: only that spool's keys. */
  list(spool?: string): KeyView[] {
    const counts = this.ctx.core.requests.countByKey();
    return this.ctx.core.keys
      .list()
      .filter((k) => spool === undefined || k.spool === spool)
      .map((k) => ({ ...k, requests: counts.get(k.key_id) ?? 0 }));
  }

  /** Writes a key file for the sandbox, readable by its owner only. */
  writeFile(key: KeyWithSecret, file: string): void {
    this.saveFile(keyFileOf(key), file);
  }

  saveFile(keyFile: KeyFile, file: string): void {
    writeJsonAtomic(file, keyFile, 0o600);
  }

  /** Seals with the OS keychain the key secrets stored before the app could (recorded); how many. */
  seal(actor: string): number {
    const sealed = this.ctx.core.keys.sealAll();
    if (sealed) this.ctx.core.audit.record({ kind: 'keys_sealed', actor, message: `${sealed} key secrets sealed with the OS keychain` });
    return sealed;
  }

  /** What to paste into the sandbox (paths as the host sees them: adjust them to the sandbox's mounts). */
  pasteLines(keyFile: string, spoolName = this.ctx.spool?.name): string {
    const spool = this.ctx.settings.spools.find((s) => s.name === spoolName)?.dir ?? '/path/to/spool';
    return [
      '',
      'In the sandbox (with the spool and the key file mounted at these paths, or adjusted to where they are):',
      '',
      `  export DUMBWAITER_SPOOL='${spool}'`,
      `  export DUMBWAITER_KEY_FILE='${keyFile}'`,
      `  node "$DUMBWAITER_SPOOL/bin/dw.cjs" doctor      # or: python3 "$DUMBWAITER_SPOOL/bin/dw.py" doctor`,
      `  node "$DUMBWAITER_SPOOL/bin/dw.cjs" ops`,
      '',
      'Then give the agent its guide, which the host writes when it runs (and rewrites when the allowlist changes):',
      '',
      '  Tell the agent: "Read $DUMBWAITER_SPOOL/bin/AGENTS.md before using Dumbwaiter."',
      '  Or, for an agent with Agent Skills: copy $DUMBWAITER_SPOOL/bin/SKILL.md into its skills folder as dumbwaiter/SKILL.md',
      '',
      agentSetupLines(spool, keyFile),
      '',
      'See docs/SANDBOX.md for Docker, devcontainers, Podman and MCP.',
    ].join('\n');
  }
}
