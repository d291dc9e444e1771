// The host daemon's shell: starts and stops the parts (a SpoolServer per spool scans, claims and writes
// results; intake records requests, the runner runs them; lifecycle.ts says how a request moves), and
// wakes the parts on timers and on changes made elsewhere. File events are only hints; a rescan finds
// whatever they miss: every rescan_interval_ms where events do not come (or are not wanted), 30 times
// less often (at most once a minute) while they all do.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { homePaths, type HomePaths } from '../home';
import type { Requests } from '../ledger/requests';
import { UserError } from '../errors';
import type { Db } from '../ledger/db';
import type { AuditLog } from '../ledger/audit';
import { LedgerRoom, writeFailureCode } from '../ledger/room';
import type { SecretSealer } from '../keys/keyStore';
import { HostCore } from '../hostCore';
import type { HostFlags } from '../ledger/meta';
import type { Decisions } from '../decisions';
import { readSettings, type Settings } from '../settings';
import { selectSpools } from '../spool/registry';
import { configureLogging, scopedLogger } from '../log';
import { APP_VERSION } from '../version';
import { AllowlistSource } from './allowlistSource';
import { acquireHomeLock, type HomeLock } from './lock';
import { Runner } from './runner';
import { runnerDeps } from './runnerDeps';
import { Keeper, type Kept, type RunStarter } from '../exec/keeper';
import { spawning } from '../exec/nativeSpawn';
import type { SpoolServer } from '../spool/server';
import { ServedSpools, noSpoolToServe, sharedParts } from './servedSpools';
import { RetentionSchedule } from './retentionSchedule';
import { SettingsReload } from './settingsReload';
import { watchFiles, type HomeWatch } from '../wake';

const log = scopedLogger('daemon');
const HEARTBEAT_MS = 5000;
/** While every watch works (each spool's queue/ and results/, the home), the rescan only catches an
 *  event the system lost: every this many ticks, and at most this long apart (an overflow asks for one
 *  at once; a watch's error brings the rescan back to every tick). */
const EVENTS_RESCAN_TICKS = 30;
const EVENTS_RESCAN_MAX_MS = 60_000;

export interface DaemonOptions {
  homeDir: string;
  /** Serve only this spool (a name or a folder of the home's spools: --spool / $DUMBWAITER_SPOOL); else all. */
  spool?: string;
  /** How it was started, for the lock's "who holds it". */
  command?: string;
  consoleLog?: 'info' | 'warn' | false;
  /** Opens key secrets sealed by an OS keychain (the desktop app's safeStorage). */
  sealer?: SecretSealer | null;
  /** The home's core, shared with the other faces of this process (the app's service); else the
   *  daemon opens one of its own, closed when it stops. */
  core?: HostCore;
  /** How runs start: by default in the home's run keeper, a process of plain Node (exec/keeper.ts);
   *  the desktop app, whose binary cannot run a script as plain Node, gives its own. */
  starter?: RunStarter;
}

export class Daemon {
  private timers: NodeJS.Timeout[] = [];
  /** The home folder's watch for <home>/wake (changes the command line or the app made: wake.ts), the
   *  settings and the allowlist; each spool's queue/ has its own (queueWatch). */
  private wakeWatch: HomeWatch | null = null;
  /** False once the home's watch reported an error: its changes wait for the rescan. */
  private wakeWatchOk = false;
  private wakePending = false;
  /** When the last tick rescanned (performance.now()). */
  private rescannedAt = -Infinity;
  /** Told after each change of what the host's status shows (the desktop app's feed, in this process). */
  private readonly changeListeners = new Set<() => void>();
  private stopping = false;
  private stopped: Promise<void> | null = null;
  /** Ends the stop's grace period early (see hurry()). */
  private endGrace: (() => void) | null = null;
  private paused = false;
  private ledgerVersion = -1;
  private tickTimer: NodeJS.Timeout | null = null;
  private readonly settingsFile: SettingsReload;
  private readonly retention: RetentionSchedule;
  readonly allowlist: AllowlistSource;
  /** Whether the home has room for the ledger: without it no spool takes new requests (ledger/room.ts). */
  private readonly room: LedgerRoom;
  private readonly db: Db;
  private readonly flags: HostFlags;
  private readonly requests: Requests;
  private readonly audit: AuditLog;
  private readonly decisions: Decisions;
  private readonly runner: Runner;
  /** Ends the core's telling this daemon of changes. */
  private readonly detach: () => void;
  private readonly served: ServedSpools;

