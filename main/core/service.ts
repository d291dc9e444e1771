// The service API: what the command line (and later the desktop app, over IPC) can ask of the host.
// Each call works whether or not a daemon runs; the daemon picks up ledger changes within a tick.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { homePaths, type HomePaths } from './home';
import { UserError } from './errors';
import { openLedger, type Db } from './ledger/db';
import { AuditLog, type AuditQuery, type AuditRow } from './ledger/audit';
import { Requests, approvalOf, reconcileOf, type RequestRow } from './ledger/requests';
import { KeyStore, keyFileOf, type KeyInfo, type KeyWithSecret, type Scope, type SecretSealer } from './keys/keyStore';
import { readSettings, writeSettings, withSetting, type Settings } from './settings';
import { Decisions, type CancelOutcome } from './decisions';
import { Lifecycle } from './lifecycle';
import { Grants, type Grant } from './ledger/grants';
import { HostFlags } from './ledger/meta';
import { spendReport, type CeilingReport } from './policy/spend';
import { writeInboxMessage } from './spool/inbox';
import { checkSpool, spoolPaths } from './spool/layout';
import { readLiveLog, type LiveLogChunk } from './spool/liveLog';
import { readCatalog, readHeartbeat } from './spool/hostFiles';
import { initHome } from './setup';
import { dryRun, dryRunReconcile, previewRun, type DryReconcileResult, type DryRunResult, type PreviewResult } from './allowlist/tryOut';
import { PinnedSpool } from './spool/pinned';
import { ResultWriter } from './spool/results';
import { parseAllowlist } from './allowlist/load';
import { isLocked, readHolder, type LockHolder } from './daemon/lock';
import { Reconciler } from './daemon/reconciler';
import { scopedLogger } from './log';
import type { Allowlist } from './allowlist/types';
import { writeJsonAtomic } from './fs/atomicWrite';
import type { ApprovalInfo, CatalogDoc, InboxMessage, KeyFile, ReconcileAttempt, RequestState } from '../../shared/protocol/types';
import { sha256Hex } from '../../shared/protocol/canonicalJson';
import { attemptEnd } from '../../shared/protocol/reconcileText';
import { writeFileAtomic } from './fs/atomicWrite';
import { checkAllowlist, type AllowlistCheck } from './allowlist/check';
import type { AllowlistContext } from './allowlist/roots';

export interface StatusReport {
  home: string;
  spool: string | null;
  /** `heartbeat_problem`: why host.json could not be read (a FIFO put there, say), when it could not. */
  daemon: { running: boolean; holder: LockHolder | null; heartbeat_at: string | null; heartbeat_problem: string | null };
  /** Why the spool is not being served: the running daemon's word (it stopped touching it), else this
   *  process's own check of the folder. Null when it is fine. */
  spool_problem: string | null;
  allowlist: { ok: boolean; operations: string[]; error: string | null };
  requests: Record<RequestState, number>;
  /** `orphaned`: it outlived a host that stopped, and the daemon watches it (a cancel ends it). */
  running: (Pick<RequestRow, 'id' | 'op' | 'key_id' | 'started_at' | 'pid'> & { orphaned: boolean })[];
  /** `reconcile`: the last check of its effect; `reconcilable`: its operation declares a reconcile command. */
  uncertain: (Pick<RequestRow, 'id' | 'op' | 'key_id' | 'started_at' | 'error_message'> & { reconcile: ReconcileAttempt | null; reconcilable: boolean })[];
  keys: { active: number; revoked: number };
  paused: boolean;
  approvals: PendingApproval[];
  grants: Grant[];
  spend: CeilingReport[];
}

export interface PendingApproval {
  id: string;
  op: string;
  key_id: string;
  waiting_since: string;
  /** The request's own expiry: for a plan, until when its steps may be used once approved. */
  expires_at: string | null;
  approval: ApprovalInfo;
}

export class HostService {
  readonly home: HomePaths;
  settings: Settings;
  readonly spoolDir: string | null;
  private readonly db: Db;
  readonly keys: KeyStore;
  readonly requests: Requests;
  readonly audit: AuditLog;
  readonly grants: Grants;
  readonly decisions: Decisions;
  readonly lifecycle: Lifecycle;
  readonly flags: HostFlags;
  private spool: PinnedSpool | null = null;
  private writer: ResultWriter | null = null;

  constructor(homeDir: string, spoolFlag?: string, sealer: SecretSealer | null = null) {
    this.home = homePaths(homeDir);
    if (!existsSync(this.home.settings)) {
      throw new UserError(`${this.home.root} is not a Dumbwaiter home yet. Run: dumbwaiter init --home '${this.home.root}'`);
    }
    this.settings = readSettings(this.home.settings);
    const spool = spoolFlag ?? this.settings.spool;
    this.spoolDir = spool ? path.resolve(spool) : null;
    this.db = openLedger(this.home.ledger);
    this.keys = new KeyStore(this.db, sealer);
    this.requests = new Requests(this.db);
    this.audit = new AuditLog(this.db);
    this.grants = new Grants(this.db);
    // Result files are written now when the spool is reachable; a running daemon also does within a tick.
    this.lifecycle = new Lifecycle(this.db, this.requests, this.audit, (row) => this.results?.publish(row));
    this.decisions = new Decisions(this.requests, this.lifecycle, this.audit, this.grants);
    this.flags = new HostFlags(this.db);
  }

