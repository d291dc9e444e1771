// One spool as the daemon serves it: its folders pinned and checked, its queue scanned and claimed, its
// results written and watched, its host.json, catalog and clients. Each spool has its own, so one that
// is unsafe or unreadable waits for its fix without holding up the others; what spools share (the
// ledger, the runner, the lifecycle, the allowlist) lives in the daemon.
import path from 'node:path';
import type { HostFlags } from '../ledger/meta';
import type { LedgerRoom } from '../ledger/room';
import type { SpoolEntry } from '../settings';
import type { Allowlist } from '../allowlist/types';
import { allowlistFor } from '../allowlist/forSpool';
import { checkPrivateDir, checkSpool, spoolPaths, type SpoolPaths } from './layout';
import { CAN_PIN, PinnedSpool } from './pinned';
import { SpoolHealth } from './health';
import { WrittenResults, type ResultWriter } from './results';
import type { SpoolResults } from './spoolResults';
import { ResultRepair } from './resultRepair';
import { HorizonStore } from './resultsHorizon';
import { catalogOf, writeCatalog, writeHostStatus } from './hostFiles';
import { probeOptions, probeSpool } from './probe';
import { reapSpool, type SpoolReap } from '../retention';
import { placeAgentGuide, placeSandboxClients } from '../sandboxClients';
import { scopedLogger, type Logger } from '../log';
import { APP_VERSION } from '../version';
import { servingProblem, type ProbeReport } from '../../../shared/protocol/probe';
import { QueueWatch } from '../daemon/queueWatch';
import { isSharedMount } from './mountType';
import { LayoutWatch } from '../daemon/layoutWatch';
import { ResultsWatch } from '../daemon/resultsWatch';
import { Refusals } from '../daemon/refusals';
import { Scanner } from '../daemon/scanner';
import type { IntakeDeps } from '../daemon/intake';

/** What every spool's server uses of the daemon: what intake needs but the spool's own parts (the
 *  allowlist is the whole one: each server gives its intake the spool's view of it), and more. */
export interface SharedParts extends Omit<IntakeDeps, 'spool' | 'paths' | 'results' | 'refused' | 'log'> {
  flags: HostFlags;
  paused: () => boolean;
  stopping: () => boolean;
  reloadSettings: () => void;
  pump: () => void;
  /** Room for the ledger in the home: without it, no spool takes new requests. */
  room: LedgerRoom;
  /** The home's result publishers (HostCore's): this server's writer is the spool's while it serves it. */
  spoolResults: SpoolResults;
  safely: (name: string, fn: () => void) => void;
}

export class SpoolServer {
  readonly name: string;
  /** The spool's plain paths: for messages and the safety check. */
  readonly plain: SpoolPaths;
  /** Its folders pinned (spool/pinned.ts): every file operation goes through these. */
  readonly io: SpoolPaths;
  readonly results: ResultWriter;
  private readonly pinned: PinnedSpool;
  /** Ends this server's being the spool's result publisher. */
  private readonly release: () => void;
  private readonly health: SpoolHealth;
  private readonly log: Logger;
  /** null without file events (the setting, or a mount the probe found delivers none). */
  private queueWatch: QueueWatch | null;
  /** The file_events setting at the start (it takes effect at the next). */
  private readonly fileEvents: boolean;
  private readonly resultsWatch: ResultsWatch;
  /** Whether the last probe found a local mount whose file events came (every writer's changes send one). */
  private localMount = false;
  /** The spool's folders replaced or removed: a full pass at once (null: file events are off). */
  private readonly layoutWatch: LayoutWatch | null;
  private readonly scanner: Scanner;
  private heartbeatError: string | null = null;
  /** Once stopped, nothing opens a watcher again (a probe ending later must not keep the process alive). */
  private stopped = false;
  /** A probe of this spool is under way (the daemon's, or one asked for when the spool came back). */
  private probing = false;

