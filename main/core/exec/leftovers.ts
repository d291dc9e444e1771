// The processes of a run, its main process aside: what it started in its process group, and on Linux
// what carries its marker (baseEnv.ts) after leaving the group with setsid. When the main process
// exits, what it left behind is ended (TERM, then KILL after the grace period) before the result is
// recorded, so that no part of a run outlives its timeout, its concurrency slot or its run time.
// Without /proc (macOS) only the process group can be reached; on Windows nothing is left to find once
// the main process is gone (taskkill /T walks the tree from a living root).
// Only processes started since the main process are looked at: anything of the run was forked after
// it, and reading the environment of a process can wait on it, so one that was running before the run,
// whoever started it, is never read. Only their pids are tried, where the pid counter says which they
// can be (pidWindow.ts): a search costs what the run forked, not what the machine runs.
// A process's environment is read in a child process with a deadline (environReader.ts): a process can
// make that read wait as long as it likes, and here it would hold the event loop of the keeper (every
// spool's runs) or the daemon. One whose environment could not be read in time may be the run's or
// anyone's: it is never signalled (ending a program that is not the run's is the worse harm, and a run
// can always leave a process behind by starting it without its marker), it is read again while the
// rest of the run is being ended, and if it still cannot be, the run's log says so: never "nothing was
// left". Its process group, found from /proc/<pid>/stat alone (which never waits), is ended as ever.
// A restarted host finds a run again from what was recorded when it started (its pid, marker and
// start time: daemon/orphans.ts).
import type { RunPlan } from '../allowlist/plan';
import { RUN_MARKER_VAR } from './baseEnv';
import { groupAlive, signalGroup } from './processGroup';
import { readEnvEntry } from './environReader';
import { HAS_PROC, groupExists, procHas, procPids, procStat, readPidCounter } from './procfs';
import { inPidWindow, pidsOf, pidWindow, type PidCounter } from './pidWindow';

/** Pids read between two turns of the event loop: a scan never holds the daemon up for long. */
const SCAN_SLICE = 64;
/** How often what is left is looked at again while it is given time to end. */
const POLL_MS = 25;
/** The least time given to KILL: it cannot be refused, but the kernel takes a moment to end a process. */
const MIN_KILL_WAIT_MS = 1000;
/** Up to how many pids are tried one by one (a few µs each when free) rather than listing /proc (some
 *  tens of µs for a hundred processes, and desktops run several hundred). */
const PROBE_MOST = 64;
/** How long a grep of environments is given (environReader.ts): some ms when nothing holds it up, and
 *  a run's end waits this long for each process that does. */
export const ENV_READ_DEADLINE_MS = 1000;
/** How long one reading of the pid counter serves the runs that start: an older reading bounds their
 *  pids more loosely, never wrongly (pidWindow.ts). */
const COUNTER_REUSE_MS = 1000;

/** Where the processes of a run are looked for: among the pids that the pid counter allows since
 *  `counter`, a reading of it taken before the spawn of the main process (pidWindow.ts); each pid tried
 *  in turn when there are at most `probeMost`, else /proc listed. */
export interface PidSearch {
  counter: PidCounter;
  probeMost: number;
}

let shared: { at: number; search: PidSearch | null } | null = null;

/** The PidSearch of a run about to be spawned (null where the counter cannot be read: every pid). */
export function pidSearchBefore(): PidSearch | null {
  const now = performance.now();
  if (shared === null || now - shared.at > COUNTER_REUSE_MS) {
    const counter = readPidCounter();
    shared = { at: now, search: counter && { counter, probeMost: PROBE_MOST } };
  }
  return shared.search;
}

type Signal = 'SIGTERM' | 'SIGKILL';

/** What a look found: the run's processes, and those that may be (their environment could not be read
 *  in time: never signalled). */
export interface Found {
  found: number[];
  unread: number[];
}

const turn = () => new Promise<void>((r) => setImmediate(r));
const pause = () => new Promise<void>((r) => setTimeout(r, POLL_MS));

/** The processes of a run as the executor reaches them: an operation that leaves processes running on
 *  purpose (a service it starts) by its process group only, and only while its main process runs. */