  /**
   * The spool, checked and pinned, when it is there and safe: only then do we write into it. Looked at
   * again at each use, as the app's service lives long: a spool that was unsafe when it started is
   * pinned once it is fixed, and folders replaced meanwhile are pinned anew (never used through old pins).
   */
  private get pinned(): PinnedSpool | null {
    if (!this.spoolDir) return null;
    if (this.spool && this.spool.replaced().length === 0) return this.spool;
    try {
      const checked = checkSpool(this.spoolDir);
      if (this.spool) this.spool.repin();
      else this.spool = new PinnedSpool(checked);
      return this.spool;
    } catch {
      return null; // unsafe or incomplete: the daemon reports it, and publishes once it is fixed
    }
  }

  /** Where this host's spool and home are, for the allowlist's rules on roots (allowlist/roots.ts). */
  private get allowlistContext(): AllowlistContext {
    return { spool: this.spoolDir, home: this.home.root };
  }

  private get results(): ResultWriter | null {
    const pinned = this.pinned;
    if (!pinned) return null;
    this.writer ??= new ResultWriter(pinned.paths, this.requests, (k) => this.keys.signer(k)); // paths: updated in place by a repin
    return this.writer;
  }

  close(): void {
    this.db.close();
    this.spool?.close();
  }

  createKey(name: string, scope: Scope, ops: string[] | null, actor: string): KeyWithSecret {
    const key = this.keys.create(name, scope, ops);
    this.audit.record({ kind: 'key_created', actor, key_id: key.key_id, message: `key ${key.key_id} "${name}" created (${scope}${ops ? `, ops ${ops.join(',')}` : ''})` });
    return key;
  }

  /** Revokes a key; its requests that have not started are rejected and the sandbox is told. */
  revokeKey(keyId: string, actor: string): boolean {
    const changed = this.keys.revoke(keyId);
    if (changed) this.afterRevoke(keyId, actor, 'key_revoked', `key ${keyId} revoked by ${actor}`);
    return changed;
  }

  rotateKey(keyId: string, actor: string): KeyWithSecret {
    const fresh = this.keys.rotate(keyId);
    this.afterRevoke(keyId, actor, 'key_rotated', `key ${keyId} rotated by ${actor}: replaced by ${fresh.key_id} and revoked`);
    return fresh;
  }

