// Once around the whole run: every temporary file of the run goes into one folder (TMPDIR), which
// every worker, daemon, operation and browser inherits; at the end, a process still carrying that
// TMPDIR was started by a test and outlived it. It is killed, and the run fails naming it.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildHost } from '../../scripts/build-host.mjs';

/** How long the workers may take to end (vitest stops them as the run ends, without waiting for them),
 *  and then what they leave stopping: esbuild's service ends when its stdin closes, a daemon stopped by
 *  a worker's net ends its runs first (the tests' shutdown grace, 2 s, then the kill grace, 1 s), and
 *  its run keeper leaves after it. Five times that: on a loaded machine 6 s was seen to be too short,
 *  and a run whose helpers end sooner waits no longer than they take. */
const WORKERS_MS = 10_000;
const HELPERS_MS = 15_000;

export default async function setup(): Promise<() => Promise<void>> {
  clearInterruptedRuns();
  // The host the tests run (with its fault points), and the product's (bin/dumbwaiter.js, built fresh so
  // that no test's command rebuilds it meanwhile).
  await Promise.all([buildHost({ faults: true }), buildHost()]);
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'dwt-'));
  writeFileSync(path.join(runDir, OWNER), String(process.pid));
  process.env.TMPDIR = runDir;
  return async () => {
    const marker = `TMPDIR=${runDir}`;
    const workersEnd = Date.now() + WORKERS_MS;
    let helpersEnd = Infinity;
    let found = carrying(marker);
    while (found.length > 0 && Date.now() < Math.min(workersEnd, helpersEnd)) {
      if (!found.some((p) => p.worker)) helpersEnd = Math.min(helpersEnd, Date.now() + HELPERS_MS);
      await new Promise((r) => setTimeout(r, 50));
      found = carrying(marker);
    }
    const left = found.filter((p) => !p.worker);
    for (const { pid } of left) kill(pid);
    rmSync(runDir, { recursive: true, force: true });
    if (left.length > 0) {
      process.exitCode = 1;
      throw new Error(`${left.length} process(es) started by the tests outlived them (now killed):\n${left.map((p) => `  ${p.pid}: ${p.cmdline}`).join('\n')}`);
    }
  };
}

const OWNER = '.vitest-pid';

/** A run interrupted (Ctrl-C stops vitest before this teardown) leaves its folder, and whatever the
 *  workers' net could not stop: both go at the next run's start, which says so. */
function clearInterruptedRuns(): void {
  for (const name of readdirSync(os.tmpdir()).filter((n) => n.startsWith('dwt-'))) {
    const dir = path.join(os.tmpdir(), name);
    let owner = 0;
    try {
      owner = Number(readFileSync(path.join(dir, OWNER), 'utf8'));
    } catch {
      continue; // not (yet) a run's folder
    }
    if (isVitest(owner)) continue; // that run is still going
    const left = carrying(`TMPDIR=${dir}`).filter((p) => !p.worker);
    for (const { pid } of left) kill(pid);
    if (left.length > 0) console.warn(`An interrupted test run left ${left.length} process(es); killed:\n${left.map((p) => `  ${p.pid}: ${p.cmdline}`).join('\n')}`);
    rmSync(dir, { recursive: true, force: true });
  }
}

function isVitest(pid: number): boolean {
  try {
    if (process.platform !== 'linux') return process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('vitest');
  } catch {
    return false;
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone meanwhile */
  }
}

/** The live processes whose environment holds `marker` (Linux: /proc), vitest's workers marked. */
function carrying(marker: string): { pid: number; cmdline: string; worker: boolean }[] {
  if (process.platform !== 'linux') return []; // no /proc to look in; the workers' net (test/helpers/processes.ts) still runs
  const found: { pid: number; cmdline: string; worker: boolean }[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker)) continue;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (cmdline === '') continue; // a zombie
      found.push({ pid, cmdline, worker: cmdline.includes(`${path.sep}node_modules${path.sep}vitest${path.sep}`) });
    } catch {
      /* gone, or not ours to read */
    }
  }
  return found;
}
