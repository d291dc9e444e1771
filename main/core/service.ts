// The service API: what the command line (and later the desktop app, over IPC) can ask of the host.
// Each call works whether or not a daemon runs; after a change the daemon must act on, it wakes the
// daemon (wake.ts), which also finds it at its next tick should the wake not come.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { homePaths, type HomePaths } from './home';
import { visible } from '../../shared/text/visible';
import { UserError } from './errors';
import type { Db } from './ledger/db';
import { HostCore } from './hostCore';
import { AuditLog, type AuditQuery, type AuditRow } from './ledger/audit';
import { Requests, approvalOf, planOf, reconcileOf, type EndedRun, type RequestRow } from './ledger/requests';
import { KeyStore, keyFileOf, type KeyWithSecret, type Scope, type SecretSealer } from './keys/keyStore';
import { readSettings, writeSettings, withCeilingsMoved, withSetting, type Settings, type SpoolEntry } from './settings';
import { DEFAULT_SPOOL } from '../../shared/protocol/ids';
import { newSpoolProblem, resolveSpool, spoolForCommand, withoutSpool } from './spools';
import { spoolAllowlistProblem, spoolParentProblem } from './spoolFolders';
import { probeOptions, probeSpool } from './spool/probe';
import type { ProbeReport } from '../../shared/protocol/probe';
import { Decisions, type CancelOutcome } from './decisions';
import type { Widen } from './policy/grantRules';
import { Lifecycle } from './lifecycle';
import { Grants, type Grant } from './ledger/grants';
import { HostFlags } from './ledger/meta';
import { spendReport, type CeilingReport } from './policy/spend';
import { writeInboxMessage } from './spool/inbox';
import { checkSpool, spoolPaths, spoolPlaceRefusal, spoolRefusal } from './spool/layout';
import { readLiveLog, type LiveLogChunk } from './spool/liveLog';
import { readCatalog, readHeartbeat } from './spool/hostFiles';
import { initHome } from './setup';
import { homeAsOwner, ownerRefusal, readSpoolOwner, writeSpoolMarker, type SpoolOwner } from './spool/marker';
import { dryRun, dryRunReconcile, previewRun, type DryReconcileResult, type DryRunResult, type PreviewResult } from './allowlist/tryOut';
import { parseAllowlist } from './allowlist/load';
import { isLocked, readHolder, whileStopped, type LockHolder } from './daemon/lock';
import { disabledOf, opVisibleTo, type Allowlist, type Operation } from './allowlist/types';
import { writeJsonAtomic } from './fs/atomicWrite';
import type { AllowlistSaved, AllowlistView, KeyView, PendingApprovalView, SpoolInfo, StatusView } from '../../shared/ipc/views';
import type { CatalogDoc, InboxMessage, KeyFile, ReconcileAttempt, RequestState } from '../../shared/protocol/types';
import { sha256Hex } from '../../shared/protocol/canonicalJson';
import { attemptEnd } from '../../shared/protocol/reconcileText';
import { writeFileAtomic } from './fs/atomicWrite';
import { checkAllowlist, type AllowlistCheck } from './allowlist/check';
import { keptSteps } from './policy/plans';
import { reserveProblem } from './ledger/room';
import type { RequestFilter } from './ledger/requests';
import type { AllowlistContext } from './allowlist/roots';
import { agentSetupLines } from './agentSetup';

export interface StatusReport {
  home: string;
  /** The folder of the spool commands act on (--spool, else `default`, else the only one). */
  spool: string | null;
  spools: SpoolInfo[];
  /** `heartbeat_problem`: why host.json could not be read (a FIFO put there, say), when it could not. */
  daemon: { running: boolean; holder: LockHolder | null; heartbeat_at: string | null; heartbeat_problem: string | null };
  /** Why a spool is not being served (each named): the running daemon's word (it stopped touching
   *  it), else this process's own check of the folder. Null when every spool is fine. */
  spool_problem: string | null;
  /** `disabled`: operations valid as written that cannot run as the disk is now (a link leads a
   *  folder of theirs into a spool or the home), each with why; the catalog leaves them out. */
  allowlist: StatusView['allowlist'];
  requests: Record<RequestState, number>;
  /** `orphaned`: it outlived a host that stopped, and the daemon watches it (a cancel ends it). */
  running: (Pick<RequestRow, 'id' | 'op' | 'key_id' | 'spool' | 'started_at' | 'pid'> & { orphaned: boolean })[];
  /** `reconcile`: the last check of its effect; `reconcilable`: its operation declares a reconcile command. */
  uncertain: (Pick<RequestRow, 'id' | 'op' | 'key_id' | 'spool' | 'started_at' | 'error_message'> & { reconcile: ReconcileAttempt | null; reconcilable: boolean })[];
  keys: { active: number; revoked: number };
  paused: boolean;
  approvals: PendingApproval[];
  grants: Grant[];
  spend: CeilingReport[];
}

