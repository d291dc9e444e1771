// The host daemon's shell: starts and stops the parts (the scanner claims requests, intake records them,
// the runner runs them; lifecycle.ts says how a request moves), keeps the spool checked, and wakes the
// parts on timers and on changes made elsewhere. File events are only hints; a rescan on an interval
// finds whatever they miss.
import { stampOf } from '../fs/stamp';
import path from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import { existsSync } from 'node:fs';
import { homePaths, type HomePaths } from '../home';
import { Requests } from '../ledger/requests';
import { Lifecycle } from '../lifecycle';
import { UserError } from '../errors';
import { openLedger, type Db } from '../ledger/db';
import { AuditLog } from '../ledger/audit';
import { KeyStore, type SecretSealer } from '../keys/keyStore';
import { checkPrivateDir, checkSpool, type SpoolPaths } from '../spool/layout';
import { PinnedSpool } from '../spool/pinned';
import { SpoolHealth } from '../spool/health';
import { ResultWriter, WrittenResults } from '../spool/results';
import { ResultRepair } from '../spool/resultRepair';
import { catalogOf, writeCatalog, writeHostStatus } from '../spool/hostFiles';
import type { Allowlist } from '../allowlist/types';
import { Grants } from '../ledger/grants';
import { HostFlags } from '../ledger/meta';
import { Decisions } from '../decisions';
import { reap, reapedAnything } from '../retention';
import { placeAgentGuide, placeSandboxClients } from '../sandboxClients';
import { readSettings, type Settings } from '../settings';
import { configureLogging, scopedLogger } from '../log';
import { APP_VERSION } from '../version';
import { AllowlistSource } from './allowlistSource';
import { acquireHomeLock, type HomeLock } from './lock';
import { QueueWatch } from './queueWatch';
import { ResultsWatch } from './resultsWatch';
import { Refusals } from './refusals';
import { Runner } from './runner';
import { Scanner } from './scanner';
import type { IntakeDeps } from './intake';

const log = scopedLogger('daemon');
const HEARTBEAT_MS = 5000;
/** How often the ledger is checked for changes made by the command line or the app (approve, cancel, pause...). */
const LEDGER_POLL_MS = 200;
const REAP_INTERVAL_MS = 10 * 60_000;

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

export class Daemon {
  private timers: NodeJS.Timeout[] = [];
  /** The allowlist file's watcher; queue/ has its own (queueWatch), null without file events. */
  private watcher: FSWatcher | null = null;
  private readonly queueWatch: QueueWatch | null;
  /** Looks at result files and writes again those that are not what the host wrote. */
  private readonly resultsWatch: ResultsWatch;
  private readonly refusals: Refusals;
  private stopping = false;
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
  private readonly grants: Grants;
  private readonly lifecycle: Lifecycle;
  private readonly decisions: Decisions;
  private readonly runner: Runner;
  private readonly scanner: Scanner;
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
    this.lifecycle = new Lifecycle(db, requests, audit, (row) => results.publish(row));
    this.decisions = new Decisions(requests, this.lifecycle, audit, this.grants);
    const safely = (name: string, fn: () => void) => this.safely(name, fn);
    this.runner = new Runner({
      db,
      io: this.io,
      requests,
      audit,
      keys,
      grants: this.grants,
      flags,
      lifecycle: this.lifecycle,
      allowlist: () => this.allowlist.get(),
      settings: () => this.settings,
      log: scopedLogger('runner'),
      safely,
    });
    const intake: IntakeDeps = {
      db,
      paths: this.io,
      keys,
      requests,
      audit,
      lifecycle: this.lifecycle,
      results,
      grants: this.grants,
      decisions: this.decisions,
      log: scopedLogger('intake'),
      allowlist: () => this.allowlist.get(),
      settings: () => this.settings,
      maxRequestAgeMs: () => this.settings.max_request_age_s * 1000,
      refused: (r) => this.refusals.add(r),
    };
    this.scanner = new Scanner({
      io: this.io,
      claimedMine: () => pinned.claimedMine,
      queueWatch: this.queueWatch,
      refusals: this.refusals,
      intake,
      requests,
      audit,
      results,
      log: scopedLogger('scan'),
      spoolUsable: () => this.spoolUsable(),
      beforePass: () => this.reloadSettings(),
      pump: () => this.runner.pump(),
      safely,
    });
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
    // Before the first start of a run: an orphan holds its slot.
    await this.runner.recoverInterrupted();

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
    // Reconcile checks run commands: once the first scan has begun, as retention's walk.
    setImmediate(() => !this.stopping && this.runner.startReconciling());
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
      this.decisions.timeOut(this.settings.approval_timeout_s);
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
    this.runner.cancelRequested();
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
    this.runner.pump();
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
    this.runner.pump(); // a higher limit may free slots
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
    this.scanner.request();
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

  private heartbeat(): void {
    if (!this.pinned.pinned) return; // the ledger's spool problem says why
    try {
      writeHostStatus(this.io.hostJson, {
        host_id: this.settings.host_id,
        app_version: APP_VERSION,
        paused: this.paused,
        queue_depth: this.requests.countInState('queued') + this.scanner.unclaimed,
        running: this.runner.size,
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
    await this.scanner.stop();
    await this.runner.stop(this.settings.shutdown_grace_s * 1000, new Promise<void>((r) => (this.endGrace = r)));
    this.heartbeat();
    this.audit.record({ kind: 'daemon_stopped', message: 'daemon stopped cleanly' });
    log.info('stopped');
    this.db.close();
    this.pinned.close();
    this.lock.release();
  }
}

