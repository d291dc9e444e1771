// The host's own processes, found from /proc: the daemon; its children that are its spawner (the
// process it starts runs through: workstream B of issue 16) or its run keeper (issue 33: the spawner
// made to outlive the daemon), or the floor host's spawner (floorSpawner.mjs); and the home's keeper,
// which runs in a session of its own once the daemon that started it is gone, named by
// `<home>/keeper/pid`. Every other child of any of them is an operation, whose time and memory are not
// the host's. CPU counts each process's own utime + stime (not cutime: that is its reaped children's,
// the operations'), so an operation never counts even after it has ended.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { cpuTimesOf, memoryOf } from './host';

export interface HostProcess {
  pid: number;
  role: 'daemon' | 'spawner' | 'keeper';
}

/** A helper's command line names its entry: `<name>.mjs` bundled, `<name>Main.ts` from a checkout
 *  (the keeper's `keeperMain.ts` / `keeper.mjs`, the spawner's before it), or the floor's spawner. */
const ENTRY: [HostProcess['role'], RegExp][] = [
  ['keeper', /(^|\/)keeper(Main\.ts|\.mjs)$/],
  ['spawner', /(^|\/)(spawner(Main\.ts|\.mjs)|floorSpawner\.mjs)$/],
];

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

/** What helper `pid` is, by the entry its command line runs (null: none, such as an operation). */
function roleOf(pid: number): HostProcess['role'] | null {
  const argv = read(`/proc/${pid}/cmdline`)?.split('\0') ?? [];
  return ENTRY.find(([, entry]) => argv.some((a) => entry.test(a)))?.[0] ?? null;
}

/** A child of the daemon that is one of its helpers: the same program (node), running a helper's
 *  entry. A child forked but not yet exec'd has its parent's command line, so the entry alone would not say. */
function helperRole(pid: number, daemonExe: string | null): HostProcess['role'] | null {
  return exeOf(pid) === daemonExe ? roleOf(pid) : null;
}

/** The home's keeper, from `<home>/keeper/pid`, while that pid runs the keeper's entry (a stale file's
 *  pid may have been given to any process since). */
export function keeperOf(home: string): number | null {
  const pid = Number(read(path.join(home, 'keeper', 'pid'))?.trim());
  return Number.isInteger(pid) && pid > 0 && roleOf(pid) === 'keeper' ? pid : null;
}

/** The daemon (or a floor host) `pid`, its helpers among its children, and `home`'s keeper wherever
 *  it runs. The reference implementation has none. */
export function hostProcesses(pid: number, home?: string): HostProcess[] {
  const exe = exeOf(pid);
  const out: HostProcess[] = [{ pid, role: 'daemon' }];
  for (const c of childrenOf(pid)) {
    const role = helperRole(c, exe);
    if (role) out.push({ pid: c, role });
  }
  const keeper = home === undefined ? null : keeperOf(home);
  if (keeper !== null && !out.some((p) => p.pid === keeper)) out.push({ pid: keeper, role: 'keeper' });
  return out;
}

export interface TreeCpu {
  /** ms of user and system time by pid, for the host processes alive at the reading. */
  byPid: Map<number, { role: HostProcess['role']; user: number; sys: number }>;
}

export function treeCpu(pid: number, home?: string): TreeCpu {
  const byPid: TreeCpu['byPid'] = new Map();
  for (const p of hostProcesses(pid, home)) {
    try {
      byPid.set(p.pid, { role: p.role, ...cpuTimesOf(p.pid) });
    } catch {
      // ended between the listing and the reading
    }
  }
  return { byPid };
}

/** The host's processes' CPU so far, in ms (of those alive now). */
export function hostCpuMs(pid: number, home?: string): number {
  return [...treeCpu(pid, home).byPid.values()].reduce((a, p) => a + p.user + p.sys, 0);
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

export function treeMemory(pid: number, home?: string): TreeMemory {
  const processes = hostProcesses(pid, home).map((p) => ({ ...p, ...memoryOf(p.pid), pss_mib: pssMibOf(p.pid) }));
  const sum = (f: (p: (typeof processes)[number]) => number) => processes.reduce((a, p) => a + f(p), 0);
  return { rss_mib: sum((p) => p.rss_mib), pss_mib: sum((p) => p.pss_mib), processes };
}
