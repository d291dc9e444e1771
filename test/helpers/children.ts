// Every process a test starts is tracked here and stopped when the test worker ends, however it ends:
// a normal exit, a lost connection to vitest, or vitest's SIGTERM after a timeout or a Ctrl-C. Tests
// still stop what they start; this is the net under a test that failed before it could.
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();

export function track<P extends ChildProcess>(proc: P): P {
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  return proc;
}

/** SIGTERM, not SIGKILL: a daemon then ends its runs' process groups before it exits (a killed one
 *  would leave them running), and it does so after this worker is gone. */
function killAll(): void {
  for (const proc of live) proc.kill('SIGTERM');
  live.clear(); // once: vitest may stop a worker that is already ending
}

process.once('exit', killAll);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal); // the handler is gone: the signal now ends the worker as it would have
  });
}
