// The host's own processes, found by parentage from /proc: the daemon, and the spawner it starts
// operations through (workstream B of issue 16). Every other child of either is an operation, whose
// time and memory are not the host's. CPU counts each process's own utime + stime (not cutime: that
// is its reaped children's, the operations'), so an operation never counts even after it has ended.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { cpuTimesOf, memoryOf } from './host';

export interface HostProcess {
  pid: number;
  role: 'daemon' | 'spawner';
}

/** A spawner's command line names its entry: `spawner.mjs` bundled, `spawnerMain.ts` from a checkout. */
const SPAWNER_ENTRY = /(^|\/)spawner(Main\.ts|\.mjs)$/;

function read(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null; // the process ended meanwhile
  }
}

/** The pids whose parent is `pid` (a scan of /proc: this kernel has no /proc/<pid>/task/<tid>/children). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = read(`/proc/${name}/stat`);
    if (stat === null) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]); // field 4 of the full line
    if (ppid === pid) out.push(Number(name));
  }
  return out;
}

function exeOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return null;
  }
}

/** Whether a child of the daemon is its spawner: the same program (node), running the spawner's entry.
 *  A child forked but not yet exec'd has its parent's command line, so the program alone would not say. */
function isSpawner(pid: number, daemonExe: string | null): boolean {
  const argv = read(`/proc/${pid}/cmdline`)?.split('\0') ?? [];
  return exeOf(pid) === daemonExe && argv.some((a) => SPAWNER_ENTRY.test(a));
}

/** The daemon `pid` and its spawner, if it has one (the reference implementation has none). */
export function hostProcesses(pid: number): HostProcess[] {
  const exe = exeOf(pid);
  return [{ pid, role: 'daemon' as const }, ...childrenOf(pid).filter((c) => isSpawner(c, exe)).map((c) => ({ pid: c, role: 'spawner' as const }))];
}

export interface TreeCpu {
  /** ms of user and system time by pid, for the host processes alive at the reading. */
  byPid: Map<number, { role: HostProcess['role']; user: number; sys: number }>;
}

export function treeCpu(pid: number): TreeCpu {
  const byPid: TreeCpu['byPid'] = new Map();
  for (const p of hostProcesses(pid)) {
    try {
      byPid.set(p.pid, { role: p.role, ...cpuTimesOf(p.pid) });
    } catch {
      // ended between the listing and the reading
    }
  }
  return { byPid };
}

/** The host's processes' CPU so far, in ms (of those alive now). */
export function hostCpuMs(pid: number): number {
  return [...treeCpu(pid).byPid.values()].reduce((a, p) => a + p.user + p.sys, 0);
}

export interface CpuDelta {
  user: number;
  sys: number;
  /** Each host process's share (ms): one that started after `before` counts from zero. */
  processes: { pid: number; role: HostProcess['role']; ms: number }[];
}

/** CPU the host's processes used between two readings. One that ended in between is not counted
 *  (its time went to the daemon's cutime, with the operations'); `processes` shows who was there. */
export function cpuBetween(before: TreeCpu, after: TreeCpu): CpuDelta {
  let user = 0;
  let sys = 0;
  const processes: CpuDelta['processes'] = [];
  for (const [pid, a] of after.byPid) {
    const b = before.byPid.get(pid) ?? { user: 0, sys: 0 };
    user += a.user - b.user;
    sys += a.sys - b.sys;
    processes.push({ pid, role: a.role, ms: a.user - b.user + a.sys - b.sys });
  }
  return { user, sys, processes };
}

export interface TreeMemory {
  /** Summed VmRSS (pages shared between the processes, such as node's own, count in each). */
  rss_mib: number;
  /** Summed Pss: shared pages split between the processes that share them. */
  pss_mib: number;
  processes: { pid: number; role: HostProcess['role']; rss_mib: number; peak_rss_mib: number; pss_mib: number }[];
}

function pssMibOf(pid: number): number {
  const kib = /^Pss:\s+(\d+) kB/m.exec(read(`/proc/${pid}/smaps_rollup`) ?? '')?.[1];
  return kib === undefined ? NaN : Number(kib) / 1024;
}

export function treeMemory(pid: number): TreeMemory {
  const processes = hostProcesses(pid).map((p) => ({ ...p, ...memoryOf(p.pid), pss_mib: pssMibOf(p.pid) }));
  const sum = (f: (p: (typeof processes)[number]) => number) => processes.reduce((a, p) => a + f(p), 0);
  return { rss_mib: sum((p) => p.rss_mib), pss_mib: sum((p) => p.pss_mib), processes };
}