  constructor(
    entry: SpoolEntry,
    private readonly d: SharedParts,
  ) {
    this.name = entry.name;
    this.plain = spoolPaths(path.resolve(entry.dir));
    const settings = d.settings();
    this.log = scopedLogger(`spool ${entry.name}`);
    this.pinned = new PinnedSpool(this.plain, { hostId: settings.host_id, later: true });
    this.io = this.pinned.paths;
    this.health = new SpoolHealth(entry.name, d.audit, this.log, d.flags);
    const written = new WrittenResults();
    const served = d.spoolResults.serve(entry.name, this.io, () => this.ok, this.health, written);
    this.results = served.writer;
    this.release = served.release;
    this.fileEvents = settings.file_events;
    this.queueWatch = settings.file_events ? this.newQueueWatch() : null;
    this.layoutWatch = settings.file_events ? new LayoutWatch(() => this.requestScan(), this.log) : null;
    const repair = new ResultRepair(this.io, d.requests, this.results, written, (k) => d.keys.signer(k), d.audit, () => d.settings().retention_spool_days, this.log);
    this.resultsWatch = new ResultsWatch(repair, written, d.requests, () => d.settings().retention_spool_days, () => this.ok, settings.file_events, new HorizonStore(d.flags, entry.name), this.log, () => this.eventsWork);
    const refusals = new Refusals(d.audit, this.results, this.log, entry.name);
    const intake: IntakeDeps = {
      ...d,
      spool: entry.name,
      paths: this.io,
      results: this.results,
      log: this.log,
      allowlist: () => allowlistFor(d.allowlist(), entry.name),
      refused: (r) => refusals.add(r),
    };
    this.scanner = new Scanner({
      io: this.io,
      claimedMine: () => this.pinned.claimedMine,
      queueWatch: () => this.queueWatch,
      refusals,
      intake,
      requests: d.requests,
      audit: d.audit,
      results: this.results,
      log: this.log,
      spoolUsable: () => this.usable(),
      room: d.room,
      // Pinned folders need no check for a file an event named (a swapped folder is not followed);
      // without pins (macOS, Windows) the check before each pass is all there is.
      spoolOk: () => (CAN_PIN ? this.ok && !this.stopped : this.usable()),
      beforePass: () => d.reloadSettings(),
      pump: () => d.pump(),
      safely: d.safely,
    });
  }

  /** Pins the folders and writes what belongs there, or says why it cannot be touched now. */
  start(): void {
    this.usable();
    this.resultsWatch.start();
    this.requestScan();
  }

  /** The mount's probe (a few file operations and one file event): its verdict is kept in the ledger
   *  for `status` and the app, and a mount that delivers no file events is served by the rescan alone. */
  async runProbe(): Promise<ProbeReport> {
    this.probing = true;
    let report: ProbeReport;
    try {
      report = await probeSpool({ name: this.name, root: this.plain.root, paths: this.ok ? this.io : this.plain, home: this.d.room.home }, probeOptions(this.d.settings()));
    } finally {
      this.probing = false;
    }
    this.d.flags.setProbe(this.name, report);
    if (this.stopped) return report; // ended after the stop (or the spool's removal)
    const say = report.verdict === 'ok' ? this.log.info : this.log.warn;
    say.call(this.log, `probe of ${this.plain.root}: ${report.summary}`);
    this.usable(); // an unusable mount is not served from now on
    this.heartbeat();
    return report;
  }

  requestScan(): void {
    this.scanner.request();
  }

  /** Whether file events bring what changes in queue/, results/ and the spool's folders (watched, and
   *  the probe found they come on a mount not shared with another machine), and nothing waits for a
   *  retry (a full disk): else the daemon rescans at the interval. */
  get eventsWork(): boolean {
    return this.ok && this.localMount && !this.health.full && (this.queueWatch?.watching ?? false) && this.resultsWatch.watching && (this.layoutWatch?.watching ?? false);
  }

  /** Pinned and not known to be broken: results, host.json and the catalog may be written. */
  get ok(): boolean {
    return this.pinned.pinned && this.health.problem === null;
  }

  /**
   * Whether the spool may be touched now: checked (safe, complete, ours to use) and pinned to what its
   * names lead to now. Any problem, whatever the sandbox did (a symlink, chmod 000, a folder deleted),
   * is said once, and this spool waits for it to be fixed; nothing here throws.
   */
  usable(): boolean {
    if (this.stopped) return false;
    const wasOk = this.ok;
    let replaced: string[];
    try {
      checkSpool(this.plain.root);
      // Checked when it is there; a missing one is made by the repin below, through the pinned claimed/
      // (made here by name, it would be made wherever a claimed/ swapped for a link meanwhile leads).
      checkPrivateDir(path.join(this.plain.claimed, this.d.settings().host_id));
      // A folder replaced by another real folder: safe, but our pins still lead to the old one.
      replaced = this.pinned.replaced();
      if (replaced.length || !this.pinned.pinned) {
        this.pinned.repin();
        this.queueWatch?.watch(this.io.queue); // the folder now pinned, not the one an old fd led to
        this.resultsWatch.watch(this.io.results, true);
        this.layoutWatch?.watch(this.plain, this.io.claimed, this.d.settings().host_id);
      } else {
        if (this.queueWatch && !this.queueWatch.watching) this.queueWatch.watch(this.io.queue); // lost to an error (queue/ made unreadable, since fixed)
        if (!this.resultsWatch.watching) this.resultsWatch.watch(this.io.results, false);
        if (this.layoutWatch && !this.layoutWatch.watching) this.layoutWatch.watch(this.plain, this.io.claimed, this.d.settings().host_id);
      }
      if (replaced.length) {
        this.log.warn(`spool folders were replaced: ${replaced.join(', ')}; using the new ones`);
        this.d.audit.record({ kind: 'spool_replaced', spool: this.name, message: `folders of spool "${this.name}" were replaced from outside: ${replaced.join(', ')}` });
      }
      // The last probe (the daemon's, or a `spools check` since) may have found the mount unsafe.
      const probe = this.d.flags.probe(this.name);
      const mount = servingProblem(probe);
      if (mount) throw new Error(mount);
      this.followEvents(probe);
    } catch (e) {
      this.health.setProblem((e as Error).message);
      return false;
    }
    this.health.setProblem(null);
    if (!wasOk || replaced.length) this.back();
    return true;
  }

