// The idle cost of running daemons, measured in the same window so that they see the same machine:
// each one's host processes (procTree.ts: the daemon, its spawner, the home's keeper) summed, and each shown.
import { CLK_TCK } from '../lib/host';
import { cpuBetween, hostCpuMs, treeCpu, treeMemory, type CpuDelta, type TreeMemory } from '../lib/procTree';
import { sleep } from '../lib/stats';

export interface IdleRun {
  seconds: number;
  /** How long after the start the window began, and whether the start-up work had settled before the
   *  first (if not, it began at the longest wait and counts the rest of that work). */
  settle_ms: number;
  settled: boolean;
  cpu_ms: number;
  cpu_percent_of_core: number;
  /** Each host process's CPU in the window. */
  cpu_by_process: CpuDelta['processes'];
  memory: TreeMemory;
  clk_tck: number;
}

/** Start-up work (the first sweep over the results, the retention pass, the first heartbeat) can
 *  outlast the start by seconds (about 1 s per 10,000 results here): idle begins once every process has used at most one clock tick in a
 *  second, after at least `minMs` and at most `maxMs`. */
async function settle(hosts: IdleHost[], minMs: number, maxMs: number): Promise<boolean> {
  const t0 = performance.now();
  await sleep(minMs);
  const cpu = () => hosts.map((h) => hostCpuMs(h.pid, h.home));
  let last = cpu();
  while (performance.now() - t0 < maxMs) {
    await sleep(1000);
    const now = cpu();
    if (now.every((c, i) => c - last[i]! <= 1000 / CLK_TCK)) return true;
    last = now;
  }
  return false;
}

/** A host to watch: its daemon's pid, and its home (where its keeper is named), for ours. */
export interface IdleHost {
  pid: number;
  home?: string;
}

/** After the start-up work has settled, `windows` windows of `seconds` back to back: in each, the CPU
 *  time from /proc (ticks of 1/CLK_TCK s) and the memory at its end, for each host. A later window
 *  shows the steady state once what the start left (V8's memory reducer, say) is done. */
export async function measureIdle(hosts: IdleHost[], seconds: number, windows: number): Promise<IdleRun[][]> {
  const t0 = performance.now();
  const settled = await settle(hosts, 3000, 60_000);
  const runs: IdleRun[][] = [];
  for (let w = 0; w < windows; w++) {
    const t1 = performance.now();
    const before = hosts.map((h) => treeCpu(h.pid, h.home));
    await sleep(seconds * 1000);
    const after = hosts.map((h) => treeCpu(h.pid, h.home));
    const s = (performance.now() - t1) / 1000;
    runs.push(
      hosts.map((h, i) => {
        const cpu = cpuBetween(before[i]!, after[i]!);
        const ms = cpu.user + cpu.sys;
        return { seconds: s, settle_ms: t1 - t0, settled, cpu_ms: ms, cpu_percent_of_core: (ms / (s * 1000)) * 100, cpu_by_process: cpu.processes, memory: treeMemory(h.pid, h.home), clk_tck: CLK_TCK };
      }),
    );
  }
  return runs;
}
