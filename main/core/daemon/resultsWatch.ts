// When the host looks at result files for repair (spool/resultRepair.ts): file events on results/ as
// hints (one watch on the folder, a bounded set of the names they gave), and a periodic sweep over the
// requests whose result may be in the spool, for what events miss. Both go in bounded steps that yield
// to the loop, so a flood of events or a large spool never holds up requests. A look costs an lstat;
// only a file that is not as the host wrote it is read. What the sweeps proved is kept in the ledger
// (spool/resultsHorizon.ts), so that after a start only what changed since is read, and a sweep cut
// short by a stop goes on where it was. What a step repaired is recorded at its end, in one commit;
// the repair's budget starts again with each periodic sweep.
import { watch, type FSWatcher } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { requestIdFromFileName } from '../../../shared/protocol/ids';
import type { Requests } from '../ledger/requests';
import type { Logger } from '../log';
import { DAY_MS, spoolCutoff } from '../retention';
import type { Look, Outcome, ResultRepair } from '../spool/resultRepair';
import type { WrittenResults } from '../spool/results';
import { emptyRecord, folderIdentity, horizonNow, trusted, trustedBefore, type Horizon, type HorizonRecord, type HorizonStore } from '../spool/resultsHorizon';

/** Names kept from events (the newest); one pushed out is left to the sweep. */
const NAMED_MAX = 8192;
/** Events are looked at together, this long after the first: a file rewritten in a loop is looked at
 *  (and written again) a few times a second at most, not once per write. */
const EVENT_DELAY_MS = 250;
const SWEEP_MS = 60_000;
/** While every watch of the spool works on a local mount (SpoolServer.eventsWork), events bring each
 *  change and the sweep only catches what the system lost (an overflow): every this many minutes.
 *  A sweep lstats each result in the spool, a second of CPU for 100,000 of them. */
const SWEEP_EVENTS_EVERY = 30;
/** A step looks at most at this many files, or stops after STEP_MS. */
const STEP_MAX = 64;
const STEP_MS = 20;
/** A sweep under way saves how far it got at most this often (one small commit). */
const SAVE_MS = 2000;

/** Whether a minute's tick starts a sweep: every minute, unless events bring every change and no file
 *  is backed off (written again only by the sweep); then every SWEEP_EVENTS_EVERY minutes. */
export function sweepDue(minutesSinceSweep: number, backingOff: boolean, eventsWork: boolean): boolean {
  return minutesSinceSweep >= SWEEP_EVENTS_EVERY || backingOff || !eventsWork;
}

export class ResultsWatch {
  private watcher: FSWatcher | null = null;
  private lastError: string | null = null;
  /** Ids that events named, oldest first, and whether one said the content changed (not a rename). */
  private readonly named = new Map<string, boolean>();
  /** The sweep under way: where it is in the ledger, the page it is on (last first), its horizon, and
   *  whether a look in it could not settle its file (then it proves nothing from there on). */
  private sweep: { after: number; page: { rowid: number; wire_id: string }[]; started: Horizon; broken: boolean } | null = null;
  /** What the sweeps proved of the folder watched; null: nothing (each file is compared once). */
  private horizon: HorizonRecord | null = null;
  private folder: string | null = null;
  private savedAt = 0;
  private eventTimer: NodeJS.Timeout | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private working = false;
  private closed = false;
  private minutesSinceSweep = 0;

  constructor(
    private readonly repair: ResultRepair,
    private readonly written: WrittenResults,
    private readonly requests: Requests,
    /** retention_spool_days: older finished results have left the spool. */
    private readonly spoolDays: () => number,
    /** Whether the spool may be touched now. */
    private readonly usable: () => boolean,
    private readonly fileEvents: boolean,
    private readonly horizons: HorizonStore,
    private readonly log: Logger,
    /** Whether file events bring every change of the spool now (the sweep is then rarer). */
    private readonly eventsWork: () => boolean = () => false,
  ) {}

  /** Looks at every result from now on (the first sweep compares with the ledger each file changed
   *  since the sweeps before it looked, in this process or before its start), then every SWEEP_MS;
   *  every SWEEP_EVENTS_EVERY of those while events work and no file is backed off. */
  start(): void {
    this.sweepTimer = setInterval(() => {
      this.safely('recording result repairs', () => this.repair.endMinute());
      if (sweepDue(++this.minutesSinceSweep, this.repair.backingOff, this.eventsWork())) this.sweepNow();
    }, SWEEP_MS);
    this.sweepNow();
  }

  /** `dir`: the pinned results/, after each repin. A folder not watched before: its files are unknown. */
  watch(dir: string, fresh: boolean): void {
    this.unwatch();
    if (fresh) {
      // The sweep that follows a repin (Daemon.spoolBack) compares all that the sweeps did not see.
      this.written.clear();
      this.folder = folderIdentity(dir);
      this.horizon = this.safelyGet('reading what the sweeps proved', () => trusted(this.horizons.load(), this.folder));
      if (this.sweep) this.sweep.broken = true; // it began in another folder
    }
    if (!this.fileEvents) return;
    try {
      this.watcher = watch(dir, { encoding: 'buffer' }, (event, raw) => raw && this.note(event, raw));
      this.watcher.on('error', (e) => this.failed(e));
      this.lastError = null;
    } catch (e) {
      this.failed(e as Error);
    }
  }