  private newQueueWatch(): QueueWatch {
    // A named request file is taken by itself; the spool's check and the listing wait for the interval.
    return new QueueWatch((rescan) => (rescan ? this.requestScan() : this.scanner.requestNamed()), this.log);
  }

  /** A mount the last probe found delivers no file events is served by the rescan alone (no watcher
   *  waiting on nothing); once a probe finds them again, they are watched again. */
  private followEvents(probe: ProbeReport | null): void {
    // On a mount shared with a VM or another machine, writes made on the other side may send no event
    // even though the probe's (made here) did: the rescan keeps its interval there.
    this.localMount = probe !== null && probe.events.delivered && probe.fs_type !== 'unknown' && !isSharedMount(probe.fs_type);
    const wanted = this.fileEvents && probe?.events.delivered !== false;
    if (!wanted && this.queueWatch) {
      this.queueWatch.close();
      this.queueWatch = null;
    } else if (wanted && !this.queueWatch) {
      this.queueWatch = this.newQueueWatch();
      this.queueWatch.watch(this.io.queue);
    }
  }

  /** The spool can be written again (or for the first time, or its folders are new): what could not
   *  be written meanwhile, or went with a replaced folder. */
  private back(): void {
    // A probe made while the spool was broken says "unusable" in host.json, which the sandbox's client
    // shows: probed again now that it is served (the fresh verdict replaces it when the probe ends).
    if (this.d.flags.probe(this.name)?.verdict === 'unusable' && !this.probing) {
      void this.runProbe().catch((e: Error) => this.log.error(`probe of spool ${this.name}: ${e.stack ?? String(e)}`));
    }
    this.d.safely('bin/', () => placeSandboxClients(this.io));
    this.publishCatalog(this.d.allowlist());
    this.repairResults();
    this.resultsWatch.sweepNow(); // what events said while the spool could not be touched, and what changed meanwhile
    this.heartbeat();
  }

  /** Results a crash, the spool's state or another process left unwritten. */
  repairResults(): void {
    if (!this.ok) return;
    this.d.safely(`results of spool ${this.name}`, () => {
      const repaired = this.results.repairAll();
      if (repaired) this.log.info(`wrote ${repaired} result files that a crash or the spool's state had held back`);
    });
  }

  /** catalog.json (this spool's operations only), and the agent's guide made from it (bin/AGENTS.md, bin/SKILL.md). */
  publishCatalog(a: Allowlist): void {
    if (!this.ok) return;
    const catalog = catalogOf(a, this.name);
    this.d.safely('catalog.json', () => writeCatalog(this.io.catalogJson, catalog));
    this.d.safely('bin/AGENTS.md', () => placeAgentGuide(this.io, catalog));
  }

  heartbeat(): void {
    if (!this.pinned.pinned) return; // the ledger's spool problem says why
    const probe = this.d.flags.probe(this.name); // also one a `spools check` made since the start
    try {
      writeHostStatus(this.io.hostJson, {
        host_id: this.d.settings().host_id,
        app_version: APP_VERSION,
        paused: this.d.paused(),
        queue_depth: this.d.requests.countInState('queued', this.name) + this.scanner.unclaimed,
        running: this.d.requests.countInState('running', this.name),
        up: !this.d.stopping(),
        spool: this.name,
        ...(probe ? { probe: { verdict: probe.verdict, summary: probe.summary, events: probe.events.delivered } } : {}),
        ...(this.health.full ? { disk_full: true } : {}),
        ...(this.d.room.problem ? { held: this.d.room.problem } : {}),
      });
      this.health.succeeded();
      this.heartbeatError = null;
    } catch (e) {
      const msg = (e as Error).message;
      if (!this.health.failed(e, 'host.json') && msg !== this.heartbeatError) this.log.error(`cannot write host.json: ${msg}`);
      this.heartbeatError = msg;
    }
  }

  /** Retention in this spool's folders (never through a folder the sandbox swapped); null when the
   *  spool may not be touched now. */
  reap(): SpoolReap | null {
    return this.usable() ? reapSpool(this.io, this.d.requests, this.d.settings()) : null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queueWatch?.close();
    this.layoutWatch?.close();
    this.resultsWatch.close();
    await this.scanner.stop();
  }

  /** After the stop: the last heartbeat (up: false) is written by the daemon first. */
  close(): void {
    this.release();
    this.pinned.close();
  }
}
