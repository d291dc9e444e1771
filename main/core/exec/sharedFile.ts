// A file the daemon makes for the run keeper to write: a run's log in results/. The sandbox can
// rename, replace or plant anything at that name at any moment, so the daemon creates the file itself,
// anew, and names it to the keeper by its identity: on Linux as the daemon's /proc/<pid>/fd/N, which
// the kernel resolves to that very inode whatever the name now holds (the daemon holds N open until the
// keeper has opened its own); elsewhere by its path, opened without following a link. Either way the
// keeper writes only to a regular file with the inode the daemon made (a descriptor number can be
// given to something else, a name can lead elsewhere), or to nothing.
import { closeSync, constants, fstatSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import { HAS_PROC_FD } from '../fs/linuxFd';

/** What the keeper is given (it is sent over the keeper's socket). */
export interface SharedFile {
  path: string;
  dev: number;
  ino: number;
  /** The folder it was made in, by plain name and identity, and its name there: how the keeper
   *  reaches it when `path` (the daemon's descriptor) went with a daemon killed before the keeper
   *  opened it. Only that very folder is entered (whatever its name now leads to), and the file's
   *  name there is never followed. */
  folder?: { name: string; dev: number; ino: number; base: string };
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
 *  (a link, a FIFO, a folder, a file) is at its name; null when it cannot be made there.
 *  `folderName`: the plain path of its folder, where `file` is reached through a descriptor of this
 *  process (a pinned folder). */
export function makeShared(file: string, folderName?: string): HeldFile | typeof TAKEN | null {
  let fd: number;
  try {
    fd = openSync(file, CREATE_NEW, 0o644);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EEXIST' ? TAKEN : null;
  }
  // Made just now (O_EXCL), so ours: the sandbox may remove or link its name from this moment on, as it
  // may at any later one, and the run writes to this very file all the same.
  const st = fstatSync(fd);
  const shared: SharedFile = { path: HAS_PROC_FD ? `/proc/${process.pid}/fd/${fd}` : file, dev: st.dev, ino: st.ino };
  if (HAS_PROC_FD && folderName) {
    try {
      const d = statSync(path.dirname(file)); // the folder as this process reaches it: pinned
      shared.folder = { name: folderName, dev: d.dev, ino: d.ino, base: path.basename(file) };
    } catch {
      /* reached through `path` alone */
    }
  }
  return { shared, close: () => closeSync(fd) };
}

/** In the keeper (or the daemon's own process): a descriptor open for writing on the very file the
 *  daemon made, which the caller then owns; null when it cannot be reached. Through /proc the link is
 *  the kernel's own (O_NOFOLLOW would refuse it); a name is never followed. The daemon's descriptor
 *  first, then the file's name in its very folder (the daemon may be gone), each held to its identity. */
export function openShared(f: SharedFile): number | null {
  const fd = theFile(tryOpen(f.path, constants.O_WRONLY | constants.O_NONBLOCK | (HAS_PROC_FD ? 0 : constants.O_NOFOLLOW)), f);
  return fd ?? (f.folder ? theFile(openInFolder(f.folder), f) : null);
}

/** `fd` when it is open on the very file, else null (and closed). */
function theFile(fd: number | null, f: SharedFile): number | null {
  if (fd === null) return null;
  const st = fstatSync(fd);
  return st.isFile() && st.dev === f.dev && st.ino === f.ino ? fd : closed(fd);
}

function tryOpen(file: string, flags: number): number | null {
  try {
    return openSync(file, flags);
  } catch {
    return null;
  }
}

function closed(fd: number): null {
  closeSync(fd);
  return null;
}

/** The file's name opened in the folder it was made in, entered only while it is that folder. */
function openInFolder(d: NonNullable<SharedFile['folder']>): number | null {
  const dfd = tryOpen(d.name, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NONBLOCK);
  if (dfd === null) return null;
  try {
    const st = fstatSync(dfd);
    if (!st.isDirectory() || st.dev !== d.dev || st.ino !== d.ino) return null;
    return tryOpen(`/proc/self/fd/${dfd}/${d.base}`, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } finally {
    closeSync(dfd);
  }
}
