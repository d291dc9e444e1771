// A run's start, native spawning against Node's spawn, measured in a process of its own (run with
// `node --import tsx`, a child of the benchmark): `rounds` rounds, each one run of /bin/true started the
// way the executor starts it (the environment it builds, a handed descriptor, the working folder as
// /proc/self/fd/3) by each spawning in turn, timed to 'close', and this process's own CPU (utime +
// stime: never the child's) over each start. `ballastMib` of touched memory makes the process as big
// as a daemon's: fork's cost grows with the caller's size, posix_spawn's does not. Prints one JSON line.
import { openSync } from 'node:fs';
import { cpuUsage } from 'node:process';
import { runEnv } from '../../main/core/exec/baseEnv';
import { nodeSpawn, spawning, type SpawnRun } from '../../main/core/exec/nativeSpawn';

const [rounds, ballastMib] = process.argv.slice(2).map(Number) as [number, number];
const ballast = Buffer.alloc(ballastMib * 2 ** 20, 1); // alloc fills it: every page is resident
const handed = openSync('/', 'r');
const env = runEnv({}, 'bench-spawn', '0'.repeat(32));

function once(how: SpawnRun): Promise<{ ms: number; cpu_ms: number }> {
  return new Promise((resolve, reject) => {
    const c0 = cpuUsage();
    const t0 = performance.now();
    const child = how('/bin/true', [], { cwd: '/proc/self/fd/3', env, fds: [handed] });
    child.on('error', reject);
    child.stdout.resume();
    child.stderr.resume();
    child.on('close', () => {
      const ms = performance.now() - t0;
      const c = cpuUsage(c0);
      resolve({ ms, cpu_ms: (c.user + c.system) / 1000 });
    });
  });
}

const native = spawning();
const out = { native_kind: native.kind, why: native.why, rss_mib: 0, native: [] as { ms: number; cpu_ms: number }[], node: [] as { ms: number; cpu_ms: number }[] };
for (let i = 0; i < rounds; i++) {
  // Alternating which goes first, so that neither always follows the other's exit.
  const order: ['native' | 'node', SpawnRun][] = [['native', native.spawn], ['node', nodeSpawn]];
  if (i % 2) order.reverse();
  for (const [name, how] of order) out[name].push(await once(how));
}
out.rss_mib = process.memoryUsage().rss / 2 ** 20;
process.stdout.write(`${JSON.stringify(out)}\n`);
void ballast.length; // held to the end: the process stays that big while it spawns
