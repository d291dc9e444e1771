// The host daemon: claims requests from the spool, records them, runs them and publishes results.
// File events are only hints; a rescan on an interval finds whatever they miss.
import { existsSync } from 'node:fs';
import { stampOf } from '../fs/stamp';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import chokidar, { type FSWatcher } from 'chokidar';
import { homePaths, type HomePaths } from '../home';
import { UserError } from '../errors';
import { openLedger, type Db } from '../ledger/db';
import { AuditLog } from '../ledger/audit';
import { Requests, type RequestRow } from '../ledger/requests';
import { KeyStore, type SecretSealer } from '../keys/keyStore';
import { checkPrivateDir, checkSpool, type SpoolPaths } from '../spool/layout';
import { PinnedSpool } from '../spool/pinned';
import { SpoolHealth } from '../spool/health';
import { faultPoint } from '../faults';
import { requestIdFromFileName } from '../../../shared/protocol/ids';
import { claim, entryPath, firstEntries, quarantine, readyEntries, type Entry } from '../spool/claim';
import { ResultWriter, WrittenResults, logPath, unboundRejection } from '../spool/results';
import { ResultRepair } from '../spool/resultRepair';
import { catalogOf, writeCatalog, writeHostStatus } from '../spool/hostFiles';
import type { RunPlan } from '../allowlist/plan';
import type { Allowlist } from '../allowlist/types';
import { gate } from '../policy/gate';
import { Grants } from '../ledger/grants';
import { HostFlags } from '../ledger/meta';
import { Decisions } from '../decisions';
import { reap, reapedAnything } from '../retention';
import { placeAgentGuide, placeSandboxClients } from '../sandboxClients';
import { startRun, type RunHandle, type RunOutcome } from '../exec/executor';
import { DEFAULT_CWD } from '../allowlist/defaultCwd';
import { groupAlive } from '../exec/processGroup';
import { readSettings, type Settings } from '../settings';
import { configureLogging, scopedLogger } from '../log';
import { APP_VERSION } from '../version';
import { AllowlistSource } from './allowlistSource';
import { acquireHomeLock, type HomeLock } from './lock';
import { clockProblem, intakeClaimed, type IntakeDeps } from './intake';
import { QueueWatch } from './queueWatch';
import { ResultsWatch } from './resultsWatch';
import { Refusals } from './refusals';

const log = scopedLogger('daemon');
const HEARTBEAT_MS = 5000;
/** How often the ledger is checked for changes made by the command line or the app (approve, cancel, pause...). */
const LEDGER_POLL_MS = 200;
const REAP_INTERVAL_MS = 10 * 60_000;
/** Queue entries listed per pass, the first by name: memory stays bounded whatever queue/ holds. */
const LISTING_MAX = 4096;
/** A step of a scan takes at most this many entries, or stops after STEP_MS; between steps the loop
 *  lets file events, runs' output and timers through, and starts what may start. */
const STEP_MAX = 256;
const STEP_MS = 20;
/** From this many entries in one listing (a flood), requests that file events named go first. */
const BACKLOG = 1024;

export interface DaemonOptions {
  homeDir: string;
  /** Overrides the home's setting (--spool / $DUMBWAITER_SPOOL). */
  spoolDir?: string;
  /** How it was started, for the lock's "who holds it". */
  command?: string;
  consoleLog?: 'info' | 'warn' | false;
  /** Opens key secrets sealed by an OS keychain (the desktop app's safeStorage). */
  sealer?: SecretSealer | null;
}

interface Running {
  op: string;
  handle: RunHandle;
}

