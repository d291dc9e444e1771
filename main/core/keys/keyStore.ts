// Sandbox keys, held in the ledger (a 0600 file in the 0700 home: never in the spool).
import { randomBytes } from 'node:crypto';
import type { Db } from '../ledger/db';
import { UserError } from '../errors';
import { nowIso } from '../time';
import { DEFAULT_SPOOL, OP_NAME, SPOOL_NAME, SPOOL_NAME_RULE } from '../../../shared/protocol/ids';
import type { KeyFile } from '../../../shared/protocol/types';
import type { HostDocKey } from '../../../shared/protocol/hostAuth';
import { decodeSecret } from '../../../shared/protocol/sign';
import { merged } from '../merged';
import type { KeyInfo } from '../../../shared/ipc/views';
import type { Scope } from '../../../shared/allowlist/schema';

/** A key as every face shows it (the IPC view is the one definition). */
export type { KeyInfo, Scope };

export interface KeyWithSecret extends KeyInfo {
  /** null when the secret is sealed by a keychain this process cannot open (see SecretSealer). */
  secret: string | null;
}

/**
 * Seals secrets at rest with an OS keychain (the desktop app's Electron safeStorage). Without one,
 * secrets are stored as they are, in the 0600 ledger inside the 0700 home.
 */
export interface SecretSealer {
  format: string;
  seal(secret: string): string;
  open(sealed: string): string;
}

interface KeyRow extends Omit<KeyInfo, 'ops'> {
  ops: string | null;
  secret: string;
  secret_format: string;
}

function toInfo(row: KeyRow): KeyInfo {
  return {
    key_id: row.key_id,
    name: row.name,
    scope: row.scope,
    ops: row.ops ? (JSON.parse(row.ops) as string[]) : null,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
    rotated_to: row.rotated_to,
    last_used_at: row.last_used_at,
    spool: row.spool,
  };
}

export function keyFileOf(key: KeyWithSecret): KeyFile {
  if (key.secret === null) throw new Error(`the secret of ${key.key_id} is sealed`);
  return { v: 1, key_id: key.key_id, secret: key.secret };
}

function validateNew(name: string, scope: string, ops: string[] | null, spool: string): void {
  if (!/^\S.{0,99}$/u.test(name)) throw new UserError('a key name must be 1-100 characters and not start with a space');
  if (!SPOOL_NAME.test(spool)) throw new UserError(`"${spool}" is not a spool name: ${SPOOL_NAME_RULE}`);
  if (scope !== 'read' && scope !== 'write') throw new UserError(`scope must be read or write, not "${scope}"`);
  for (const op of ops ?? []) {
    if (!OP_NAME.test(op) && !op.startsWith('dumbwaiter.')) throw new UserError(`"${op}" is not a valid operation name`);
  }
}

export class KeyStore {
  constructor(
    private readonly db: Db,
    private readonly sealer: SecretSealer | null = null,
  ) {}

  private openSecret(row: Pick<KeyRow, 'secret' | 'secret_format'>): string | null {
    if (row.secret_format === 'plain') return row.secret;
    return this.sealer && row.secret_format === this.sealer.format ? this.sealer.open(row.secret) : null;
  }

  /** Seals every secret still stored as plain text; returns how many. */
  sealAll(): number {
    if (!this.sealer) return 0;
    const rows = this.db.prepare("SELECT key_id, secret FROM keys WHERE secret_format = 'plain'").all() as { key_id: string; secret: string }[];
    const update = this.db.prepare('UPDATE keys SET secret = ?, secret_format = ? WHERE key_id = ?');
    this.db.transaction(() => rows.forEach((r) => update.run(this.sealer!.seal(r.secret), this.sealer!.format, r.key_id)))();
    return rows.length;
  }

  create(name: string, scope: Scope, ops: string[] | null = null, spool = DEFAULT_SPOOL): KeyWithSecret {
    validateNew(name, scope, ops, spool);
    const secret = randomBytes(32).toString('base64url');
    const row: KeyRow = {
      key_id: `k_${randomBytes(9).toString('base64url')}`,
      name,
      scope,
      ops: ops && ops.length ? JSON.stringify(ops) : null,
      secret: this.sealer ? this.sealer.seal(secret) : secret,
      secret_format: this.sealer?.format ?? 'plain',
      created_at: nowIso(),
      revoked_at: null,
      rotated_to: null,
      last_used_at: null,
      spool,
    };
    this.db
      .prepare(
        `INSERT INTO keys (key_id, name, scope, ops, secret, secret_format, created_at, spool)
         VALUES (@key_id, @name, @scope, @ops, @secret, @secret_format, @created_at, @spool)`,
      )
      .run(row);
    return merged(toInfo(row), { secret });
  }

  list(): KeyInfo[] {
    return (this.db.prepare('SELECT * FROM keys ORDER BY created_at').all() as KeyRow[]).map(toInfo);
  }

  /** What the host signs results and inbox messages for this key with (revoked or not); null when the
   *  key is unknown or its secret sealed by a keychain this process cannot open. */
  signer(keyId: string): HostDocKey | null {
    const row = this.db.prepare('SELECT secret, secret_format FROM keys WHERE key_id = ?').get(keyId) as Pick<KeyRow, 'secret' | 'secret_format'> | undefined;
    const secret = row ? this.openSecret(row) : null;
    return secret ? { keyId, secret: decodeSecret(secret) } : null;
  }

  /** The key with its secret, for verification; null when unknown. */
  get(keyId: string): KeyWithSecret | null {
    const row = this.db.prepare('SELECT * FROM keys WHERE key_id = ?').get(keyId) as KeyRow | undefined;
    // merged(), not a spread: with one, a sweep that signed for 100,000 results made as many maps here (20 MiB).
    return row ? merged(toInfo(row), { secret: this.openSecret(row) }) : null;
  }

  private require(keyId: string): KeyWithSecret {
    const key = this.get(keyId);
    if (!key) throw new UserError(`no key ${keyId} (see: dumbwaiter keys list)`);
    return key;
  }

  /** Returns false when the key was already revoked. */
  revoke(keyId: string): boolean {
    this.require(keyId);
    const r = this.db.prepare('UPDATE keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL').run(nowIso(), keyId);
    return r.changes === 1;
  }

  /** A new key with the same name, scope, operations and spool; the old one is revoked at once. */
  rotate(keyId: string): KeyWithSecret {
    const old = this.require(keyId);
    if (old.revoked_at) throw new UserError(`key ${keyId} is revoked; create a new key instead`);
    return this.db.transaction(() => {
      const fresh = this.create(old.name, old.scope, old.ops, old.spool);
      this.db.prepare('UPDATE keys SET revoked_at = ?, rotated_to = ? WHERE key_id = ?').run(nowIso(), fresh.key_id, keyId);
      return fresh;
    }).immediate();
  }

  touch(keyId: string, at: string): void {
    this.db.prepare('UPDATE keys SET last_used_at = ? WHERE key_id = ?').run(at, keyId);
  }
}
