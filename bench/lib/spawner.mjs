// The baseline for the host's overhead: a bare `child_process.spawn('/bin/true')` from a minimal Node
// process (plain node, no tsx, nothing loaded), timed to 'close'. Runs as a child of the benchmark and
// answers one sample per line read, so that its samples interleave with the daemon's.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';

createInterface({ input: process.stdin }).on('line', () => {
  const t0 = performance.now();
  const child = spawn('/bin/true');
  child.on('close', () => process.stdout.write(`${performance.now() - t0} ${process.memoryUsage().rss}\n`));
});