export class Daemon {
  private readonly running = new Map<string, Running>();
  private timers: NodeJS.Timeout[] = [];
  /** The allowlist file's watcher; queue/ has its own (queueWatch), null without file events. */
  private watcher: FSWatcher | null = null;
  private readonly queueWatch: QueueWatch | null;
  /** Looks at result files and writes again those that are not what the host wrote. */
  private readonly resultsWatch: ResultsWatch;
  private readonly refusals: Refusals;
  private scanning = false;
  private rescanWanted = false;
  private stopping = false;
  private unclaimed = 0;
  /** The last scan's unexpected failure, said once until a scan succeeds. */
  private scanError: string | null = null;
  /** The last heartbeat's failure, said once until one succeeds. */
  private heartbeatError: string | null = null;
  private stopped: Promise<void> | null = null;
  /** Ends the stop's grace period early (see hurry()). */
  private endGrace: (() => void) | null = null;
  private paused = false;
  private ledgerVersion = -1;
  private settingsStamp = '';
  private tickTimer: NodeJS.Timeout | null = null;
  readonly allowlist: AllowlistSource;
  private readonly intake: IntakeDeps;
  private readonly grants: Grants;
  private readonly decisions: Decisions;
  /** The spool's folders pinned (see spool/pinned.ts): every file operation goes through these. */
  private readonly io: SpoolPaths;

  private constructor(
    readonly home: HomePaths,
    /** The spool's plain paths: for messages, the watcher and the safety check. */
    readonly spool: SpoolPaths,
    private readonly pinned: PinnedSpool,
    public settings: Settings,
    private readonly db: Db,
    private readonly flags: HostFlags,
    private readonly lock: HomeLock,
    private readonly requests: Requests,
    private readonly audit: AuditLog,
    private readonly keys: KeyStore,
    private readonly results: ResultWriter,
    private readonly health: SpoolHealth,
    written: WrittenResults,
  ) {
    this.io = pinned.paths;
    this.queueWatch = settings.file_events ? new QueueWatch(() => this.requestScan(), log) : null;
    const repair = new ResultRepair(this.io, requests, results, written, (k) => keys.signer(k), audit, () => this.settings.retention_spool_days, scopedLogger('results'));
    this.resultsWatch = new ResultsWatch(repair, written, requests, () => this.settings.retention_spool_days, () => this.spoolOk, settings.file_events, log);
    this.refusals = new Refusals(audit, results, scopedLogger('intake'));
    this.allowlist = new AllowlistSource(home.allowlist, home.lastGoodAllowlist, { spool: spool.root, home: home.root }, audit, scopedLogger('allowlist'), (a) =>
      this.publishCatalog(a),
    );
    this.grants = new Grants(db);
    this.decisions = new Decisions(requests, audit, this.grants);
    this.intake = {
      db,
      paths: this.io,
      keys: this.keys,
      requests,
      audit,
      results,
      grants: this.grants,
      decisions: this.decisions,
      log: scopedLogger('intake'),
      allowlist: () => this.allowlist.get(),
      settings: () => this.settings,
      maxRequestAgeMs: () => this.settings.max_request_age_s * 1000,
      refused: (r) => this.refusals.add(r),
    };
  }

  static async start(opts: DaemonOptions): Promise<Daemon> {
    const home = homePaths(opts.homeDir);
    if (!existsSync(home.settings)) {
      throw new UserError(`${home.root} is not a Dumbwaiter home yet. Run: dumbwaiter init --home '${home.root}'`);
    }
    const settings = readSettings(home.settings);
    const spoolDir = opts.spoolDir ?? settings.spool;
    if (!spoolDir) throw new UserError('no spool folder: pass --spool DIR, set DUMBWAITER_SPOOL, or run dumbwaiter init --spool DIR');
    // Only the folder a human chose is checked here: what is inside it, the sandbox can break at any
    // time, and the daemon then starts anyway and waits for it to be fixed (see spoolUsable()).
    const spool = checkSpool(path.resolve(spoolDir), { rootOnly: true });
    const lock = acquireHomeLock(home.lock, home.lockInfo, opts.command ?? 'dumbwaiter daemon');
    let db: Db | null = null;
    let pinned: PinnedSpool | null = null;
    try {
      configureLogging(home.logs, opts.consoleLog ?? 'info');
      db = openLedger(home.ledger);
      pinned = new PinnedSpool(spool, { hostId: settings.host_id, later: true });
      const requests = new Requests(db);
      const audit = new AuditLog(db);
      const flags = new HostFlags(db);
      const health = new SpoolHealth(audit, scopedLogger('spool'), flags);
      const keys = new KeyStore(db, opts.sealer ?? null);
      const written = new WrittenResults();
      const results = new ResultWriter(pinned.paths, requests, (k) => keys.signer(k), health, written);
      const d = new Daemon(home, spool, pinned, settings, db, flags, lock, requests, audit, keys, results, health, written);
      await d.boot();
      return d;
    } catch (e) {
      // A failed start leaves nothing held: the desktop app may try again in the same process.
      pinned?.close();
      db?.close();
      lock.release();
      throw e;
    }
  }

