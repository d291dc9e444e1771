// Runs that outlived a host: found when the host starts again by what was recorded when they started
// (process group, marker, start time: exec/leftovers.ts), watched by a look every second while their
// main process runs, and ended on request (a cancel, a human's forced verdict, a stop of the host).
// As for a run of the host itself, once its main process has exited what it left behind is ended
// (unless its operation leaves processes running on purpose): it holds no slot past its run.
import type { RunPlan } from '../allowlist/plan';
import { planOf, type RequestRow } from '../ledger/requests';
import type { Logger } from '../log';
import { runProcessesOf, type RunProcesses } from '../exec/leftovers';
import { HAS_PROC } from '../exec/procfs';

const LOOK_MS = 1000;

/** How a watched run ended: its main process by itself, or its processes were ended for `reason`.
 *  `note`: what ending what was left found, as for a run's log; null when nothing was left to end. */
export type OrphanEnd = { by: 'itself'; note: string | null } | { by: 'terminate'; reason: string; note: string | null };

/** What is left, at the host's start, of a run recorded as running: its main process, watched from
 *  now on; or only what it left behind, being looked for and ended (`leftovers` resolves to what
 *  ending it found, null when nothing was left); or null, nothing (or nothing that can be told from
 *  another program's processes). */
export type Remains = { orphan: Orphan } | { leftovers: Promise<string | null> } | null;

export interface OrphanWatch {
  killGraceMs: number;
  /** Whether the request is still running in the ledger: a human's forced verdict ends the watch and the processes. */
  stillRunning: () => boolean;
  log: Logger;
}

/** A run's processes as recorded at its start, or null when they cannot be told from others'. */
interface Recorded {
  procs: RunProcesses;
  /** The operation leaves processes running on purpose: the run is its main process (exec/leftovers.ts). */
  leaves: boolean;
}

function recorded(row: RequestRow, log: Logger): Recorded | null {
  if (row.pid === null) return null; // cut before its process existed
  // Windows gives pids out again at once, and has no start time to tell one from another: a pid
  // found running there may be anyone's, and a cancel would end that program's tree.
  if (process.platform === 'win32') return null;
  const plan: Partial<RunPlan> = planOf(row) ?? {};
  const leaves = plan.leaves_processes === true;
  // On Linux the start time tells the run's process from whoever holds its pid now (after a reboot,
  // anyone), and the marker finds what it left: a row recorded without them (by an earlier version)
  // is never taken for a living run, whose cancel would end that other program.
  if (HAS_PROC && (row.run_since === null || (!leaves && row.run_marker === null))) {
    log.warn(`${row.id}: recorded without the start time or marker of its process: pid ${row.pid} is not looked at (it may be another program's by now)`);
    return null;
  }
  // Without /proc no start time is read or used (leftovers.ts).
  return { procs: runProcessesOf(row.pid, plan, row.run_marker, row.run_since ?? 0), leaves };
}

/** Ends what of a run is left (TERM, KILL after the grace period), as the executor does. */
const endNow = (procs: RunProcesses, killGraceMs: number) => procs.end(Date.now() + killGraceMs, killGraceMs);

/** Looks for what a run whose main process is gone left, and ends it: null when nothing was left. */
async function endLeft(procs: RunProcesses, killGraceMs: number): Promise<string | null> {
  const { found, unread } = await procs.find();
  return found.length === 0 && unread.length === 0 ? null : endNow(procs, killGraceMs);
}

export class Orphan {
  readonly done: Promise<OrphanEnd>;
  private settle!: (end: OrphanEnd) => void;
  private timer: NodeJS.Timeout | null = null;
  private ending = false;

  private constructor(
    private readonly rec: Recorded,
    private readonly w: OrphanWatch,
  ) {
    this.done = new Promise((r) => (this.settle = r));
  }

  /** What is left of the run of `row` (see Remains), told at once: the search for what a gone main
   *  process left is part of `leftovers` (it reads the environment of every process started since the
   *  run, a second each for those that hold the read up: seconds on a busy machine), so that a
   *  restarted host serves meanwhile, the run's slot held until it ends. */
  static find(row: RequestRow, w: OrphanWatch): Remains {
    const rec = recorded(row, w.log);
    if (!rec) return null;
    if (rec.procs.mainRuns()) {
      const o = new Orphan(rec, w);
      o.timer = setInterval(() => o.look(), LOOK_MS);
      o.timer.unref();
      return { orphan: o };
    }
    // Its main process is gone, so its run is over: what it left is ended as a run's is (and one that
    // may be its, unreadable in time, is looked at again there, and said).
    if (rec.leaves || !HAS_PROC) return null;
    return { leftovers: endLeft(rec.procs, w.killGraceMs) };
  }

  /**
   * A run given a human's verdict while its processes still ran, that no host has ended since (the
   * host watching it stopped first, or the verdict came before the next one adopted it): ends what
   * of it is left now. Resolves to what that found, for the audit log.
   */
  static async endRemains(row: RequestRow, w: Pick<OrphanWatch, 'killGraceMs' | 'log'>): Promise<string | null> {
    const rec = recorded(row, w.log);
    if (!rec) return 'they could not be looked for (no start time or marker was recorded for its process)';
    // An operation that leaves processes running: once its main process is gone, the rest is meant to stay.
    if (rec.leaves && !rec.procs.mainRuns()) return null;
    return endNow(rec.procs, w.killGraceMs);
  }

  /** Stops watching, ending nothing (the host stops and leaves its runs running): `done` never settles. */
  forget(): void {
    this.ending = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Ends its processes (TERM, KILL after the grace period); `done` then says why. */
  terminate(reason: string): void {
    if (!this.ending) this.endWith(true, (note) => ({ by: 'terminate', reason, note }));
  }

  private look(): void {
    if (this.ending) return;
    try {
      if (!this.w.stillRunning()) return this.terminate('resolved');
      if (!this.rec.procs.mainRuns()) this.endWith(!this.rec.leaves, (note) => ({ by: 'itself', note }));
    } catch (e) {
      this.w.log.error(`while watching the processes of process group ${this.rec.procs.pgid}: ${(e as Error).message} (looking again in a second)`);
    }
  }

  /** Stops watching, ends what is left when `endLeft`, and settles `done`. */
  private endWith(endLeft: boolean, end: (note: string | null) => OrphanEnd): void {
    this.ending = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    void (endLeft ? endNow(this.rec.procs, this.w.killGraceMs) : Promise.resolve(null)).then((note) => this.settle(end(note)));
  }
}