  /** Whether events come (or are not wanted): false after an error closed the watch. */
  get watching(): boolean {
    return !this.fileEvents || this.watcher !== null;
  }

  /** Starts a sweep unless one is under way: where the last one was cut short, or from the start. */
  sweepNow(): void {
    this.minutesSinceSweep = 0;
    if (!this.sweep) {
      this.horizon = trusted(this.horizon, this.folder); // the clock may have stepped back since
      const current = this.horizon?.current;
      if (current) this.sweep = { after: current.through, page: [], started: current, broken: false };
      else {
        this.sweep = { after: 0, page: [], started: horizonNow(), broken: false };
        if (this.folder !== null) this.horizon = { ...(this.horizon ?? emptyRecord(this.folder)), current: { ...this.sweep.started, through: 0 } };
      }
    }
    void this.work();
  }

  private note(event: string, raw: Buffer): void {
    const id = requestIdFromFileName(raw.toString('utf8'));
    if (id === null) return; // a log, a write in progress
    const changed = event === 'change' || this.named.get(id) === true;
    this.named.delete(id);
    this.named.set(id, changed);
    if (this.named.size > NAMED_MAX) this.named.delete(this.named.keys().next().value!);
    if (this.eventTimer || this.working) return; // the work under way takes it
    this.eventTimer = setTimeout(() => {
      this.eventTimer = null;
      void this.work();
    }, EVENT_DELAY_MS);
  }

  private async work(): Promise<void> {
    if (this.working) return;
    this.working = true;
    try {
      while (!this.closed && (this.named.size > 0 || this.sweep) && this.usable()) {
        this.step();
        await yieldToLoop();
      }
    } finally {
      this.working = false;
    }
  }

  /** One step: named files first (what an event showed a moment ago), then the sweep; then what it
   *  repaired is recorded. */
  private step(): void {
    try {
      this.looks();
    } finally {
      this.safely('recording result repairs', () => this.repair.flush());
    }
  }

  private looks(): void {
    const until = performance.now() + STEP_MS;
    let n = 0;
    const more = () => n === 0 || (n < STEP_MAX && performance.now() < until);
    for (const [id, changed] of this.named) {
      if (!more()) return;
      this.named.delete(id);
      n++;
      this.look(id, changed ? 'change' : 'event');
    }
    while (this.sweep && more()) {
      const sweep = this.sweep;
      const r = sweep.page.pop();
      if (r !== undefined) {
        n++;
        if (this.look(r.wire_id, 'sweep', trustedBefore(this.horizon, r.rowid)) === 'unsettled') sweep.broken = true;
        continue;
      }
      this.proved(sweep); // the page before is done
      // A day past retention's age: a file rewritten later than its request's last change is younger.
      const since = new Date(spoolCutoff(this.spoolDays()) - DAY_MS).toISOString();
      const page = this.requests.resultIdsAfter(this.repair.spool, sweep.after, since, STEP_MAX);
      if (page.length === 0) {
        this.sweep = null;
        this.ended(sweep);
      } else {
        sweep.after = page[page.length - 1]!.rowid;
        sweep.page = page.reverse();
      }
    }
  }

  /** Every file of the pages up to `sweep.after` was found the host's (or written again) since the
   *  sweep began: saved now and then, so that a stop loses little of it. */
  private proved(sweep: NonNullable<ResultsWatch['sweep']>): void {
    const current = this.horizon?.current;
    if (sweep.broken || !current || current.before_ns !== sweep.started.before_ns) return;
    current.through = sweep.after;
    if (performance.now() - this.savedAt >= SAVE_MS) this.save();
  }

  /** A sweep that met no file it could not settle proved every file older than its start the host's. */
  private ended(sweep: NonNullable<ResultsWatch['sweep']>): void {
    if (!sweep.broken && this.horizon?.current?.before_ns === sweep.started.before_ns) this.horizon = { ...this.horizon, complete: { before_ns: sweep.started.before_ns, offset_ms: sweep.started.offset_ms }, current: null };
    this.save();
  }

  private save(): void {
    this.savedAt = performance.now();
    this.safely('saving what the sweeps proved', () => this.horizons.save(this.horizon));
  }

  /** `id`: a result file's name, the wire id (bound within this spool). */
  private look(id: string, from: Look, unchangedBefore: bigint | null = null): Outcome {
    // One file never stops the others: the next look tries again.
    return this.safelyGet(`while looking at results/${id}.json`, () => this.repair.check(id, from, unchangedBefore)) ?? 'unsettled';
  }

  private safely(what: string, fn: () => void): void {
    this.safelyGet(what, fn);
  }

  private safelyGet<T>(what: string, fn: () => T): T | null {
    try {
      return fn();
    } catch (e) {
      this.log.error(`${what}: ${(e as Error).stack ?? String(e)}`);
      return null;
    }
  }

  private failed(e: Error): void {
    const msg = e.message;
    if (msg !== this.lastError) this.log.warn(`file events on results/: ${msg} (the periodic sweep goes on)`);
    this.lastError = msg;
    this.unwatch();
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  /** What the sweep under way proved so far is saved: the next start goes on from there. */
  close(): void {
    if (!this.closed && this.sweep) this.save();
    this.closed = true;
    this.unwatch();
    if (this.eventTimer) clearTimeout(this.eventTimer);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
  }
}