  private async boot(): Promise<void> {
    log.info(`starting: home ${this.home.root}, spool ${this.spool.root}, pid ${process.pid}`);
    this.audit.record({ kind: 'daemon_started', message: `daemon started (pid ${process.pid}, version ${APP_VERSION})`, details: { spool: this.spool.root } });
    this.settingsStamp = stampOf(this.home.settings);
    this.paused = this.flags.paused;
    if (this.paused) log.warn('the host is paused: requests are claimed and recorded, nothing starts (dumbwaiter resume)');
    this.allowlist.loadInitial();
    // Pins the spool's folders and writes what belongs there, or says why it cannot be touched now.
    this.spoolUsable();
    this.safely('recovery', () => this.recoverInterrupted());

    this.watcher = chokidar.watch(this.home.allowlist, { ignoreInitial: true, depth: 0 });
    this.watcher.on('all', () => this.allowlist.poll());
    this.watcher.on('error', (e) => log.warn(`file watcher: ${String(e)} (the periodic rescan goes on)`));
    this.tickTimer = setInterval(() => this.tick(), this.settings.rescan_interval_ms);
    this.timers.push(setInterval(() => this.heartbeat(), HEARTBEAT_MS));
    this.resultsWatch.start();
    this.timers.push(setInterval(() => this.safely('ledger', () => this.pollLedger()), LEDGER_POLL_MS));
    this.timers.push(setInterval(() => this.safely('retention', () => this.reapNow()), REAP_INTERVAL_MS));
    // Retention walks the whole spool: after the start, so it never delays the first request.
    setImmediate(() => !this.stopping && this.safely('retention', () => this.reapNow()));
    this.requestScan();
  }

  /** Runs that were going when the host stopped: never re-run, left for a human to settle. */
  private recoverInterrupted(): void {
    for (const row of this.requests.inState('running')) {
      const alive = row.pid !== null && groupAlive(row.pid);
      const message =
        `the host stopped while this ran${row.pid ? ` (process group ${row.pid}${alive ? ', which is still running' : ''})` : ''}; ` +
        `it may or may not have taken effect and will not be re-run. Settle it with: dumbwaiter resolve ${row.id} --succeeded|--failed`;
      const next = this.requests.transition(row.id, ['running'], { state: 'uncertain', error_code: 'interrupted', error_message: message });
      if (!next) continue;
      this.audit.record({ kind: 'uncertain', request_id: row.id, key_id: row.key_id, op: row.op, message });
      log.warn(`${row.id}: uncertain: ${message}`);
      this.results.publish(next);
    }
  }

  /** Files this host claimed but had not yet recorded when it stopped. */
  private recoverClaimed(): void {
    const mine = this.pinned.claimedMine;
    for (const e of readyEntries(mine)) {
      const id = requestIdFromFileName(e.name);
      const file = entryPath(mine, e);
      if (id) this.intakeSafely(id, path.join(mine, e.name), true);
      else this.safely(e.name, () => quarantine(this.io, file, e.name));
    }
  }

  /**
   * Intake of one claimed file. An unexpected failure must not leave it in claimed/ to fail again at
   * every start: it is moved to quarantine, recorded, and answered where its id is not bound.
   */
  private intakeSafely(id: string, file: string, recovering = false): void {
    try {
      intakeClaimed(this.intake, id, file, recovering);
    } catch (e) {
      const msg = `the host could not process this request: ${(e as Error).message}`;
      log.error(`${id}: ${(e as Error).stack ?? msg}`);
      this.safely(id, () => {
        this.audit.record({ kind: 'internal_error', request_id: id, message: msg });
        quarantine(this.io, file, `${id}.json`);
        if (!this.requests.get(id)) this.results.writeUnbound(unboundRejection(id, null, 'bad_envelope', msg));
      });
    }
  }

