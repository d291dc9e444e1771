// The working folder of an operation that names none: an empty folder private to the host's user.
// Not the home folder (~), which holds Dumbwaiter's home and usually the spool: a program that walks
// its working folder would read the keys' secrets and what the sandbox wrote.
import { lstatSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../errors';
import { chmodPrivateDir, mkdirPrivate } from '../fs/privateDir';

/** Per user: the system's temporary folder is shared on Linux. */
export const DEFAULT_CWD = path.join(os.tmpdir(), `dumbwaiter-${typeof process.getuid === 'function' ? process.getuid() : os.userInfo().username}-work`);

/** Creates the folder if it is missing (a temporary-files cleaner may have removed it), or checks it is
 *  still ours and private: another user may have made one of that name first. */
export function ensureDefaultCwd(): string {
  let isDir: boolean;
  try {
    const st = lstatSync(DEFAULT_CWD);
    if (st.isSymbolicLink() || !st.isDirectory()) throw new UserError(`${DEFAULT_CWD}, the working folder of operations without a cwd, is not a folder: remove it`);
    isDir = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    isDir = false;
  }
  if (isDir) chmodPrivateDir(DEFAULT_CWD); // refuses one owned by someone else
  else mkdirPrivate(DEFAULT_CWD);
  return DEFAULT_CWD;
}
