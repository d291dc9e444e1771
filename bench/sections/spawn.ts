// A run's start with native spawning (posix_spawn, native/) against Node's spawn (a fork on Linux): the
// spawning process's CPU per run and the start-to-close latency, as ratios measured in one process,
// once small (a spawner's size) and once as big as a daemon with history.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { summarize, type Summary } from '../lib/stats';

export interface SpawnSide {
  latency: Summary;
  cpu: Summary;
  /** Mean CPU per run (ms): the figure the ratio is taken of. */
  cpu_mean_ms: number;
}

export interface SpawnCost {
  ballast_mib: number;
  rss_mib: number;
  native_kind: 'posix_spawn' | 'node';
  why: string;
  native: SpawnSide;
  node: SpawnSide;
}

function side(samples: { ms: number; cpu_ms: number }[]): SpawnSide {
  const cpu = samples.map((s) => s.cpu_ms);
  return { latency: summarize(samples.map((s) => s.ms)), cpu: summarize(cpu), cpu_mean_ms: cpu.reduce((a, b) => a + b, 0) / cpu.length };
}

/** `rounds` starts by each spawning, in a process holding `ballastMib` of extra memory. */
export async function measureSpawnCost(rounds: number, ballastMib: number): Promise<SpawnCost> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '../lib/spawnCost.ts'), String(rounds), String(ballastMib)], { maxBuffer: 64 * 2 ** 20 });
  const r = JSON.parse(stdout) as { native_kind: SpawnCost['native_kind']; why: string; rss_mib: number; native: { ms: number; cpu_ms: number }[]; node: { ms: number; cpu_ms: number }[] };
  return { ballast_mib: ballastMib, rss_mib: r.rss_mib, native_kind: r.native_kind, why: r.why, native: side(r.native), node: side(r.node) };
}
