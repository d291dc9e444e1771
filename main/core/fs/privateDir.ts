// Folders private to the host's user (0700). The mode is set through a descriptor opened without
// following links, never by path: between a mkdir and a chmod by path, whoever can write the parent
// (the sandbox, inside the spool) could put a symlink there and have the host chmod what it points to.
import { closeSync, constants, existsSync, fchmodSync, fstatSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors';

/** Where modes mean nothing (Windows) there is nothing to set. */
const HAS_MODES = process.platform !== 'win32';

/** Sets `dir` to 0700: only when the path names a real folder owned by us, else a UserError saying why. */
export function chmodPrivateDir(dir: string): void {
  if (!HAS_MODES) return;
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR') throw new UserError(`${dir} is not a folder (it was replaced, e.g. by a symbolic link): refusing to change its permissions`);
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
      throw new UserError(`${dir} is owned by uid ${st.uid}, not by you (uid ${process.getuid()}): refusing to change its permissions`);
    }
    fchmodSync(fd, 0o700); // mkdir's mode is filtered by the umask
  } finally {
    closeSync(fd);
  }
}

/** `mkdir -p`, one folder at a time: Node's recursive mkdir loops for ever where a parent exists but
 *  the folder cannot be made there (ENOENT under /proc), and the command line would hang. */
export function mkdirParents(dir: string): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !existsSync(d) && d !== path.dirname(d); d = path.dirname(d)) missing.unshift(d);
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/** Creates `dir` (and with `parents` its missing parents, left as the umask makes them), private. */
export function mkdirPrivate(dir: string, parents = false): void {
  if (parents) mkdirParents(path.dirname(dir));
  mkdirSync(dir, { mode: 0o700 });
  chmodPrivateDir(dir);
}
