// A file the daemon makes for the run keeper to write: a run's log in results/. The sandbox can
// rename, replace or plant anything at that name at any moment, so the daemon creates the file itself,
// anew, and names it to the keeper by its identity: on Linux as the daemon's /proc/<pid>/fd/N, which
// the kernel resolves to that very inode whatever the name now holds (the daemon holds N open until the
// keeper has opened its own); elsewhere by its path, opened without following a link. Either way the
// keeper writes only to a regular file with the inode the daemon made (a descriptor number can be
// given to something else, a name can lead elsewhere), or to nothing.
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { HAS_PROC_FD } from '../fs/linuxFd';

/** What the keeper is given (it is sent over the keeper's socket). */
export interface SharedFile {
  path: string;
  dev: number;
  ino: number;
}

/** A file the daemon made and holds open until the keeper has its own descriptor of it. */
export interface HeldFile {
  shared: SharedFile;
  close(): void;
}

/** What makeShared returns when something is at the name already (it is left as it is). */
export const TAKEN = 'taken';

const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** In the daemon: a regular file made anew at `file` (mode 0644) and held open; TAKEN when something
 *  (a link, a FIFO, a folder, a file) is at its name; null when it cannot be made there. */
export function makeShared(file: string): HeldFile | typeof TAKEN | null {
  let fd: number;
  try {
    fd = openSync(file, CREATE_NEW, 0o644);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EEXIST' ? TAKEN : null;
  }
  const st = fstatSync(fd);
  // Made just now, so a regular file with one name, unless a link to it was made meanwhile.
  if (!st.isFile() || st.nlink !== 1) {
    closeSync(fd);
    return null;
  }
  const path = HAS_PROC_FD ? `/proc/${process.pid}/fd/${fd}` : file;
  return { shared: { path, dev: st.dev, ino: st.ino }, close: () => closeSync(fd) };
}

/** In the keeper (or the daemon's own process): a descriptor open for writing on the very file the
 *  daemon made, which the caller then owns; null when it cannot be reached. Through /proc the link is
 *  the kernel's own (O_NOFOLLOW would refuse it); a name is never followed. */
export function openShared(f: SharedFile): number | null {
  let fd: number;
  try {
    fd = openSync(f.path, constants.O_WRONLY | constants.O_NONBLOCK | (HAS_PROC_FD ? 0 : constants.O_NOFOLLOW));
  } catch {
    return null;
  }
  const st = fstatSync(fd);
  if (st.isFile() && st.dev === f.dev && st.ino === f.ino) return fd;
  closeSync(fd);
  return null;
}