export function runProcessesOf(pid: number, plan: Pick<RunPlan, 'leaves_processes'>, marker: string | null, since?: number, search?: PidSearch | null): RunProcesses {
  return new RunProcesses(pid, plan.leaves_processes ? null : marker, since, search);
}

export class RunProcesses {
  private readonly entry: string | null;
  /** When the main process was forked (procfs.ts: ProcStat.started). */
  readonly since: number;
  /** Every process found since the main process exited, and those already sent TERM. */
  private readonly seen = new Set<number>();
  private readonly termed = new Set<number>();

  /** Made right after the spawn of the main process `pgid`, before the event loop turns: until then
   *  it is not reaped, so its start time can be read even if it has already exited; or later with
   *  `since`, its start time as recorded then (never read anew: by then the pid may be anyone's).
   *  `marker`: the run's marker, or null to reach its process group only (an operation that leaves
   *  processes running on purpose). `search`: where its processes can be (pidSearchBefore); without
   *  it, every pid. */
  constructor(
    readonly pgid: number,
    marker: string | null,
    since?: number,
    private readonly search: PidSearch | null = null,
  ) {
    this.entry = marker === null ? null : `${RUN_MARKER_VAR}=${marker}`;
    // Should its start time be unreadable after all, the daemon's own is a bound that leaves out no
    // process of the run.
    this.since = since ?? (HAS_PROC ? (procStat(pgid) ?? procStat(process.pid))?.started ?? 0 : 0);
  }

  /** Linux: the running members of the run's process group, and every running process with its
   *  marker; only among the processes started since the main process. */
  async find(): Promise<Found> {
    const none: Found = { found: [], unread: [] };
    const group = this.groupIsOurs();
    // Without a marker only the group is looked for: when it has no member at all (kill(-pgid, 0)
    // says ESRCH: not even a zombie), nothing is. With one, the scan finds the members anyway.
    if (this.entry === null && !(group && groupExists(this.pgid))) return none;
    const pids = this.candidates();
    const members: number[] = [];
    const toRead: number[] = [];
    for (let i = 0; i < pids.length; i++) {
      if (i > 0 && i % SCAN_SLICE === 0) await turn();
      const pid = pids[i]!;
      const st = procStat(pid);
      // A thread of an older process is forked since, but its environment is that process's.
      if (!st?.running || !st.leader || st.started < this.since) continue;
      if (group && st.pgrp === this.pgid) members.push(pid);
      // A child of this process is another run's main process (or a grep of environReader.ts): this
      // run's exited, or is in its group. Only that main process could make one of its own a child of
      // ours (clone's CLONE_PARENT); one that then left the group hides as one without the marker does.
      else if (this.entry !== null && st.ppid !== process.pid) toRead.push(pid);
    }
    if (toRead.length === 0) return { found: members, unread: [] };
    const read = await readEnvEntry(toRead, this.entry!, ENV_READ_DEADLINE_MS);
    return { found: [...members, ...read.has].sort((a, b) => a - b), unread: read.unread };
  }

  /** The pids to look at: those the pid counter allows (pidWindow.ts), or all. Both lists leave this
   *  process out, older than any run. */
  private candidates(): number[] {
    const now = this.search && readPidCounter();
    const w = now ? pidWindow(this.pgid, this.search!.counter, now) : null;
    if (w === null) return procPids();
    return pidsOf(w, this.search!.probeMost)?.filter((pid) => pid !== process.pid && procHas(pid)) ?? procPids().filter((pid) => inPidWindow(w, pid));
  }

  /** Whether the main process itself still runs (not what it left). Without /proc: its group. */
  mainRuns(): boolean {
    if (!HAS_PROC) return groupAlive(this.pgid);
    const st = procStat(this.pgid);
    return st !== null && st.running && st.started === this.since;
  }

  /**
   * Whether the process group `pgid` is still the run's (Linux). The kernel keeps a pid from being
   * given out again while a process group of that id has members, so a process with that pid and
   * another start time means the run's group is gone and the id went to someone else's program (a
   * shell's job leads a group of its own): its group is never reached.
   */
  private groupIsOurs(): boolean {
    // Usually the leader is gone, reaped: asked first without a thrown ENOENT.
    const leader = procHas(this.pgid) ? procStat(this.pgid) : null;
    return leader === null || leader.started === this.since;
  }

