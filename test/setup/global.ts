// Once around the whole run: every temporary file of the run goes into one folder (TMPDIR), which
// every worker, daemon, operation and browser inherits; at the end, a process still carrying that
// TMPDIR was started by a test and outlived it. It is killed, and the run fails naming it.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** How long a process may take to end after its parent did (esbuild's service ends when its stdin closes). */
const SETTLE_MS = 3000;

export default function setup(): () => Promise<void> {
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'dwt-'));
  process.env.TMPDIR = runDir;
  return async () => {
    const marker = `TMPDIR=${runDir}`;
    let left = survivors(marker);
    for (const end = Date.now() + SETTLE_MS; left.length > 0 && Date.now() < end; left = survivors(marker)) await new Promise((r) => setTimeout(r, 50));
    for (const { pid } of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    }
    rmSync(runDir, { recursive: true, force: true });
    if (left.length > 0) {
      process.exitCode = 1;
      throw new Error(`${left.length} process(es) started by the tests outlived them (now killed):\n${left.map((p) => `  ${p.pid}: ${p.cmdline}`).join('\n')}`);
    }
  };
}

/** Processes whose environment holds `marker`, but for vitest's own: its workers, and what a live
 *  worker or the main process runs for itself (esbuild's service). */
function survivors(marker: string): { pid: number; cmdline: string }[] {
  if (process.platform !== 'linux') return []; // no /proc to look in; the per-worker net (test/helpers/children.ts) still runs
  const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  const isVitest = (pid: number) => pid === process.pid || cmdline(pid).includes(`${path.sep}node_modules${path.sep}vitest${path.sep}`);
  const found: { pid: number; cmdline: string }[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker)) continue;
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      const cmd = cmdline(pid);
      if (cmd === '' || isVitest(pid) || isVitest(ppid)) continue; // a zombie, a worker, or a worker's own helper
      found.push({ pid, cmdline: cmd });
    } catch {
      /* gone, or not ours to read */
    }
  }
  return found;
}
