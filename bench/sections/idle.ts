// The idle cost of running daemons, measured in the same window so that they see the same machine:
// each one's host processes (procTree.ts: the daemon and its spawner) summed, and each shown.
import { CLK_TCK } from '../lib/host';
import { cpuBetween, treeCpu, treeMemory, type CpuDelta, type TreeMemory } from '../lib/procTree';
import { sleep } from '../lib/stats';

export interface IdleRun {
  seconds: number;
  cpu_ms: number;
  cpu_percent_of_core: number;
  /** Each host process's CPU in the window. */
  cpu_by_process: CpuDelta['processes'];
  memory: TreeMemory;
  clk_tck: number;
}

/** `settleMs` first (start-up work such as the retention pass and the first heartbeat), then
 *  `seconds` of CPU time from /proc (ticks of 1/CLK_TCK s) and the memory at the end, for each pid. */
export async function measureIdle(pids: number[], seconds: number, settleMs = 3000): Promise<IdleRun[]> {
  await sleep(settleMs);
  const before = pids.map(treeCpu);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const after = pids.map(treeCpu);
  const s = (performance.now() - t0) / 1000;
  return pids.map((pid, i) => {
    const cpu = cpuBetween(before[i]!, after[i]!);
    const ms = cpu.user + cpu.sys;
    return { seconds: s, cpu_ms: ms, cpu_percent_of_core: (ms / (s * 1000)) * 100, cpu_by_process: cpu.processes, memory: treeMemory(pid), clk_tck: CLK_TCK };
  });
}