  private constructor(
    readonly home: HomePaths,
    public settings: Settings,
    spools: Settings['spools'],
    /** --spool: the one spool served, whatever the home's list says later; else every spool, as it changes. */
    onlySpool: string | undefined,
    private readonly core: HostCore,
    /** Whether the core is this daemon's own (closed when it stops). */
    private readonly ownsCore: boolean,
    private readonly lock: HomeLock,
    private readonly starter: RunStarter,
  ) {
    ({ db: this.db, flags: this.flags, requests: this.requests, audit: this.audit, decisions: this.decisions } = core);
    const audit = this.audit;
    this.room = new LedgerRoom(home.root, { lost: (why) => this.roomLost(why), back: (was) => this.roomBack(was) }, () => audit.writeHeld());
    audit.onWriteFailure = (e) => this.room.failed(e, 'audit log');
    this.settingsFile = new SettingsReload(home.settings, audit, (next) => this.applySettings(next), (name, fn) => this.safely(name, fn));
    this.allowlist = new AllowlistSource(
      home.allowlist,
      home.lastGoodAllowlist,
      () => ({ spools: this.settings.spools, home: home.root }),
      audit,
      scopedLogger('allowlist'),
      (a) => {
        this.spools.forEach((s) => s.publishCatalog(a));
        this.changed();
      },
      (status) => this.safely('allowlist status', () => this.flags.setAllowlist(status)),
    );
    // Changes made by the other faces of this process (the app's service) come straight here.
    this.detach = core.attach({
      wake: () => this.wake(),
      changed: () => this.changed(),
      cancelRequested: () => this.runner.cancelRequested(),
      safely: (name, fn) => this.safely(name, fn),
      allowlist: () => this.allowlist.get(),
    });
    const safely = (name: string, fn: () => void) => this.safely(name, fn);
    const { db, requests } = core;
    this.runner = new Runner(
      runnerDeps(core, {
        spools: () => [...this.spools.values()].filter((s) => s.ok).map((s) => s.name),
        spoolDirs: (spool) => {
          const s = this.spools.get(spool);
          return s?.ok ? s : null; // its `io` and `plain`
        },
        allowlist: () => this.allowlist.get(),
        settings: () => this.settings,
        starter,
        safely,
      }),
    );
    const shared = sharedParts(core, {
      allowlist: () => this.allowlist.get(),
      settings: () => this.settings,
      paused: () => this.paused,
      stopping: () => this.stopping,
      reloadSettings: () => this.reloadSettings(),
      pump: () => this.runner.pump(),
      runs: this.runner,
      room: this.room,
      safely,
    });
    this.served = new ServedSpools({ home, settings: () => this.settings, onlySpool, shared, safely }, spools);
    this.retention = new RetentionSchedule({ db, requests, audit, spools: () => this.spools.values(), settings: () => this.settings, stopping: () => this.stopping, safely });
  }

  /** The spools served, by name. */
  get spools(): Map<string, SpoolServer> {
    return this.served.servers;
  }