  private afterRevoke(keyId: string, actor: string, kind: 'key_revoked' | 'key_rotated', message: string): void {
    this.audit.record({ kind, actor, key_id: keyId, message });
    const rejected = this.decisions.rejectPendingOfKey(keyId, actor);
    const pinned = this.pinned;
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

  listKeys(): (KeyInfo & { requests: number })[] {
    const counts = this.requests.countByKey();
    return this.keys.list().map((k) => ({ ...k, requests: counts.get(k.key_id) ?? 0 }));
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
    const allowlist = this.loadAllowlist();
    const reconciler = new Reconciler({
      requests: this.requests,
      audit: this.audit,
      lifecycle: this.lifecycle,
      allowlist: () => allowlist,
      killGraceMs: () => this.settings.kill_grace_s * 1000,
      log: scopedLogger('reconcile'),
    });
    return reconciler.check(id, actor);
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
  readAllowlist(): { path: string; text: string; hash: string; check: AllowlistCheck } {
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
  saveAllowlist(text: string, baseHash: string, actor: string): { saved: true; hash: string } | { saved: false; reason: 'invalid' | 'changed_outside'; check: AllowlistCheck; hash: string } {
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
    const pinned = this.pinned;
    return pinned ? readLiveLog(pinned.paths.results, id, from) : { text: '', next: from, skipped: 0 };
  }

  /** Whether `dir` (by default the spool in use) is a safe, complete spool, and if not, why. */
  checkSpoolFolder(dir = this.spoolDir): { path: string; ok: boolean; message: string } {
    if (!dir) return { path: '', ok: false, message: 'No spool folder is set: choose one.' };
    const abs = path.resolve(dir);
    try {
      checkSpool(abs);
      return { path: abs, ok: true, message: 'Private to you and complete.' };
    } catch (e) {
      if (e instanceof UserError) return { path: abs, ok: false, message: e.message };
      throw e;
    }
  }

  /**
   * The one way to move the spool: makes `dir` (absolute) the spool from the host's next start,
   * created safely with its clients in it; refused for a folder holding files the host did not write.
   */
  useSpool(dir: string, actor: string): { path: string; ok: boolean; message: string } {
    if (!path.isAbsolute(dir)) throw new UserError(`${dir} is a relative path: give the spool folder's full path`);
    const abs = path.resolve(dir);
    initHome(this.home.root, abs, abs);
    this.settings = this.getSettings();
    this.audit.record({ kind: 'settings_changed', actor, message: `${actor} moved the spool to ${abs} (used from the next start)` });
    return { ...this.checkSpoolFolder(abs), message: 'Ready. Dumbwaiter uses it from its next start: restart it, then share this folder with the sandbox.' };
  }

  /** What to paste into the sandbox (paths as the host sees them: adjust them to the sandbox's mounts). */
  pasteLines(keyFile: string): string {
    const spool = this.spoolDir ?? '/path/to/spool';
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
      'See docs/SANDBOX.md for Docker, devcontainers and MCP.',
    ].join('\n');
  }

  /** A message typed by the human, for the sandbox's inbox: one copy signed for each active key. */
  sendNotice(text: string, actor: string): InboxMessage[] {
    const pinned = this.pinned;
    if (!pinned) throw new UserError('the spool is not reachable or not safe: no message can be written');
    const to = this.keys.list().filter((k) => !k.revoked_at).map((k) => this.keys.signer(k.key_id)).filter((k) => k !== null);
    if (to.length === 0) throw new UserError('no active key whose secret this process can open: nobody could read the message');
    const msgs = to.map((k) => writeInboxMessage(pinned.paths.inbox, k, 'notice', null, text));
    this.audit.record({ kind: 'notice_sent', actor, message: `${actor} wrote to the sandbox (${to.length} key${to.length === 1 ? '' : 's'}): ${text.slice(0, 200)}` });
    return msgs;
  }

  /** catalog.json as the sandbox sees it; null when it is not a regular file of the catalog's shape. */
  catalog(): CatalogDoc | null {
    const pinned = this.pinned;
    return pinned ? readCatalog(pinned.paths.catalogJson) : null;
  }

  pendingApprovals(): PendingApproval[] {
    return this.requests.inState('awaiting_approval').map((r) => ({
      id: r.id,
      op: r.op,
      key_id: r.key_id,
      waiting_since: r.updated_at,
      expires_at: r.expires_at,
      approval: approvalOf(r)!,
    }));
  }

  /** `forSeconds`: also approve this key's calls of this operation for that long (at most a day). */
  approve(id: string, actor: string, forSeconds?: number): ReturnType<Decisions['approve']> {
    if (forSeconds !== undefined && !(forSeconds >= 1 && forSeconds <= 86400)) {
      throw new UserError('a time-boxed approval lasts from 1 second to 24 hours');
    }
    return this.decisions.approve(id, actor, forSeconds);
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
    if (changed) this.audit.record({ kind: 'grant_revoked', actor, key_id: g.key_id, op: g.op, message: `grant ${id} (${g.op} for key ${g.key_id}) revoked by ${actor}` });
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

  /** Changes one setting (validated as a whole); a running daemon picks it up within a tick. */
  setSetting(name: string, value: unknown, actor: string): Settings {
    const before = this.getSettings();
    const next = withSetting(before, name, value);
    writeSettings(this.home.settings, next);
    this.settings = next;
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
  private spoolProblem(daemonRunning: boolean): string | null {
    if (daemonRunning) return this.flags.spoolProblem;
    if (!this.spoolDir) return null;
    const c = this.checkSpoolFolder();
    return c.ok ? null : c.message;
  }

  status(): StatusReport {
    const counts = this.requests.countByState() as Record<RequestState, number>;
    let allowlist: StatusReport['allowlist'];
    let ops: Allowlist['operations'] = new Map();
    try {
      ops = parseAllowlist(readFileSync(this.home.allowlist, 'utf8'), this.home.allowlist, this.allowlistContext).operations;
      allowlist = { ok: true, operations: [...ops.keys()], error: null };
    } catch (e) {
      allowlist = { ok: false, operations: [], error: (e as Error).message };
    }
    const heartbeat = this.spoolDir ? readHeartbeat(this.pinned?.paths.hostJson ?? spoolPaths(this.spoolDir).hostJson) : { heartbeat_at: null, problem: null };
    const running = isLocked(this.home.lock);
    const keys = this.keys.list();
    return {
      home: this.home.root,
      spool: this.spoolDir,
      daemon: { running, holder: running ? readHolder(this.home.lockInfo) : null, heartbeat_at: heartbeat.heartbeat_at, heartbeat_problem: heartbeat.problem },
      spool_problem: this.spoolProblem(running),
      allowlist,
      requests: counts,
      running: this.requests.inState('running').map(({ id, op, key_id, started_at, pid, orphaned }) => ({ id, op, key_id, started_at, pid, orphaned: orphaned === 1 })),
      uncertain: this.requests.inState('uncertain').map((r) => ({
        id: r.id,
        op: r.op,
        key_id: r.key_id,
        started_at: r.started_at,
        error_message: r.error_message,
        reconcile: reconcileOf(r),
        reconcilable: Boolean(ops.get(r.op)?.reconcile),
      })),
      keys: { active: keys.filter((k) => !k.revoked_at).length, revoked: keys.filter((k) => k.revoked_at).length },
      paused: this.flags.paused,
      approvals: this.pendingApprovals(),
      grants: this.grants.list(),
      spend: spendReport(
        this.db,
        this.settings.ceilings,
        keys.filter((k) => !k.revoked_at).map((k) => k.key_id),
      ),
    };
  }
}