/** A request waiting for a person, as every face shows it (the IPC view is the one definition). */
export type PendingApproval = PendingApprovalView;

/** The host-side fields of a waiting request's card, from its recorded plan (or a plan's kept steps). */
function hostRunsOf(r: RequestRow): Pick<PendingApproval, 'run' | 'steps'> {
  const steps = keptSteps(r);
  if (steps) return { run: null, steps: steps.map((s) => ({ env: s.env, timeout_s: null, max_output_bytes: null, leaves_processes: s.leaves_processes })) };
  const p = planOf(r);
  return { run: p && { env: p.env, timeout_s: p.timeout_s, max_output_bytes: p.max_output_bytes, leaves_processes: p.leaves_processes === true }, steps: null };
}

export class HostService {
  readonly home: HomePaths;
  private readonly db: Db;
  private readonly keys: KeyStore;
  private readonly requests: Requests;
  private readonly audit: AuditLog;
  readonly grants: Grants;
  readonly decisions: Decisions;
  readonly lifecycle: Lifecycle;
  readonly flags: HostFlags;
  /** Whether this service opened its core (and so closes it). */
  private readonly ownsCore: boolean;
  readonly core: HostCore;

  /** `home`: the home's core, shared with a daemon of this process (the app); or the home's folder, for
   *  a core of this service's own (the command line). */
  constructor(
    home: HostCore | string,
    private readonly spoolFlag?: string,
    sealer: SecretSealer | null = null,
  ) {
    this.ownsCore = typeof home === 'string';
    this.core = typeof home === 'string' ? HostCore.open(home, sealer) : home;
    ({ home: this.home, db: this.db, keys: this.keys, requests: this.requests, audit: this.audit, grants: this.grants, decisions: this.decisions, lifecycle: this.lifecycle, flags: this.flags } = this.core);
    try {
      spoolForCommand(this.settings, spoolFlag); // an unknown --spool is an error at once
    } catch (e) {
      if (this.ownsCore) this.core.close();
      throw e;
    }
  }

  /** The settings as the file says now (see HostCore.settings). */
  get settings(): Settings {
    return this.core.settings;
  }

  /** The spool commands act on (keys create, inbox, the spool folder's check): --spool, else `default`,
   *  else the only one; null when none is (a removed --spool, or several spools and no `default`). */
  get spool(): SpoolEntry | null {
    try {
      return spoolForCommand(this.settings, this.spoolFlag);
    } catch {
      return null;
    }
  }

  /** The spool commands act on, or why there is none. */
  private requireSpool(): SpoolEntry {
    if (this.spool) return this.spool;
    throw new UserError(`this home has several spools and none named "${DEFAULT_SPOOL}": pass --spool NAME (dumbwaiter spools list)`);
  }

  /** Where this host's spools and home are, for the allowlist's rules on roots (allowlist/roots.ts). */
  get allowlistContext(): AllowlistContext {
    return { spools: this.settings.spools, home: this.home.root };
  }

  /** Tells the daemon that the ledger or the settings changed (after the commit). */
  private wake(): void {
    this.core.wake();
  }

  close(): void {
    if (this.ownsCore) this.core.close();
  }

  /** A key for one spool (by default the one commands act on): requests through any other are `unknown_key`.
   *  `save`: where its secret goes (the key file): the key exists only once that succeeded. */
  createKey(name: string, scope: Scope, ops: string[] | null, actor: string, spool = this.requireSpool().name, save?: (key: KeyWithSecret) => void): KeyWithSecret {
    resolveSpool(this.settings, spool);
    return this.db.transaction(() => {
      const key = this.keys.create(name, scope, ops, spool);
      save?.(key);
      this.recordKeyCreated(key, actor);
      return key;
    })();
  }

  private recordKeyCreated(key: KeyWithSecret, actor: string): void {
    const { name, scope, ops, spool } = key;
    this.audit.record({
      kind: 'key_created',
      actor,
      key_id: key.key_id,
      spool,
      message: `key ${key.key_id} "${name}" created for spool ${spool} (${scope}${ops ? `, ops ${ops.join(',')}` : ''})`,
    });
  }

  /** Revokes a key; its requests that have not started are rejected and the sandbox is told. */
  revokeKey(keyId: string, actor: string): boolean {
    const changed = this.keys.revoke(keyId);
    if (changed) this.afterRevoke(keyId, actor, 'key_revoked', `key ${keyId} revoked by ${actor}`);
    return changed;
  }

