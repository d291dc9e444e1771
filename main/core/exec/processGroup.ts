// Signals to a run's whole process group: the child was started detached, so it leads its own group
// and everything it spawned goes down with it (unless it left the group: see leftovers.ts).
import { spawnSync } from 'node:child_process';
import { HAS_PROC, groupExists, groupMembers } from './procfs';

export function signalGroup(pid: number, signal: 'SIGTERM' | 'SIGKILL'): void {
  if (process.platform === 'win32') {
    spawnSync('taskkill', ['/pid', String(pid), '/T', ...(signal === 'SIGKILL' ? ['/F'] : [])], { windowsHide: true });
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** Whether a member of the group still runs. On Linux a zombie (ended, its parent has not reaped it
 *  yet) does not; elsewhere the group can only be asked whether it can be signalled, zombies included. */
export function groupAlive(pid: number): boolean {
  if (HAS_PROC) return groupMembers(pid).length > 0;
  if (process.platform !== 'win32') return groupExists(pid);
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