  static async start(opts: DaemonOptions): Promise<Daemon> {
    const home = homePaths(opts.homeDir);
    if (!existsSync(home.settings)) {
      throw new UserError(`${home.root} is not a Dumbwaiter home yet. Run: dumbwaiter init --home '${home.root}'`);
    }
    const settings = readSettings(home.settings);
    const spools = selectSpools(settings, opts.spool);
    if (spools.length === 0) throw new UserError(`no spool in ${home.root}: run dumbwaiter init, or dumbwaiter spools add NAME DIR`);
    const refused = noSpoolToServe(home, settings, spools);
    if (refused !== null) throw new UserError(refused);
    const lock = acquireHomeLock(home.lock, home.lockInfo, opts.command ?? 'dumbwaiter daemon');
    let core: HostCore | null = opts.core ?? null;
    let d: Daemon | null = null;
    try {
      configureLogging(home.logs, opts.consoleLog ?? 'info');
      core ??= HostCore.open(home.root, opts.sealer ?? null);
      d = new Daemon(home, settings, spools, opts.spool, core, !opts.core, lock, opts.starter ?? new Keeper(home.keeper));
      const { kept, hadAll } = await d.starter.recover(core.flags.keeper, (instance) => core!.flags.setKeeper(instance));
      d.boot(kept, hadAll);
      d.starter.recovered();
      return d;
    } catch (e) {
      // A failed start leaves nothing held: the desktop app may try again in the same process.
      await d?.starter.stop();
      d?.spools.forEach((s) => s.close());
      d?.detach();
      if (!opts.core) core?.close();
      lock.release();
      throw e;
    }
  }

  /** `kept`: the runs the keeper held while no daemon ran; `keeperHadAll`: the keeper the last daemon
   *  sent its runs to answered (RunStarter.recover). */
  private boot(kept: Map<string, Kept>, keeperHadAll: boolean): void {
    const names = [...this.spools.values()].map((s) => `${s.name} (${s.plain.root})`).join(', ');
    log.info(`starting: home ${this.home.root}, spools ${names}, pid ${process.pid}; runs start with ${spawning().why}`);
    this.audit.record({
      kind: 'daemon_started',
      message: `daemon started (pid ${process.pid}, version ${APP_VERSION}), serving ${this.spools.size === 1 ? 'spool' : 'spools'} ${[...this.spools.keys()].join(', ')}`,
      details: { spools: Object.fromEntries([...this.spools.values()].map((s) => [s.name, s.plain.root])) },
    });
    this.settingsFile.readNow();
    this.paused = this.flags.paused;
    if (this.paused) log.warn('the host is paused: requests are claimed and recorded, nothing starts (dumbwaiter resume)');
    this.allowlist.loadInitial();
    // Pins each spool's folders and writes what belongs there, or says why it cannot be touched now.
    for (const s of this.spools.values()) s.usable();
    // Connected once (and the keeper started if none runs), before the first run: a run's start costs
    // no process start.
    this.starter.launch();
    // Before the first start of a run: a kept run or an orphan holds its slot (and so does the search
    // for what an ended one left, which goes on while the spools are served).
    this.runner.recoverInterrupted(kept, keeperHadAll);

    // settings.json too: edited by hand, it applies at once (a wake reloads it); and allowlist.yaml,
    // through its folder: a watch of the file itself stayed on the file an atomic replace took away,
    // and missed the edits in place that came next (found only by the rescan, up to a minute later).
    const allowlistName = path.basename(this.home.allowlist);
    const watched = [path.basename(this.home.wake), path.basename(this.home.settings), allowlistName];
    const changed = (name: string | null) => {
      if (name !== allowlistName) this.wake();
      if (name === null || name === allowlistName) this.safely('allowlist', () => this.allowlist.poll());
    };
    this.wakeWatch = watchFiles(this.home.root, watched, changed, (e) => {
      this.wakeWatchOk = false;
      log.warn(`watching ${this.home.root} for changes made elsewhere: ${String(e)} (they are picked up at each rescan instead)`);
    });
    this.wakeWatchOk = this.wakeWatch !== null;
    this.tickTimer = setInterval(() => this.tick(), this.settings.rescan_interval_ms);
    this.timers.push(setInterval(() => this.heartbeat(), HEARTBEAT_MS));
    for (const s of this.spools.values()) s.start();
    this.retention.start();
    // Reconcile checks run commands: once the first scan has begun, as retention's walk.
    setImmediate(() => !this.stopping && this.runner.startReconciling());
    // Each mount's probe waits for one file event: after the start, one spool at a time.
    setImmediate(() => void this.probeAll());
  }

