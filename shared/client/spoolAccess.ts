// Whether this process can use a spool, and when it cannot, why, in words that lead to the fix. A
// sandbox that runs as another uid than the spool's owner gets EACCES everywhere; before, that read as
// "not a Dumbwaiter spool", which sends the user looking for the wrong problem.
import { accessSync, constants, lstatSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export class SpoolPermissionError extends Error {}
export class NotASpoolError extends Error {}

export function isPermissionError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code === 'EACCES' || code === 'EPERM';
}

/** The first folder on the way to `folder` (or `folder` itself) that this process may not enter. */
function blockingFolder(folder: string): string {
  const abs = path.resolve(folder);
  const parts = abs.split(path.sep).filter(Boolean);
  let at = path.parse(abs).root;
  for (const part of [...parts, null]) {
    try {
      accessSync(at, constants.X_OK);
    } catch (e) {
      if (isPermissionError(e)) return at;
    }
    if (part === null) break;
    at = path.join(at, part);
  }
  return abs;
}

/** The error for EACCES/EPERM met while using `folder` (the spool or one of its folders). */
export function permissionDenied(folder: string): SpoolPermissionError {
  const where = blockingFolder(folder);
  const uid = process.getuid?.();
  let st;
  try {
    st = lstatSync(where);
  } catch {
    return new SpoolPermissionError(`permission denied: ${where}; see docs/SANDBOX.md, "Permission denied"`);
  }
  const mode = (st.mode & 0o7777).toString(8).padStart(4, '0');
  const see = 'see docs/SANDBOX.md, "Permission denied"';
  if (uid === undefined) return new SpoolPermissionError(`permission denied: ${where} (mode ${mode}); ${see}`);
  if (uid === st.uid) {
    return new SpoolPermissionError(`permission denied: ${where} is owned by uid ${st.uid} (mode ${mode}), the uid this runs as, and its mode does not let this process in: give the owner access (chmod u+rwx); ${see}`);
  }
  return new SpoolPermissionError(
    `permission denied: ${where} is owned by uid ${st.uid} (mode ${mode}) and this runs as uid ${uid}: run the sandbox as uid ${st.uid} (docker run --user ${st.uid}:${st.gid} ...); ${see}`,
  );
}

/** Runs `fn` on a folder of the spool; a permission error becomes a SpoolPermissionError about it. */
export function inFolder<T>(folder: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (isPermissionError(e)) throw permissionDenied(folder);
    throw e;
  }
}

/** Throws unless `spool` is a spool this process can reach: "not a spool" only when it really is not one. */
export function checkSpool(spool: string): void {
  const queue = path.join(spool, 'queue');
  let isFolder = false;
  try {
    isFolder = statSync(queue).isDirectory();
  } catch (e) {
    if (isPermissionError(e)) throw permissionDenied(queue);
  }
  if (isFolder) return inFolder(queue, () => void accessSync(queue, constants.R_OK | constants.W_OK | constants.X_OK));
  let names: string[];
  try {
    names = readdirSync(spool);
  } catch (e) {
    if (isPermissionError(e)) throw permissionDenied(spool);
    throw new NotASpoolError(`${spool} is not there (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  throw new NotASpoolError(`${spool} is not a Dumbwaiter spool (no queue/ folder${names.length === 0 ? '; the folder is empty' : ''})`);
}

/** Whether a name exists in a spool folder (as anything: it is never opened). */
export function entryExists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch (e) {
    if (isPermissionError(e)) throw permissionDenied(path.dirname(file));
    return false;
  }
}