  /** While the main process runs (a timeout, a cancel, a shutdown): the signal to its group at once,
   *  then to every other process of the run that can be found. */
  async signal(sig: Signal): Promise<void> {
    signalGroup(this.pgid, sig);
    if (!HAS_PROC) return;
    for (const pid of (await this.find()).found) {
      if (sig === 'SIGTERM' && this.termed.has(pid)) continue;
      if (procStat(pid)?.pgrp !== this.pgid) send(pid, sig);
      if (sig === 'SIGTERM') this.termed.add(pid);
    }
  }

  /**
   * Once the main process has exited: ends whatever of the run is left. TERM to each process found
   * (once) until `termUntil` (ms since the epoch), then KILL until nothing is found, for at most
   * `killForMs` (or a second); one whose environment cannot be read is looked at again meanwhile.
   * Returns what the run's log says about it, or null when nothing was left.
   */
  async end(termUntil: number, killForMs: number): Promise<string | null> {
    if (!HAS_PROC) return this.endGroup(termUntil, killForMs);
    // Each look acts on what it found before the time is checked again: a look can take a while (a
    // process whose environment is slow to read), and what it found must still be signalled.
    let f = await this.look();
    while (Date.now() < termUntil) {
      if (f.found.length === 0 && f.unread.length === 0) return this.note([], []);
      for (const pid of f.found) {
        if (!this.termed.has(pid)) send(pid, 'SIGTERM');
        this.termed.add(pid);
      }
      await pause();
      f = await this.look();
    }
    const killUntil = Date.now() + Math.max(killForMs, MIN_KILL_WAIT_MS);
    for (;;) {
      if (f.found.length === 0 && f.unread.length === 0) return this.note([], []);
      // The group as a whole too: a member forked since the scan is in it.
      if (f.found.some((pid) => procStat(pid)?.pgrp === this.pgid)) signalGroup(this.pgid, 'SIGKILL');
      for (const pid of f.found) send(pid, 'SIGKILL');
      await pause();
      f = await this.look();
      if (Date.now() >= killUntil) return this.note(f.found, f.unread);
    }
  }

  /** find(), keeping every process found. */
  private async look(): Promise<Found> {
    const f = await this.find();
    for (const pid of f.found) this.seen.add(pid);
    return f;
  }

  private note(survivors: number[], unread: number[]): string | null {
    const parts: string[] = [];
    if (this.seen.size > 0) {
      const n = this.seen.size - survivors.length;
      parts.push(`${n} process${n === 1 ? '' : 'es'} left behind by the run ${n === 1 ? 'was' : 'were'} ended`);
      if (survivors.length > 0) parts.push(`${survivors.length} could not be (pid ${survivors.join(', ')})`);
    }
    if (unread.length > 0) {
      const one = unread.length === 1;
      parts.push(
        `${unread.length} process${one ? '' : 'es'} started during the run could not be looked at in time (pid ${unread.join(', ')}: reading ${one ? 'its' : 'their'} environment waited over ${ENV_READ_DEADLINE_MS / 1000} s) and ${one ? 'was' : 'were'} left running: ${one ? 'it' : 'they'} may be the run's`,
      );
    }
    return parts.length === 0 ? null : parts.join('; ');
  }

  /** Without /proc: the process group is all there is to reach, and its members cannot be counted. */
  private async endGroup(termUntil: number, killForMs: number): Promise<string | null> {
    if (process.platform === 'win32' || !groupAlive(this.pgid)) return null;
    signalGroup(this.pgid, 'SIGTERM');
    while (groupAlive(this.pgid) && Date.now() < termUntil) await pause();
    const killUntil = Date.now() + Math.max(killForMs, MIN_KILL_WAIT_MS);
    while (groupAlive(this.pgid) && Date.now() < killUntil) {
      signalGroup(this.pgid, 'SIGKILL');
      await pause();
    }
    // A group still there may hold only zombies (ended, not yet reaped): counted alike without /proc.
    return groupAlive(this.pgid) ? 'processes left behind by the run in its process group may not all have ended' : 'processes left behind by the run in its process group were ended';
  }
}

function send(pid: number, sig: Signal): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone meanwhile */
  }
}