  /**
   * A new key for the holder of `keyId`, which is revoked. The new key inherits what limits the old:
   * its spend so far counts for the new key (policy/spend.ts follows rotated_to), and the ceilings
   * pinned to the old key id are pinned to the new one.
   */
  rotateKey(keyId: string, actor: string, save?: (key: KeyWithSecret) => void): KeyWithSecret {
    const settings = this.getSettings(); // read first: settings that cannot be read stop the rotation before it starts
    // The old key stays and no new one is made unless its secret went where it should (`save`).
    const fresh = this.db.transaction(() => {
      const k = this.keys.rotate(keyId);
      save?.(k);
      return k;
    })();
    const moved = settings.ceilings.filter((c) => c.key_id === keyId).map((c) => c.name);
    if (moved.length) writeSettings(this.home.settings, withCeilingsMoved(settings, keyId, fresh.key_id));
    const carried = moved.length ? `; ceiling${moved.length === 1 ? '' : 's'} ${moved.map((n) => `"${n}"`).join(', ')} now name ${fresh.key_id}` : '';
    this.afterRevoke(keyId, actor, 'key_rotated', `key ${keyId} rotated by ${actor}: replaced by ${fresh.key_id} and revoked; its spend so far counts for ${fresh.key_id}${carried}`);
    return fresh;
  }

  /** The per-key ceilings that hold key `keyId` (pinned to it or to every key), with its spend against each. */
  keyCeilings(keyId: string): CeilingReport[] {
    return spendReport(this.requests, this.settings.ceilings.filter((c) => c.per === 'key' && (c.key_id === undefined || c.key_id === keyId)), [keyId]);
  }