  private safely(name: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      // One bad file never blocks the queue: say what happened and go on with the next.
      log.error(`while handling ${JSON.stringify(name)}: ${(e as Error).stack ?? String(e)}`);
      this.audit.record({ kind: 'internal_error', message: `while handling ${JSON.stringify(name)}: ${(e as Error).message}` });
    }
  }

  private tick(): void {
    if (this.stopping) return;
    this.safely('tick', () => {
      this.reloadSettings();
      this.allowlist.poll();
      for (const row of this.decisions.timeOut(this.settings.approval_timeout_s)) this.results.publish(row);
      if (this.spoolOk) this.results.repairAll(); // results held back by a full disk or a blocked file are retried
    });
    this.requestScan();
  }

  /**
   * Another process (the command line, the app) committed to the ledger: pick up what it decided.
   * PRAGMA data_version changes only for other connections' commits, so this costs one query when idle.
   */
  private pollLedger(): void {
    if (this.stopping) return;
    // Cancels are also asked for from inside the daemon (dumbwaiter.cancel), which data_version does not show.
    if (this.running.size > 0) {
      for (const row of this.requests.cancelRequested()) this.running.get(row.id)?.handle.terminate('cancel');
    }
    const v = this.db.pragma('data_version', { simple: true }) as number;
    if (v === this.ledgerVersion) return;
    this.ledgerVersion = v;
    const paused = this.flags.paused;
    if (paused !== this.paused) {
      this.paused = paused;
      log.info(paused ? 'paused: nothing new starts' : 'resumed');
      this.heartbeat();
    }
    if (this.spoolOk) this.results.repairAll(); // results of what they changed, if they could not write them
    this.pump();
  }

  private reloadSettings(): void {
    const stamp = stampOf(this.home.settings);
    if (stamp === this.settingsStamp) return;
    this.settingsStamp = stamp;
    let next: Settings;
    try {
      next = readSettings(this.home.settings);
    } catch (e) {
      const msg = `${(e as Error).message}\nkeeping the current settings`;
      log.error(msg);
      this.audit.record({ kind: 'settings_invalid', message: msg });
      return;
    }
    if (next.spool !== this.settings.spool || next.file_events !== this.settings.file_events) {
      log.warn('the spool and file_events settings take effect at the next start of the daemon');
    }
    const intervalChanged = next.rescan_interval_ms !== this.settings.rescan_interval_ms;
    this.settings = next;
    if (intervalChanged && this.tickTimer) {
      clearInterval(this.tickTimer);
      this.tickTimer = setInterval(() => this.tick(), next.rescan_interval_ms);
    }
    log.info('settings reloaded');
    this.pump(); // a higher limit may free slots
  }

  private reapNow(): void {
    if (!this.spoolUsable()) return; // never delete through a folder the sandbox swapped
    const r = reap(this.io, this.db, this.settings);
    if (!reapedAnything(r)) return;
    const what = Object.entries(r).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k.replace('_', ' ')}`).join(', ');
    log.info(`retention: removed ${what}`);
    this.audit.record({ kind: 'reaped', message: `retention removed ${what}`, details: { ...r } });
  }

  requestScan(): void {
    if (this.stopping) return;
    if (this.scanning) {
      this.rescanWanted = true;
      return;
    }
    void this.scan();
  }

  /** Pinned and not known to be broken: results, host.json and the catalog may be written. */
  private get spoolOk(): boolean {
    return this.pinned.pinned && this.health.problem === null;
  }

  /**
   * Whether the spool may be touched now: checked (safe, complete, ours to use) and pinned to what its
   * names lead to now. Any problem, whatever the sandbox did (a symlink, chmod 000, a folder deleted),
   * is said once, and the daemon waits for it to be fixed; nothing here throws.
   */
  private spoolUsable(): boolean {
    const wasOk = this.spoolOk;
    let replaced: string[];
    try {
      checkSpool(this.spool.root);
      // Checked when it is there; a missing one is made by the repin below, through the pinned claimed/
      // (made here by name, it would be made wherever a claimed/ swapped for a link meanwhile leads).
      checkPrivateDir(path.join(this.spool.claimed, this.settings.host_id));
      // A folder replaced by another real folder: safe, but our pins still lead to the old one.
      replaced = this.pinned.replaced();
      if (replaced.length || !this.pinned.pinned) {
        this.pinned.repin();
        this.queueWatch?.watch(this.io.queue); // the folder now pinned, not the one an old fd led to
        this.resultsWatch.watch(this.io.results, true);
      } else {
        if (this.queueWatch && !this.queueWatch.watching) this.queueWatch.watch(this.io.queue); // lost to an error (queue/ made unreadable, since fixed)
        if (!this.resultsWatch.watching) this.resultsWatch.watch(this.io.results, false);
      }
      if (replaced.length) {
        log.warn(`spool folders were replaced: ${replaced.join(', ')}; using the new ones`);
        this.audit.record({ kind: 'spool_replaced', message: `spool folders were replaced from outside: ${replaced.join(', ')}` });
      }
    } catch (e) {
      this.health.setProblem((e as Error).message);
      return false;
    }
    this.health.setProblem(null);
    if (!wasOk || replaced.length) this.spoolBack();
    return true;
  }

  /** The spool can be written again (or for the first time, or its folders are new): what could not
   *  be written meanwhile, or went with a replaced folder. */
  private spoolBack(): void {
    this.safely('bin/', () => placeSandboxClients(this.io));
    this.publishCatalog(this.allowlist.get());
    this.safely('results', () => {
      const repaired = this.results.repairAll();
      if (repaired) log.info(`wrote ${repaired} result files that a crash or the spool's state had held back`);
    });
    this.resultsWatch.sweepNow(); // what events said while the spool could not be touched, and what changed meanwhile
    this.heartbeat();
  }

  /** catalog.json, and the agent's guide made from it (bin/AGENTS.md, bin/SKILL.md). */
  private publishCatalog(a: Allowlist): void {
    if (!this.spoolOk) return;
    const catalog = catalogOf(a);
    this.safely('catalog.json', () => writeCatalog(this.io.catalogJson, catalog));
    this.safely('bin/AGENTS.md', () => placeAgentGuide(this.io, catalog));
  }

  private async scan(): Promise<void> {
    this.scanning = true;
    try {
      do {
        this.rescanWanted = false;
        if (!this.spoolUsable()) return;
        // Settings changed a moment ago (a new ceiling, say) apply to the very next request, not from the next tick.
        this.reloadSettings();
        this.inStep(() => this.recoverClaimed()); // anything left by a failed intake is retried, not stranded
        const { entries, more } = firstEntries(this.io.queue, LISTING_MAX);
        const backlog = entries.length >= BACKLOG;
        for (let i = 0; i < entries.length && !this.stopping; ) {
          // In a backlog, a request written now goes before the thousands listed ahead of it: the name
          // order holds among a normal queue's entries, not against a flood.
          if (backlog && i > 0) this.takeNamed();
          i = this.takeStep(entries, i);
          this.unclaimed = entries.length - i;
          this.pump();
          if (i < entries.length) await yieldToLoop(); // let events, runs' output and timers through
        }
        this.refusals.endPass();
        this.pump();
        if (more) this.rescanWanted = true;
        this.scanError = null;
      } while (this.rescanWanted && !this.stopping);
    } catch (e) {
      // The spool changed under the scan (a folder made unreadable after the check): the next check says why.
      const msg = `the scan of the spool failed: ${(e as Error).message}`;
      if (msg !== this.scanError) {
        log.error(`${(e as Error).stack ?? msg} (retried at every rescan)`);
        this.audit.record({ kind: 'internal_error', message: msg });
      }
      this.scanError = msg;
    } finally {
      this.safely('refusals', () => this.refusals.endPass()); // a failed pass's too: the next starts afresh
      this.unclaimed = 0;
      this.scanning = false;
    }
  }

  /** Takes `entries` from `from` on, for one step (STEP_MAX entries or STEP_MS); returns where it stopped. */
  private takeStep(entries: Entry[], from: number): number {
    const until = performance.now() + STEP_MS;
    let i = from;
    this.inStep(() => {
      while (i < entries.length && i - from < STEP_MAX && (i === from || performance.now() < until)) {
        const e = entries[i++]!;
        this.safely(e.name, () => this.take(e));
      }
    });
    return i;
  }

  /**
   * In a backlog: the files that events named, newest first, for one step (as takeStep). Each is taken
   * as the listing would take it: claimed, then authenticated once, at intake, and recorded or refused.
   * So looking at one is never wasted (junk is refused now, not looked at and left to the listing), a
   * request written during a flood waits for the files named after it, not for the names that sort
   * before it, and those a step does not reach keep their names for the next (see docs/SECURITY.md).
   */
  private takeNamed(): void {
    const until = performance.now() + STEP_MS;
    let n = 0;
    const more = () => n === 0 || (n < STEP_MAX && performance.now() < until);
    this.inStep(() =>
      this.queueWatch?.takeNamed(more, (e) => {
        n++;
        this.safely(e.name, () => this.take(e));
      }),
    );
  }

  /** The refusals of a step are recorded together, however the step ends. */
  private inStep(fn: () => void): void {
    try {
      fn();
    } finally {
      this.refusals.flush();
    }
  }

  private take(entry: Entry): void {
    const { name } = entry;
    const c = claim(this.io, entry, this.pinned.claimedMine);
    if (c.kind === 'gone') return;
    if (c.kind === 'claimed') faultPoint('after_claim');
    if (c.kind === 'refused') {
      const bound = c.id !== null && this.requests.get(c.id) !== null;
      const msg = `queue entry ${JSON.stringify(name)} ${c.reason}; ${c.movedTo ? `moved to quarantine/${path.basename(c.movedTo)}` : 'it vanished'}`;
      this.refusals.add({
        entry: { kind: 'rejected', request_id: c.id, message: `bad_envelope: ${msg}`, details: { code: 'bad_envelope', file: name, reason: c.reason } },
        line: msg,
        result: c.id !== null && !bound ? unboundRejection(c.id, null, 'bad_envelope', `the request file ${c.reason}`) : null,
      });
      return;
    }
    this.intakeSafely(c.id, c.file);
  }

  /** Starts queued runs while there are free slots, honouring each operation's concurrency. */
  private pump(): void {
    // The pause flag is read from the ledger, not a cache: once `dumbwaiter pause` returns, nothing new starts.
    let last: string | null = null;
    while (!this.stopping && this.running.size < this.settings.max_concurrent_runs && !this.flags.paused) {
      const row = this.requests.nextQueued(this.fullOps());
      if (!row || row.id === last) return; // nothing to start, or it could not start now: try again later
      last = row.id;
      this.safely(row.id, () => this.startRow(row));
    }
  }

  private fullOps(): string[] {
    const counts = new Map<string, number>();
    for (const r of this.running.values()) counts.set(r.op, (counts.get(r.op) ?? 0) + 1);
    const ops = this.allowlist.get().operations;
    return [...counts].filter(([op, n]) => n >= (ops.get(op)?.concurrency ?? 1)).map(([op]) => op);
  }

  private startRow(row: RequestRow): void {
    const fail = (state: 'expired' | 'rejected' | 'failed', code: NonNullable<RequestRow['error_code']>, message: string) => {
      const next = this.requests.transition(row.id, ['queued'], { state, error_code: code, error_message: message });
      if (!next) return;
      const kind = state === 'expired' ? 'expired' : code === 'spend_ceiling' ? 'ceiling_hit' : 'rejected';
      this.audit.record({ kind, request_id: row.id, key_id: row.key_id, op: row.op, message: `${code}: ${message}` });
      this.results.publish(next);
    };
    const clock = clockProblem(row.created_at, row.expires_at, Date.now(), this.settings.max_request_age_s * 1000);
    if (clock?.state === 'expired') return fail('expired', 'expired', `${clock.message}, before it could start`);
    const key = this.keys.get(row.key_id);
    if (!key || key.revoked_at) return fail('rejected', 'revoked_key', `key ${row.key_id} was revoked before this request started`);
    // The gate again, just before it runs: the allowlist, a path on disk, the spend or a grant may have changed.
    const g = gate({
      allowlist: this.allowlist.get(),
      settings: this.settings,
      db: this.db,
      grants: this.grants,
      key,
      op: row.op,
      args: JSON.parse(row.args_json) as Record<string, unknown>,
      intent: row.intent,
      approved: this.stillApproved(row) ? { plan: row.plan_json ? (JSON.parse(row.plan_json) as RunPlan) : null, ceilingOverride: row.ceiling_override === 1 } : null,
    });
    if (g.kind === 'refuse') return fail('rejected', g.code, `${g.message} (checked again before starting)`);
    if (g.kind === 'ask') {
      const next = this.requests.transition(row.id, ['queued'], { state: 'awaiting_approval', approval_json: JSON.stringify(g.approval), plan_json: JSON.stringify(g.plan), decided_by: null, decided_at: null, ceiling_override: 0 });
      if (!next) return;
      const why = g.approval.ceiling ? `it would cross ${g.approval.ceiling}` : 'what it would run changed since it was approved';
      this.audit.record({ kind: 'approval_requested', request_id: row.id, key_id: row.key_id, op: row.op, message: `back to approval before starting: ${why}` });
      this.results.publish(next);
      return;
    }
    const plan = g.plan;
    if (g.grant) this.grants.use(g.grant.id);
    if (plan.cwd !== DEFAULT_CWD && !existsSync(plan.cwd)) return fail('failed', 'spawn_failed', `the operation's working folder ${plan.cwd} does not exist`);

    const started = this.requests.start(row.id, {
      started_at: new Date().toISOString(),
      plan_json: JSON.stringify(plan),
      cost: plan.cost,
      ...(g.grant && !row.decided_by ? { decided_by: `grant ${g.grant.id}`, decided_at: new Date().toISOString() } : {}),
    });
    if (!started) return;
    faultPoint('after_mark_running');
    this.results.publish(started);
    let handle: RunHandle;
    try {
      handle = startRun(row.id, plan, logPath(this.io.results, row.id), this.settings.kill_grace_s * 1000);
    } catch (e) {
      // Recorded as running already: it must end as failed, never stay running with nothing behind it.
      const at = new Date().toISOString();
      const error = { code: 'spawn_failed' as const, message: `could not start "${plan.argv[0]}": ${(e as Error).message}` };
      this.finishRow(started, { exit_code: null, signal: null, stdout: '', stderr: '', stdout_truncated: false, stderr_truncated: false, error, terminated: null, finished_at: at, duration_ms: 0, log: null });
      return;
    }
    // One commit (one fsync) for the pid and the audit entry: a request's few commits bound the throughput.
    this.db.transaction(() => {
      if (handle.pid !== null) this.requests.setPid(row.id, handle.pid);
      this.audit.record({
        kind: 'started',
        request_id: row.id,
        key_id: row.key_id,
        op: row.op,
        message: `started ${row.op}: ${JSON.stringify(plan.argv)} in ${plan.cwd}${handle.pid !== null ? ` (pid ${handle.pid})` : ''}`,
        details: { argv: plan.argv, cwd: plan.cwd, pid: handle.pid },
      });
    })();
    faultPoint('after_spawn');
    log.info(`${row.id}: started ${row.op} (pid ${handle.pid})`);
    this.running.set(row.id, { op: row.op, handle });
    void handle.done.then((outcome) => {
      this.running.delete(row.id);
      this.safely(row.id, () => this.finishRow(row, outcome));
      this.pump();
    });
  }

  /** A human's approval stands; one by a grant only while the grant is still active. */
  private stillApproved(row: RequestRow): boolean {
    if (!row.decided_by) return false;
    const grant = /^grant (\S+)$/.exec(row.decided_by);
    return grant === null || this.grants.isActive(grant[1]!);
  }

  private finishRow(row: RequestRow, o: RunOutcome): void {
    faultPoint('after_exit_before_result');
    let state: RequestRow['state'];
    let error = o.error;
    if (o.terminated === 'cancel') {
      state = 'cancelled';
      error = null;
    } else if (o.error) state = 'failed';
    else if (o.terminated === 'shutdown') {
      state = 'uncertain';
      error = null;
    } else state = o.exit_code === 0 ? 'succeeded' : 'failed';
    const patch = {
      state,
      exit_code: o.exit_code,
      signal: o.signal,
      stdout: o.stdout,
      stderr: o.stderr,
      stdout_truncated: o.stdout_truncated ? 1 : 0,
      stderr_truncated: o.stderr_truncated ? 1 : 0,
      finished_at: o.finished_at,
      duration_ms: o.duration_ms,
      log_bytes: o.log?.bytes ?? null,
      log_sha256: o.log?.sha256 ?? null,
      error_code: state === 'uncertain' ? ('interrupted' as const) : (error?.code ?? null),
      error_message:
        state === 'uncertain'
          ? `terminated because the host was stopping; it may or may not have taken effect. Settle it with: dumbwaiter resolve ${row.id} --succeeded|--failed`
          : (error?.message ?? null),
    };
    const how = o.signal ? `signal ${o.signal}` : `exit code ${o.exit_code}`;
    // The final state and its audit entry in one commit.
    const next = this.db.transaction(() => {
      const n = this.requests.transition(row.id, ['running'], patch);
      if (n) {
        this.audit.record({
          kind: 'finished',
          request_id: row.id,
          key_id: row.key_id,
          op: row.op,
          message: `${row.op} ${state} (${how}, ${o.duration_ms} ms)${patch.error_message ? `: ${patch.error_message}` : ''}`,
          details: { state, exit_code: o.exit_code, signal: o.signal, duration_ms: o.duration_ms, ...(patch.error_code ? { code: patch.error_code } : {}) },
        });
      }
      return n;
    })();
    if (!next) return;
    log.info(`${row.id}: ${state} (${how})`);
    this.results.publish(next);
    faultPoint('after_result');
  }

  private heartbeat(): void {
    if (!this.pinned.pinned) return; // the ledger's spool problem says why
    try {
      writeHostStatus(this.io.hostJson, {
        host_id: this.settings.host_id,
        app_version: APP_VERSION,
        paused: this.paused,
        queue_depth: this.requests.countInState('queued') + this.unclaimed,
        running: this.running.size,
        up: !this.stopping,
        ...(this.health.full ? { disk_full: true } : {}),
      });
      this.health.succeeded();
      this.heartbeatError = null;
    } catch (e) {
      const msg = (e as Error).message;
      if (!this.health.failed(e, 'host.json') && msg !== this.heartbeatError) log.error(`cannot write host.json: ${msg}`);
      this.heartbeatError = msg;
    }
  }

  /** Clean stop: no new work; running work gets the grace period, then is terminated (and left uncertain). */
  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  /** During a stop, e.g. on a second Ctrl-C: running work is terminated now instead of at the end of
   *  the grace period, and recorded the same way. */
  hurry(): void {
    this.endGrace?.();
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    for (const t of [...this.timers, this.tickTimer]) if (t) clearInterval(t);
    await this.watcher?.close();
    this.queueWatch?.close();
    this.resultsWatch.close();
    while (this.scanning) await new Promise((r) => setTimeout(r, 10));
    const pending = () => Promise.all([...this.running.values()].map((r) => r.handle.done));
    if (this.running.size > 0) {
      log.info(`waiting up to ${this.settings.shutdown_grace_s} s for ${this.running.size} running request(s)`);
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([pending(), new Promise<void>((r) => ((this.endGrace = r), (grace = setTimeout(r, this.settings.shutdown_grace_s * 1000))))]);
      clearTimeout(grace);
      for (const r of this.running.values()) r.handle.terminate('shutdown');
      await pending();
      await new Promise((r) => setImmediate(r)); // let finishRow run for the last ones
    }
    this.heartbeat();
    this.audit.record({ kind: 'daemon_stopped', message: 'daemon stopped cleanly' });
    log.info('stopped');
    this.db.close();
    this.pinned.close();
    this.lock.release();
  }
}