  private async probeAll(): Promise<void> {
    for (const s of this.spools.values()) {
      if (this.stopping) return;
      try {
        await s.runProbe();
      } catch (e) {
        log.error(`probe of spool ${s.name}: ${(e as Error).stack ?? String(e)}`);
      }
    }
  }

  private safely(name: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      if (writeFailureCode(e)) {
        // A full or failing disk: inside a commit, the commit fails as a whole (what it took is taken
        // again once there is room); outside, the host stops taking requests until there is room.
        if (this.db.inTransaction) throw e;
        this.room.failed(e, 'ledger');
        log.error(`while handling ${JSON.stringify(name)}: ${(e as Error).message}`);
        return;
      }
      // One bad file never blocks the queue: say what happened and go on with the next.
      log.error(`while handling ${JSON.stringify(name)}: ${(e as Error).stack ?? String(e)}`);
      this.audit.record({ kind: 'internal_error', message: `while handling ${JSON.stringify(name)}: ${(e as Error).message}` });
    }
  }

  /** No room for the ledger: every spool leaves its new requests in queue/ (said in host.json, status). */
  private roomLost(why: string): void {
    log.error(`${why} (nothing else stops: runs go on, and results are written)`);
    this.audit.record({ kind: 'disk_full', message: `the host takes no new requests: ${why}` });
    this.heartbeat();
    this.changed();
  }

  private roomBack(was: string): void {
    log.info('the home has room again: taking requests');
    this.audit.record({ kind: 'disk_ok', message: `the host takes requests again; it had stopped: ${was}` });
    this.heartbeat();
    this.changed();
    this.requestScan();
  }

  /** Registers `fn` to be told after each change of what the host's status shows: a request's move,
   *  a pause, the allowlist or a spool's state, and other processes' changes (their wake). */
  onChange(fn: () => void): () => void {
    this.changeListeners.add(fn);
    return () => this.changeListeners.delete(fn);
  }

  private changed(): void {
    for (const fn of this.changeListeners) this.safely('change listener', fn);
  }

  /** <home>/wake changed: another process committed something. Several wakes in a row are one pass. */
  private wake(): void {
    if (this.wakePending || this.stopping) return;
    this.wakePending = true;
    setImmediate(() => {
      this.wakePending = false;
      if (this.stopping) return;
      this.safely('wake', () => {
        this.reloadSettings();
        this.ledgerVersion = this.ledgerVersionNow();
        this.ledgerChanged();
      });
    });
  }

  /** Approval timeouts at every tick (one query); the rescan, and the checks for what events bring,
   *  every tick while some watch does not work, else every EVENTS_RESCAN_TICKS ticks. */
  private tick(): void {
    if (this.stopping) return;
    const now = performance.now();
    const every = Math.min(EVENTS_RESCAN_TICKS * this.settings.rescan_interval_ms, EVENTS_RESCAN_MAX_MS);
    const rescan = !this.eventsWork() || now - this.rescannedAt >= every - this.settings.rescan_interval_ms / 2;
    this.safely('tick', () => {
      // Room measured again (when it is back, roomBack() says so and scans), and ends it kept out, recorded.
      if (this.room.check()) this.runner.recordLeftEnds();
      if (rescan) {
        this.checkLedger();
        this.reloadSettings();
        this.allowlist.poll();
      }
      this.decisions.timeOut(this.settings.approval_timeout_s);
      if (rescan) for (const s of this.spools.values()) s.repairResults(); // results held back by a full disk or a blocked file are retried
    });
    if (!rescan) return;
    this.rescannedAt = now;
    this.requestScan();
  }

  /** Whether file events bring every change: the home's (the wake, the settings) and each spool's. */
  private eventsWork(): boolean {
    return this.wakeWatchOk && [...this.spools.values()].every((s) => s.eventsWork);
  }

  /**
   * The fallback for a wake that never came (a file system without events, a home where the wake
   * cannot be written): once a tick, whether another connection committed since the last look.
   * PRAGMA data_version changes only for other connections' commits: one query when nothing changed.
   */
  private checkLedger(): void {
    const v = this.ledgerVersionNow();
    if (v === this.ledgerVersion) return;
    this.ledgerVersion = v;
    this.ledgerChanged();
  }

  private ledgerVersionNow(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }

  /** Another process (the command line, the app) committed to the ledger: pick up what it decided. */
  private ledgerChanged(): void {
    this.runner.cancelRequested();
    const paused = this.flags.paused;
    if (paused !== this.paused) {
      this.paused = paused;
      log.info(paused ? 'paused: nothing new starts' : 'resumed');
      this.heartbeat();
    }
    for (const s of this.spools.values()) s.repairResults(); // results of what they changed, if they could not write them
    this.runner.pump();
    this.changed();
  }

  private reloadSettings(): void {
    this.settingsFile.reload();
  }

  /** A new version of settings.json that read whole. */
  private applySettings(next: Settings): void {
    if (next.file_events !== this.settings.file_events) log.warn('file_events takes effect at the next start of the daemon');
    const intervalChanged = next.rescan_interval_ms !== this.settings.rescan_interval_ms;
    this.settings = next;
    if (this.served.sync()) this.allowlist.poll(); // its rules depend on where the spools are
    if (intervalChanged && this.tickTimer) {
      clearInterval(this.tickTimer);
      this.tickTimer = setInterval(() => this.tick(), next.rescan_interval_ms);
    }
    log.info('settings reloaded');
    this.runner.pump(); // a higher limit may free slots
  }

  requestScan(): void {
    for (const s of this.spools.values()) s.requestScan();
  }

  private heartbeat(): void {
    for (const s of this.spools.values()) s.heartbeat();
  }

  /** Clean stop: no new work. Running work (`runs`, by default the runs_on_stop setting) is stopped:
   *  it gets the grace period, then is terminated (and left uncertain); or left running, for the next
   *  start to pick up. A second call gets the first one's stop. */
  stop(o: { runs?: Settings['runs_on_stop'] } = {}): Promise<void> {
    this.stopped ??= this.shutdown(o.runs ?? this.settings.runs_on_stop);
    return this.stopped;
  }

  /** During a stop, e.g. on a second Ctrl-C: running work is terminated now instead of at the end of
   *  the grace period, and recorded the same way. Work the stop leaves running stays so. */
  hurry(): void {
    this.endGrace?.();
  }

  private async shutdown(runs: Settings['runs_on_stop']): Promise<void> {
    this.stopping = true;
    for (const t of [...this.timers, this.tickTimer]) if (t) clearInterval(t);
    this.wakeWatch?.close();
    this.allowlist.close();
    this.settingsFile.stop();
    this.retention.stop();
    await Promise.all([...this.spools.values()].map((s) => s.stop()));
    const left = await this.runner.stop(this.settings.shutdown_grace_s * 1000, new Promise<void>((r) => (this.endGrace = r)), runs);
    await this.starter.stop();
    this.heartbeat();
    const message = left ? `daemon stopped cleanly, leaving ${left} run${left === 1 ? '' : 's'} running (recorded when the host starts again)` : 'daemon stopped cleanly';
    this.audit.record({ kind: 'daemon_stopped', message, ...(left ? { details: { left_running: left } } : {}) });
    log.info(left ? `stopped, leaving ${left} run(s) running` : 'stopped');
    this.spools.forEach((s) => s.close());
    this.detach();
    if (this.ownsCore) this.core.close();
    else this.requests.flushSynced();
    this.lock.release();
  }
}
