// Runs that outlived a host: found when the host starts again by what was recorded when they started
// (process group, marker, start time: exec/leftovers.ts), watched by a look every second until they
// end, and ended on request (a cancel, a human's forced verdict, a stop of the host).
import type { RunPlan } from '../allowlist/plan';
import type { RequestRow } from '../ledger/requests';
import type { Logger } from '../log';
import { runProcessesOf, type RunProcesses } from '../exec/leftovers';
import { HAS_PROC } from '../exec/procfs';
import { groupAlive } from '../exec/processGroup';

const LOOK_MS = 1000;

/** How a watched run ended: its processes ended by themselves, or were ended for `reason` (`note`:
 *  what ending them found, as for a run's log; null when nothing was left to end). */
export type OrphanEnd = { by: 'itself' } | { by: 'terminate'; reason: string; note: string | null };

export interface OrphanWatch {
  killGraceMs: number;
  /** Whether the request is still running in the ledger: a human's forced verdict ends the watch and the processes. */
  stillRunning: () => boolean;
  log: Logger;
}

export class Orphan {
  readonly done: Promise<OrphanEnd>;
  private settle!: (end: OrphanEnd) => void;
  private timer: NodeJS.Timeout | null = null;
  private ending = false;
  private looking = false;

  private constructor(
    private readonly procs: RunProcesses,
    /** The operation leaves processes running on purpose: the run is its main process (exec/leftovers.ts). */
    private readonly leavesProcesses: boolean,
    private readonly pid: number,
    private readonly w: OrphanWatch,
  ) {
    this.done = new Promise((r) => (this.settle = r));
  }

  /** The run of `row` if anything of it still runs, watched from now on; null when it is all gone. */
  static async find(row: RequestRow, w: OrphanWatch): Promise<Orphan | null> {
    if (row.pid === null) return null; // cut before its process existed
    // Windows gives pids out again at once, and has no start time to tell one from another: a pid
    // found running there may be anyone's, and a cancel would end that program's tree.
    if (process.platform === 'win32') return null;
    const plan: Partial<RunPlan> = row.plan_json ? (JSON.parse(row.plan_json) as RunPlan) : {};
    const o = new Orphan(runProcessesOf(row.pid, plan, row.run_marker, row.run_since), plan.leaves_processes === true, row.pid, w);
    if (!(await o.runs())) return null;
    o.timer = setInterval(() => void o.look(), LOOK_MS);
    o.timer.unref();
    return o;
  }

  /** Ends its processes (TERM, KILL after the grace period); `done` then says why. */
  terminate(reason: string): void {
    if (this.ending) return;
    this.ending = true;
    this.stopLooking();
    void this.procs.end(Date.now() + this.w.killGraceMs, this.w.killGraceMs).then((note) => this.settle({ by: 'terminate', reason, note }));
  }

  private async runs(): Promise<boolean> {
    if (this.leavesProcesses) return this.procs.mainRuns();
    return HAS_PROC ? (await this.procs.find()).length > 0 : groupAlive(this.pid);
  }

  private async look(): Promise<void> {
    if (this.looking || this.ending) return;
    this.looking = true;
    try {
      if (!this.w.stillRunning()) return this.terminate('resolved');
      const runs = await this.runs();
      if (runs || this.ending) return;
      this.ending = true;
      this.stopLooking();
      this.settle({ by: 'itself' });
    } catch (e) {
      this.w.log.error(`while watching the processes of process group ${this.pid}: ${(e as Error).message} (looking again in a second)`);
    } finally {
      this.looking = false;
    }
  }

  private stopLooking(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
