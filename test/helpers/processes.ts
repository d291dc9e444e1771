// The processes a test starts: tracked, looked at (through /proc on Linux) and stopped. Tests stop what
// they start; the net here stops what a test could not, when its worker ends, however it ends: a normal
// exit, a lost connection to vitest, or vitest's SIGTERM after a timeout or a Ctrl-C. Also: running a
// snippet of the project's TypeScript in a child process of its own.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { groupMembers, procStat } from '../../main/core/exec/procfs';
import { groupAlive } from '../../main/core/exec/processGroup';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '../..');

// What /proc says about a process: the host's own reading (state, process group), used by tests too.
export { groupMembers, procStat };

/** The part of a leftovers note (below), as a pattern's source, that names processes it could not read (or nothing). */
export const UNREAD_NOTE = "(; \\d+ process(es)? started during the run could not be looked at in time \\(pid [\\d, ]+: reading (its|their) environment waited over [\\d.]+ s\\) and (was|were) left running: (it|they) may be the run's)?";

/**
 * What ending a run's leftovers says (exec/leftovers.ts), `ended` first, as a pattern: the search also
 * looks at every process started during the run, the other test files' too, and on a loaded machine one
 * of them may not let its environment be read within the deadline; the note then names it as well.
 */
export function leftoversNote(ended: string): RegExp {
  return new RegExp(`^${ended.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${UNREAD_NOTE}$`);
}

/**
 * Whether `pid` still runs. On Linux a killed process that its adopter has not reaped yet (a zombie)
 * does not: PID 1 may take its time to reap orphans. Elsewhere, whether it can be signalled.
 */
export function alive(pid: number): boolean {
  if (process.platform !== 'linux') {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return procStat(pid)?.running === true;
}

/** Whether a process group has a member still running (a zombie not yet reaped by its adopter is not). */
export const groupRunning = groupAlive;

/** Whether a process carries this test run's TMPDIR (test/setup/global.ts), as all it starts do. Reads
 *  its environment here: never call it on a process that keeps its memory map busy (kill that one by pid). */
function ofThisRun(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`TMPDIR=${process.env.TMPDIR}`);
  } catch {
    return false;
  }
}

/** Cleanup: SIGKILL to a process group that still has running members (never throws). On Linux only
 *  to one of this run's: a group id can be reused once its group is gone. */
export function killGroup(pgid: number): void {
  if (process.platform === 'linux') {
    const members = groupMembers(pgid);
    if (members.length === 0 || (process.env.TMPDIR && !members.some(ofThisRun))) return;
  } else if (!groupRunning(pgid)) return;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    /* gone meanwhile */
  }
}

/**
 * How to run a process without the power to override file permissions, as the host normally runs (a
 * user's desktop): as root (CI), under setpriv with those capabilities dropped; as anyone else, as it
 * is. Null where neither works (Windows, no setpriv): tests of such attacks skip, saying so.
 */
const UNPRIVILEGED = ['setpriv', '--bounding-set', '-dac_override,-dac_read_search,-fowner'];
export const AS_USER: string[] | null =
  process.platform === 'win32'
    ? null
    : process.getuid?.() !== 0
      ? []
      : spawnSync(UNPRIVILEGED[0]!, [...UNPRIVILEGED.slice(1), 'true']).status === 0
        ? UNPRIVILEGED
        : null;
export const NO_UNPRIVILEGED_USER = 'no way to run as an ordinary user here (not root with setpriv, not a plain user)';

/**
 * Starts `node --import tsx` on an ES module given as text; it may import the project's .ts files (see
 * projectFile). `shellPrefix`: sh commands run first in the same process (a ulimit, say); `wrapper`: a
 * command that runs node (setpriv, say).
 */
export function spawnTsx(code: string, opts: { shellPrefix?: string; wrapper?: string[] } = {}): ChildProcess {
  const node = [...(opts.wrapper ?? []), process.execPath, '--import', 'tsx', '--input-type=module', '-e', code];
  const [program, ...args] = opts.shellPrefix ? ['/bin/sh', '-c', `${opts.shellPrefix}; exec "$0" "$@"`, ...node] : node;
  return track(spawn(program!, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] }));
}

/** Everything a child wrote, once it has exited. */
export function outputOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** The URL of a file of the project, for imports in `spawnTsx` code. */
export function projectFile(rel: string): string {
  return pathToFileURL(path.join(ROOT, rel)).href;
}

// ------------------------------------------------------------------------------------ the net

const live = new Set<ChildProcess>();
const groups = new Set<number>();

export function track<P extends ChildProcess>(proc: P): P {
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  return proc;
}

/** A process group a test started (a run, a detached shell): killed by stopGroups() or with the worker. */
export function trackGroup(pgid: number): number {
  groups.add(pgid);
  return pgid;
}

/** Kills what is left of the tracked process groups (a test's afterEach). */
export function stopGroups(): void {
  for (const g of groups) killGroup(g);
  groups.clear();
}

/** SIGTERM to the tracked processes, not SIGKILL: a daemon then ends its runs' process groups before it
 *  exits (a killed one would leave them running), and it does so after this worker is gone. Once:
 *  vitest may stop a worker that is already ending. */
function stopAll(): void {
  for (const proc of live) proc.kill('SIGTERM');
  live.clear();
  stopGroups();
}

process.once('exit', stopAll);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  // Exit rather than re-raise: other listeners (playwright's) would keep the worker alive.
  process.once(signal, () => {
    stopAll();
    process.exit(128 + os.constants.signals[signal]);
  });
}
