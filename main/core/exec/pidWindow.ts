// Which pids can be a run's. Linux gives pids out in turn (kernel/pid.c: alloc_pid, idr_alloc_cyclic):
// each is the next free one after the last given, up to pid_max - 1, then again from RESERVED_PIDS.
// Every process of a run is forked after its main process, so until the counter has gone round once
// since then, each has a pid in the cyclic interval from the main process's pid to the last pid given
// out: the leftover search (leftovers.ts) looks there only, not at every process of the machine.
//
// Going round once gives out a pid at each position of the cycle that is free when the counter passes
// it; a position it skips is held, by a pid given out before the main process (one given out since sits
// behind the counter until it has gone round). With R the cycle's length, A the forks since the main
// process and U0 the pids held then: a full turn needs A >= R - U0. Against a reading of the counter
// taken before the main process (B forks before it, A + B forks since the reading, U pids held at the
// reading): U0 <= U + B, so a full turn needs A + B >= R - U, which the reading and a later one show.
// An older reading is as sound (it only bounds more loosely), so runs share one. U is at most 3 per task
// on the machine: its own pid, its process group's and its session's. The forks are the machine's
// (every namespace's), a bound on those of this namespace. pid_max can change at run time (as root): the
// lower of both readings.
//
// What this does not cover: a fork that fails after its pid was given out (at a cgroup's pids limit)
// turns the counter without being counted, and a process with CAP_CHECKPOINT_RESTORE over the host's pid
// namespace can choose its pid (clone3's set_tid, ns_last_pid). A run could so hide a process; but any
// run can hide one more simply by starting it with another environment, without its marker: the marker
// finds programs that put themselves in the background (setsid), not ones that hide.

/** The lowest pid given out once the counter has gone round (RESERVED_PIDS in kernel/pid.c). */
const RESERVED_PIDS = 300;

/** A reading of the pid counter (procfs.ts: readPidCounter). */
export interface PidCounter {
  /** The last pid given out in this pid namespace. */
  last: number;
  /** Tasks (threads) on the machine. */
  tasks: number;
  /** Forks since boot, on the machine. */
  forks: number;
  /** One more than the highest pid. */
  pidMax: number;
}

/** The cyclic interval of pids from `from` to `to`, both included; `to < from` when it wraps. */
export interface PidWindow {
  from: number;
  to: number;
}

/** The pids that can be those of processes forked since the main process `main`, by readings `before`
 *  it and `now`; null when the counter may have gone round since (every pid can be one). */
export function pidWindow(main: number, before: PidCounter, now: PidCounter): PidWindow | null {
  const cycle = Math.min(before.pidMax, now.pidMax) - RESERVED_PIDS;
  const forks = now.forks - before.forks;
  if (forks < 0 || forks >= cycle - 3 * before.tasks) return null;
  return { from: main, to: now.last };
}

export function inPidWindow(w: PidWindow, pid: number): boolean {
  return w.from <= w.to ? pid >= w.from && pid <= w.to : pid >= w.from || pid <= w.to;
}

/** The pids of a window that does not wrap, if there are at most `most`: trying each is then cheaper
 *  than listing every process. Null otherwise. */
export function pidsOf(w: PidWindow, most: number): number[] | null {
  if (w.to < w.from || w.to - w.from >= most) return null;
  return Array.from({ length: w.to - w.from + 1 }, (_, i) => w.from + i);
}