  private afterRevoke(keyId: string, actor: string, kind: 'key_revoked' | 'key_rotated', message: string): void {
    this.audit.record({ kind, actor, key_id: keyId, message });
    this.wake(); // its queued requests must not start
    const rejected = this.decisions.rejectPendingOfKey(keyId, actor);
    const spool = this.keys.get(keyId)?.spool;
    const pinned = spool ? this.core.results.reach(spool) : null;
    const to = this.keys.signer(keyId); // the revoked key: only its holder needs to know
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
  listKeys(spool?: string): KeyView[] {
    const counts = this.requests.countByKey();
    return this.keys
      .list()
      .filter((k) => spool === undefined || k.spool === spool)
      .map((k) => ({ ...k, requests: counts.get(k.key_id) ?? 0 }));
  }

  /** Writes a key file for the sandbox, readable by its owner only. */
  writeKeyFile(key: KeyWithSecret, file: string): void {
    this.saveKeyFile(keyFileOf(key), file);
  }

  saveKeyFile(keyFile: KeyFile, file: string): void {
    writeJsonAtomic(file, keyFile, 0o600);
  }

  /**
   * A human settles an `uncertain` run; or, with `force`, an orphaned one whose processes still run
   * (the daemon watching it then ends them).
   */
  resolve(id: string, outcome: 'succeeded' | 'failed', note: string, actor: string, opts: { force?: boolean } = {}): RequestRow {
    const row = this.requests.get(id);
    if (!row) throw new UserError(`no request ${id} in the ledger`);
    if (row.state === 'running') return this.resolveOrphan(row, outcome, note, actor, opts.force === true);
    if (row.state !== 'uncertain') throw new UserError(`request ${id} is ${row.state}, not uncertain: nothing to resolve`);
    // The human's verdict replaces the "interrupted" error; the audit log keeps the history.
    const next = this.lifecycle.move(
      row,
      outcome,
      { resolved_by: 'human', note, error_code: null, error_message: null },
      { kind: 'resolved', actor, message: `uncertain run resolved as ${outcome} by ${actor}${note ? `: ${note}` : ''}` },
    );
    if (!next) throw new UserError(`request ${id} changed while resolving; look again`);
    return next;
  }

  /** A verdict on a running request: only on an orphan a daemon watches (so that its processes are
   *  ended), and only when forced. */
  private resolveOrphan(row: RequestRow, outcome: 'succeeded' | 'failed', note: string, actor: string, force: boolean): RequestRow {
    const { id, pid } = row;
    if (!isLocked(this.home.lock)) {
      throw new UserError(
        `request ${id} was running when the host stopped, and no host runs now: start it (dumbwaiter daemon); it then watches the run while its processes run, and marks it uncertain once they have ended`,
      );
    }
    if (row.orphaned !== 1) throw new UserError(`request ${id} is running, not uncertain: nothing to resolve (to end it: dumbwaiter cancel ${id})`);
    if (!force) throw new UserError(`request ${id} is still running (process group ${pid}): cancel it (dumbwaiter cancel ${id}), or give your verdict anyway with --force`);
    // `orphaned` stays 1 until a host has ended its processes: the one watching it, or, should that one
    // stop first (or not have adopted it yet, as it was starting), the next one at its start.
    const next = this.lifecycle.move(
      row,
      outcome,
      { resolved_by: 'human', note, error_code: null, error_message: null, finished_at: new Date().toISOString() },
      {
        kind: 'resolved',
        actor,
        message: `orphaned run resolved as ${outcome} by ${actor} while its processes (process group ${pid}) still ran (forced); the host ends them${note ? `: ${note}` : ''}`,
      },
    );
    if (!next) throw new UserError(`request ${id} changed while resolving; look again`);
    return next;
  }

  /**
   * Runs an uncertain request's reconcile command now (in this process, whether or not a daemon
   * runs), records the attempt and moves the request as its verdict says (daemon/reconciler.ts).
   */
  checkReconcile(id: string, actor: string): Promise<RequestRow> {
    this.core.allowlist(); // one that cannot be used now is said before anything runs
    return this.core.reconciler.check(id, actor);
  }

  /** The allowlist as a daemon would load it from the file now. */
  private loadAllowlist(): Allowlist {
    try {
      return parseAllowlist(readFileSync(this.home.allowlist, 'utf8'), this.home.allowlist, this.allowlistContext);
    } catch (e) {
      throw new UserError(`the allowlist ${this.home.allowlist} cannot be used now: ${(e as Error).message}`);
    }
  }

  /** The allowlist file as it is, with its hash (to notice an outside edit) and its check. */
  readAllowlist(): AllowlistView {
    const text = existsSync(this.home.allowlist) ? readFileSync(this.home.allowlist, 'utf8') : '';
    return { path: this.home.allowlist, text, hash: sha256Hex(text), check: checkAllowlist(text, this.home.allowlist, this.allowlistContext) };
  }

  validateAllowlist(text: string): AllowlistCheck {
    return checkAllowlist(text, this.home.allowlist, this.allowlistContext);
  }

  /**
   * Saves allowlist text from an editor: refused when invalid, or when the file changed since the
   * editor read it (`baseHash`), so an outside edit is never overwritten. A running daemon reloads it.
   */
  saveAllowlist(text: string, baseHash: string, actor: string): AllowlistSaved {
    const current = this.readAllowlist();
    const check = checkAllowlist(text, this.home.allowlist, this.allowlistContext);
    if (current.hash !== baseHash) return { saved: false, reason: 'changed_outside', check, hash: current.hash };
    if (!check.ok) return { saved: false, reason: 'invalid', check, hash: current.hash };
    writeFileAtomic(this.home.allowlist, text);
    this.audit.record({ kind: 'allowlist_saved', actor, message: `${actor} saved the allowlist (${check.operations.length} operations)` });
    return { saved: true, hash: sha256Hex(text) };
  }

  /** The plan a sample request would get under `text` (the editor's, maybe unsaved). */
  previewOperation(text: string, op: string, args: Record<string, unknown>): PreviewResult {
    return previewRun(text, this.home.allowlist, op, args, this.allowlistContext);
  }

  /** Runs an operation once from the editor, outside the queue; the audit log records it. */
  async dryRunOperation(text: string, op: string, args: Record<string, unknown>, actor: string): Promise<DryRunResult> {
    const r = await dryRun(text, this.home.allowlist, op, args, this.allowlistContext, this.settings.kill_grace_s * 1000);
    if (r.ok) this.auditDryRun(actor, op, op, r, null);
    return r;
  }

  /** Runs an operation's reconcile command once from the editor (for a stand-in request id); audited as a dry run. */
  async dryRunReconcile(text: string, op: string, args: Record<string, unknown>, actor: string): Promise<DryReconcileResult> {
    const r = await dryRunReconcile(text, this.home.allowlist, op, args, this.allowlistContext, this.settings.kill_grace_s * 1000);
    if (r.ok) this.auditDryRun(actor, op, `the reconcile command of ${op}`, r, r.verdict);
    return r;
  }

  /** `verdict`: a reconcile command's (null for the operation itself). */
  private auditDryRun(actor: string, op: string, what: string, r: Extract<DryRunResult, { ok: true }>, verdict: string | null): void {
    const { argv, cwd } = r.plan;
    const end = attemptEnd({ exit_code: r.run.exit_code, signal: r.run.signal, error: r.run.error?.message ?? null });
    this.audit.record({
      kind: 'dry_run',
      actor,
      op,
      message: `${actor} dry-ran ${what}: ${end}${verdict ? ` (${verdict})` : ''}`,
      details: { argv, cwd, duration_ms: r.run.duration_ms, ...(verdict ? { reconcile: true, verdict } : {}) },
    });
  }

  /** New output of a running (or finished, while its log is kept) request, from byte `from`. */
  liveOutput(id: string, from: number): LiveLogChunk {
    const row = this.requests.get(id);
    const pinned = row ? this.core.results.reach(row.spool) : null;
    return row && pinned ? readLiveLog(pinned.paths.results, row.wire_id, from) : { text: '', next: from, skipped: 0 };
  }

  /** This home, as a spool's marker names the home that serves it (spool/marker.ts). */
  private get owner(): SpoolOwner {
    return homeAsOwner(this.home.root, this.settings);
  }

  /** Whether `dir` (by default the spool commands act on) is a safe, complete spool of this home, and if not, why. */
  checkSpoolFolder(dir = this.spool?.dir ?? null): { path: string; ok: boolean; message: string } {
    if (!dir) return { path: '', ok: false, message: 'No spool folder is set: choose one.' };
    const abs = path.resolve(dir);
    try {
      checkSpool(abs);
      const foreign = ownerRefusal(abs, this.owner);
      if (foreign) return { path: abs, ok: false, message: foreign };
      return { path: abs, ok: true, message: 'Private to you and complete.' };
    } catch (e) {
      if (e instanceof UserError) return { path: abs, ok: false, message: e.message };
      throw e;
    }
  }

  /**
   * Moves the spool commands act on (else `default`) to `dir` (absolute), created safely with its
   * clients in it (its missing parents only with `parents`); refused for a folder holding files the
   * host did not write. A running daemon serves
   * it there within its rescan interval (one started with --spool, from its next start).
   */
  useSpool(dir: string, actor: string, parents = false): { path: string; ok: boolean; message: string } {
    if (!path.isAbsolute(dir)) throw new UserError(`${dir} is a relative path: give the spool folder's full path`);
    const abs = path.resolve(dir);
    const name = this.spool?.name ?? DEFAULT_SPOOL;
    initHome(this.home.root, abs, abs, name, { parents });
    this.audit.record({ kind: 'settings_changed', actor, spool: name, message: `${actor} moved spool ${name} to ${abs}` });
    this.wake();
    return { ...this.checkSpoolFolder(abs), message: `Ready: spool ${name} is now ${abs}. A running host serves it there within seconds; share this folder with its sandbox.` };
  }

  /** What to paste into the sandbox (paths as the host sees them: adjust them to the sandbox's mounts). */
  pasteLines(keyFile: string, spoolName = this.spool?.name): string {
    const spool = this.settings.spools.find((s) => s.name === spoolName)?.dir ?? '/path/to/spool';
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

  /** A message typed by the human, for a sandbox's inbox (by default the spool commands act on): one
   *  copy signed for each of that spool's active keys. */
  sendNotice(text: string, actor: string, spool = this.requireSpool().name): InboxMessage[] {
    const pinned = this.core.results.reach(spool);
    if (!pinned) throw new UserError(`spool ${spool} is not reachable or not safe: no message can be written`);
    const to = this.listKeys(spool).filter((k) => !k.revoked_at).map((k) => this.keys.signer(k.key_id)).filter((k) => k !== null);
    if (to.length === 0) throw new UserError(`no active key of spool ${spool} whose secret this process can open: nobody could read the message`);
    const msgs = to.map((k) => writeInboxMessage(pinned.paths.inbox, k, 'notice', null, text));
    this.audit.record({ kind: 'notice_sent', actor, spool, message: `${actor} wrote to the sandbox of spool ${spool} (${to.length} key${to.length === 1 ? '' : 's'}): ${text.slice(0, 200)}` });
    return msgs;
  }

  /** A spool's catalog.json as its sandbox sees it; null when it is not a regular file of the catalog's shape. */
  catalog(spool = this.spool?.name): CatalogDoc | null {
    const pinned = spool ? this.core.results.reach(spool) : null;
    return pinned ? readCatalog(pinned.paths.catalogJson) : null;
  }

  /** A request as the ledger has it now, or null. */
  request(id: string): RequestRow | null {
    return this.requests.get(id);
  }

  /** The host's handle of the request that `wireId` names in `spool` (a plan and its steps name
   *  requests as their sandbox does), or `wireId` when there is none. */
  handleIn(spool: string, wireId: string): string {
    return this.requests.bound(spool, wireId)?.id ?? wireId;
  }

  listRequests(f: RequestFilter = {}): ReturnType<Requests['list']> {
    return this.requests.list(f);
  }

  /** The audit log's last entry so far (0 when empty): what `endedRunsAfter` counts from. */
  lastAuditSeq(): number {
    return this.audit.lastSeq();
  }

  /** Runs that reached a final state after audit entry `seq`, oldest first. */
  endedRunsAfter(seq: number): EndedRun[] {
    return this.requests.endedRunsAfter(seq);
  }

  /** Seals with the OS keychain the key secrets stored before the app could (recorded); how many. */
  sealKeys(actor: string): number {
    const sealed = this.keys.sealAll();
    if (sealed) this.audit.record({ kind: 'keys_sealed', actor, message: `${sealed} key secrets sealed with the OS keychain` });
    return sealed;
  }

  pendingApprovals(): PendingApproval[] {
    return this.requests.inState('awaiting_approval').map((r) => ({
      id: r.id,
      op: r.op,
      key_id: r.key_id,
      spool: r.spool,
      waiting_since: r.updated_at,
      expires_at: r.expires_at,
      approval: approvalOf(r)!,
      args: keptSteps(r) ? {} : (JSON.parse(r.args_json) as Record<string, unknown>),
      ...hostRunsOf(r),
    }));
  }

  /** `forSeconds`: also approve this key's later calls of this operation with the same arguments for
   *  that long (at most a day); `widen`: the arguments those calls may vary, and how. */
  approve(id: string, actor: string, forSeconds?: number, widen?: Widen): ReturnType<Decisions['approve']> {
    if (forSeconds !== undefined && !(forSeconds >= 1 && forSeconds <= 86400)) {
      throw new UserError('a time-boxed approval lasts from 1 second to 24 hours');
    }
    return this.decisions.approve(id, actor, forSeconds, widen);
  }

  deny(id: string, actor: string, reason: string): RequestRow {
    return this.decisions.deny(id, actor, reason);
  }

  listGrants(all = false): Grant[] {
    return this.grants.list(all);
  }

  revokeGrant(id: string, actor: string): boolean {
    const g = this.grants.get(id);
    if (!g) throw new UserError(`no grant ${id} (see: dumbwaiter approvals grants)`);
    const changed = this.grants.revoke(id, actor);
    if (changed) {
      this.audit.record({ kind: 'grant_revoked', actor, key_id: g.key_id, op: g.op, message: `grant ${id} (${g.op} for key ${g.key_id}) revoked by ${actor}` });
      this.wake();
    }
    return changed;
  }

  cancel(id: string, actor: string): CancelOutcome {
    return this.decisions.cancel(id, actor);
  }

  /** Returns false when it already was in that state. */
  setPaused(paused: boolean, actor: string): boolean {
    const changed = this.flags.setPaused(paused);
    if (changed) {
      this.audit.record({ kind: paused ? 'paused' : 'resumed', actor, message: paused ? `host paused by ${actor}: nothing new starts` : `host resumed by ${actor}` });
    }
    return changed;
  }

  getSettings(): Settings {
    return readSettings(this.home.settings);
  }

  /** Changes one setting (validated as a whole); a running daemon picks it up at once. */
  setSetting(name: string, value: unknown, actor: string): Settings {
    const before = this.getSettings();
    const next = withSetting(before, name, value);
    writeSettings(this.home.settings, next);
    this.wake();
    this.audit.record({
      kind: 'settings_changed',
      actor,
      message: `${actor} set ${name} to ${JSON.stringify(next[name as keyof Settings])} (was ${JSON.stringify(before[name as keyof Settings])})`,
    });
    return next;
  }

  searchAudit(q: AuditQuery): AuditRow[] {
    return this.audit.search(q);
  }

  /** A running daemon's word (it stopped touching the spool, and why); else our own check of the folder,
   *  as a stopped daemon's word may be stale (it checks again when it starts). */
  private spoolProblem(spool: SpoolEntry, daemonRunning: boolean): string | null {
    if (daemonRunning) return this.flags.spoolProblem(spool.name);
    const c = this.checkSpoolFolder(spool.dir);
    return c.ok ? null : c.message;
  }

  /** Every spool of the home, with its state. */
  listSpools(daemonRunning = isLocked(this.home.lock), ops: ReadonlyMap<string, Pick<Operation, 'name' | 'spools'>> = this.allowlistOrEmpty().operations): SpoolInfo[] {
    const keys = this.keys.list();
    return this.settings.spools.map((s) => {
      const pinned = this.core.results.reach(s.name);
      const problem = this.spoolProblem(s, daemonRunning);
      const probe = this.flags.probe(s.name);
      return {
        name: s.name,
        dir: s.dir,
        problem,
        // The daemon serves no mount it finds unusable (SpoolServer.usable): while it serves this one,
        // an "unusable" verdict is from before the fix (its own check passes now), not the spool's state.
        probe: daemonRunning && problem === null && probe?.verdict === 'unusable' ? null : probe,
        keys: keys.filter((k) => k.spool === s.name && !k.revoked_at).length,
        open: this.requests.openInSpool(s.name),
        heartbeat_at: readHeartbeat((pinned?.paths ?? spoolPaths(s.dir)).hostJson).heartbeat_at,
        operations: [...ops.values()].filter((op) => opVisibleTo(op, s.name)).map((op) => op.name),
      };
    });
  }

  /** The allowlist as a daemon would load it now, or none when it cannot be loaded (status says why). */
  private allowlistOrEmpty(): Allowlist {
    try {
      return this.loadAllowlist();
    } catch {
      return { version: 1, operations: new Map(), disabled: new Map(), context: this.allowlistContext };
    }
  }

  /** A new spool for another sandbox: its folder created safely (new or empty, apart from the other
   *  spools and the home; its missing parents only with `parents`), with its clients. A running daemon
   *  starts serving it within a tick. */
  addSpool(name: string, dir: string, actor: string, parents = false): SpoolInfo {
    const problem = this.spoolAddProblem(name, dir, parents);
    if (problem) throw new UserError(problem);
    initHome(this.home.root, path.resolve(dir), path.resolve(dir), name, { parents });
    this.audit.record({ kind: 'spool_added', actor, spool: name, message: `${actor} added spool ${name} at ${path.resolve(dir)}` });
    this.wake();
    return this.listSpools().find((s) => s.name === name)!;
  }

  /**
   * The hand-over of a spool another home serves (`spools adopt`): spool `name` of this home from now
   * on, and refused to `fromHome`, the home its marker names (by its folder or its id). Only while that
   * home's daemon is stopped: its lock is held meanwhile, so it cannot start halfway. That home keeps
   * the spool in its list (and its keys) until `spools remove` there; its daemon no longer serves it.
   */
  adoptSpool(name: string, dir: string, fromHome: string, actor: string): SpoolInfo {
    const abs = path.resolve(dir);
    const owner = readSpoolOwner(abs);
    if (!owner || owner.home_id === this.owner.home_id) throw new UserError(`spool ${abs} is served by no other home: add it with dumbwaiter spools add ${name} '${abs}'`);
    const from = homePaths(path.resolve(fromHome));
    const fromId = existsSync(from.settings) ? readSettings(from.settings).host_id : null;
    if (fromId !== owner.home_id && (fromId !== null || from.root !== owner.home)) {
      throw new UserError(`spool ${abs} is served by the home ${visible(owner.home)} (id ${visible(owner.home_id)}), not by ${from.root}: name that one with --from-home`);
    }
    const problem = this.spoolNamingProblem(name, abs) ?? spoolAllowlistProblem(this.settings, this.home, name, abs);
    if (problem) throw new UserError(problem);
    whileStopped(from.lock, from.lockInfo, `the daemon of ${from.root}`, () => {
      writeSpoolMarker(abs, this.owner);
      initHome(this.home.root, abs, abs, name);
    });
    this.audit.record({ kind: 'spool_added', actor, spool: name, message: `${actor} took spool ${name} at ${abs} over from the home ${from.root}` });
    this.wake();
    return this.listSpools().find((s) => s.name === name)!;
  }

  /**
   * Why spool `name` cannot be added at `dir`, or null: spoolNamingProblem's reasons, then a folder
   * that cannot be made there (missing parents, unless `parents`), cannot be a spool (what is on the
   * disk there) or lies within an operation's reach.
   */
  spoolAddProblem(name: string, dir: string, parents = false): string | null {
    return this.spoolNamingProblem(name, dir) ?? spoolParentProblem(dir, parents) ?? spoolRefusal(dir, this.owner) ?? spoolAllowlistProblem(this.settings, this.home, name, dir);
  }

  /**
   * Why spool `name` cannot be added at `dir`, from the name and the path's text alone (the app asks
   * this before its question; what is on the disk only after it, so that a page cannot learn what
   * exists): a name in use, or one whose removed spool's requests are still in the ledger (the
   * results sweep would write them into the new folder, for another sandbox to read); a path that is
   * relative, the root, holds the user's home, or overlaps Dumbwaiter's home or another spool.
   */
  spoolNamingProblem(name: string, dir: string): string | null {
    const s = this.settings;
    const taken = s.spools.find((x) => x.name === name);
    if (taken) return `there is already a spool named "${name}" (${taken.dir})`;
    const history = this.requests.countInSpool(name);
    if (history > 0) {
      return `a removed spool named "${name}" still has ${history} request${history === 1 ? '' : 's'} in the ledger (they leave it after retention_ledger_days, ${s.retention_ledger_days} days): give the new spool another name`;
    }
    return spoolPlaceRefusal(dir) ?? newSpoolProblem(s, this.home.root, name, dir);
  }

  /** Why spool `name` cannot be removed now, or null (the app asks this before its question). */
  spoolRemoveProblem(name: string): string | null {
    if (!this.settings.spools.some((s) => s.name === name)) return `there is no spool named "${name}" (dumbwaiter spools list)`;
    const open = this.requests.openInSpool(name);
    if (open > 0) {
      return `spool ${name} has ${open} open request${open === 1 ? '' : 's'} (queued, waiting, running or uncertain): settle or cancel them first (dumbwaiter status); if its sandbox keeps sending more, revoke its keys first`;
    }
    const naming = this.allowlistNaming(name);
    return naming.length ? `the allowlist lists spool ${name} for ${naming.join(', ')}: remove it from their spools first` : null;
  }

  /**
   * Takes a spool out of the home (see spoolRemoveProblem for when not). Its keys are revoked (their
   * sandbox is told), so no later spool of that name takes them over; its folder is left as it is.
   */
  removeSpool(name: string, actor: string): { name: string; dir: string; keys: number } {
    const problem = this.spoolRemoveProblem(name);
    if (problem) throw new UserError(problem);
    const entry = resolveSpool(this.settings, name);
    const keys = this.listKeys(name).filter((k) => !k.revoked_at);
    for (const k of keys) this.revokeKey(k.key_id, actor);
    writeSettings(this.home.settings, withoutSpool(this.getSettings(), name));
    this.flags.forgetSpool(name); // wakes the daemon
    this.core.results.forget(name);
    const revoked = keys.length ? `; its ${keys.length === 1 ? 'key was' : `${keys.length} keys were`} revoked` : '';
    this.audit.record({ kind: 'spool_removed', actor, spool: name, message: `${actor} removed spool ${name} (${entry.dir}; the folder was left as it is${revoked})` });
    return { name, dir: entry.dir, keys: keys.length };
  }

  /** The operations whose `spools:` name this spool (read from the file as it is: a name the
   *  context does not know would fail the load, so it is parsed without one). */
  private allowlistNaming(spool: string): string[] {
    try {
      const ops = parseAllowlist(readFileSync(this.home.allowlist, 'utf8'), this.home.allowlist).operations;
      return [...ops.values()].filter((op) => op.spools?.includes(spool)).map((op) => op.name);
    } catch {
      return []; // an allowlist that does not load names nothing the daemon uses
    }
  }

  /** Probes a spool's mount now (spool/probe.ts) and keeps the verdict for `status` and the app. */
  async probeSpool(name: string): Promise<ProbeReport> {
    const entry = resolveSpool(this.settings, name);
    const pinned = this.core.results.reach(name);
    const report = await probeSpool({ name, root: path.resolve(entry.dir), paths: pinned?.paths ?? spoolPaths(path.resolve(entry.dir)), home: this.home.root }, probeOptions(this.settings));
    this.flags.setProbe(name, report);
    return report;
  }

  status(): StatusReport {
    const counts = this.requests.countByState() as Record<RequestState, number>;
    const running = isLocked(this.home.lock);
    const holder = running ? readHolder(this.home.lockInfo) : null;
    // What the running daemon serves, as it says; else the file as a start would load it.
    const said = holder ? this.flags.allowlist(holder.pid) : null;
    let allowlist: StatusReport['allowlist'];
    let ops = new Map<string, Pick<Operation, 'name' | 'spools'> & { reconcilable: boolean }>();
    if (said) {
      ops = new Map(said.operations.map((op) => [op.name, op]));
      allowlist = { ok: said.ok, operations: [...ops.keys()], error: said.error, disabled: said.disabled, serving: said.serving, since: said.since };
    } else {
      try {
        const loaded = parseAllowlist(readFileSync(this.home.allowlist, 'utf8'), this.home.allowlist, this.allowlistContext);
        ops = new Map([...loaded.operations.values()].map((op) => [op.name, { ...op, reconcilable: op.reconcile !== null }]));
        allowlist = { ok: true, operations: [...ops.keys()], error: null, disabled: disabledOf(loaded), serving: null, since: null };
      } catch (e) {
        allowlist = { ok: false, operations: [], error: (e as Error).message, disabled: [], serving: null, since: null };
      }
    }
    const shown = this.spool ?? this.settings.spools[0] ?? null;
    const pinned = shown ? this.core.results.reach(shown.name) : null;
    const heartbeat = shown ? readHeartbeat((pinned?.paths ?? spoolPaths(shown.dir)).hostJson) : { heartbeat_at: null, problem: null };
    const keys = this.keys.list();
    const spools = this.listSpools(running, ops);
    const problems = spools.filter((s) => s.problem).map((s) => (spools.length === 1 ? s.problem! : `spool ${s.name}: ${s.problem}`));
    // Measured here, not read from the ledger: a full disk is what keeps the daemon from writing it there.
    const room = reserveProblem(this.home.root);
    if (room) problems.unshift(room);
    return {
      home: this.home.root,
      spool: this.spool?.dir ?? null,
      spools,
      daemon: { running, holder, heartbeat_at: heartbeat.heartbeat_at, heartbeat_problem: heartbeat.problem },
      spool_problem: problems.length ? problems.join('\n') : null,
      allowlist,
      requests: counts,
      running: this.requests.inState('running').map(({ id, op, key_id, spool, started_at, pid, orphaned }) => ({ id, op, key_id, spool, started_at, pid, orphaned: orphaned === 1 })),
      uncertain: this.requests.inState('uncertain').map((r) => ({
        id: r.id,
        op: r.op,
        key_id: r.key_id,
        spool: r.spool,
        started_at: r.started_at,
        error_message: r.error_message,
        reconcile: reconcileOf(r),
        reconcilable: ops.get(r.op)?.reconcilable ?? false,
      })),
      keys: { active: keys.filter((k) => !k.revoked_at).length, revoked: keys.filter((k) => k.revoked_at).length },
      paused: this.flags.paused,
      approvals: this.pendingApprovals(),
      grants: this.grants.list(),
      spend: spendReport(
        this.requests,
        this.settings.ceilings,
        keys.filter((k) => !k.revoked_at).map((k) => k.key_id),
      ),
    };
  }
}
