// A file the daemon names for the spawner process (a run's log in results/). The daemon reaches a
// spool's folders through descriptors it pinned (/proc/self/fd/N: spool/pinned.ts), names that lead
// nowhere, or elsewhere, in another process. So the folder is handed over as the daemon's
// /proc/<pid>/fd/N with the folder's identity, and the spawner uses what it opens there only while it
// is still that folder: a repin may have given the number to something else meanwhile.
import { closeSync, constants, fstatSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import { HAS_PROC_FD, O_PATH } from '../fs/linuxFd';

export interface SharedFile {
  dir: string;
  name: string;
  dev: number;
  ino: number;
}

/** In the daemon: `file` as the spawner can reach it; null when its folder cannot be reached now
 *  (the run then has no log, as when the log cannot be created). */
export function shareFile(file: string): SharedFile | null {
  const dir = path.dirname(file);
  try {
    const st = statSync(dir);
    return { dir: dir.replace(/^\/proc\/self\/fd\//, `/proc/${process.pid}/fd/`), name: path.basename(file), dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

/** In the spawner: the path to use for `f` until `close()`, or null when its folder is no longer the
 *  one the daemon named. */
export function openShared(f: SharedFile): { path: string; close(): void } | null {
  let fd: number;
  try {
    fd = openSync(f.dir, (HAS_PROC_FD ? O_PATH : constants.O_RDONLY) | constants.O_DIRECTORY);
  } catch {
    return null;
  }
  const st = fstatSync(fd);
  if (st.dev !== f.dev || st.ino !== f.ino) {
    closeSync(fd);
    return null;
  }
  return { path: HAS_PROC_FD ? `/proc/self/fd/${fd}/${f.name}` : path.join(f.dir, f.name), close: () => closeSync(fd) };
}
