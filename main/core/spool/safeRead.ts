// Reading a file inside the spool, where the sandbox can put anything under any name at any moment:
// a FIFO (a plain open for reading waits for a writer for ever, and would freeze the app's main
// process with the daemon in it), a symlink to a host file, a folder, a device (opening one can have
// effects: a tape rewinds), a file of gigabytes, a file it holds a lease on (an open waits up to
// lease-break-time). So every such read:
//  - looks first without opening or following anything, and opens for reading only a regular file.
//    On Linux the look is an O_PATH|O_NOFOLLOW handle on the object itself (fstat of it), and the
//    reopen goes through /proc/self/fd/N, which reaches that very inode whatever the name holds by
//    then: a FIFO or device swapped in after the look is never opened. Elsewhere the look is lstat,
//    then the name is opened and checked again (fstat);
//  - opens for reading with O_NONBLOCK (a leased file answers at once instead of waiting; a FIFO
//    swapped in where there is no O_PATH too) and O_NOCTTY (a terminal never becomes ours), by name
//    also with O_NOFOLLOW (a link swapped in meanwhile fails with ELOOP);
//  - reads at most the cap plus one byte, so a file that grows while read is caught, not swallowed.
// A read of a regular file does not block on local disks; that is the one wait left (see
// docs/SECURITY.md, "Reading files inside the spool"). Windows has no O_NOFOLLOW: there the lstat
// alone refuses a link, and a swap between the lstat and the open is not caught.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { HAS_PROC_FD, O_PATH } from '../fs/linuxFd';

const READ = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

export interface Refused {
  ok: false;
  reason: string;
}
export type SafeRead = { ok: true; bytes: Buffer } | Refused;
export type SafeOpen = { ok: true; fd: number; st: Stats } | Refused;

/** Why something of this kind is never read from the spool, or null for a regular file. */
export function kindReason(st: Stats): string | null {
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (st.isFIFO()) return 'is a FIFO';
  if (st.isDirectory()) return 'is a folder';
  if (st.isSocket()) return 'is a socket';
  if (st.isBlockDevice() || st.isCharacterDevice()) return 'is a device';
  if (!st.isFile()) return 'is not a regular file';
  return null;
}

/** `refuse`: a caller's own reasons to refuse a regular file (hard links, say), checked on both stats. */
type Refuse = (st: Stats) => string | null;

function whyNot(st: Stats, refuse?: Refuse): string | null {
  return kindReason(st) ?? refuse?.(st) ?? null;
}

/**
 * Opens a regular file without following a link or waiting. On success the caller owns `fd` and
 * closes it; otherwise `reason` says why not ("is a FIFO", "is a symbolic link"...).
 */
export function openSpoolFile(file: string | Buffer, refuse?: Refuse): SafeOpen {
  return HAS_PROC_FD ? openThroughHandle(file, refuse) : openByName(file, refuse);
}

/** Linux: the object looked at is the object opened; nothing but a regular file is ever opened to be read. */
function openThroughHandle(file: string | Buffer, refuse?: Refuse): SafeOpen {
  let handle: number;
  try {
    // With O_NOFOLLOW, O_PATH on a link gives a handle on the link itself: refused by its kind below.
    handle = openSync(file, O_PATH | NOFOLLOW);
  } catch (e) {
    return refusedBy(e);
  }
  try {
    const looked = fstatSync(handle);
    const early = whyNot(looked, refuse);
    if (early) return { ok: false, reason: early };
    return checkOpened(openSync(`/proc/self/fd/${handle}`, READ), refuse, looked);
  } catch (e) {
    return refusedBy(e);
  } finally {
    closeSync(handle);
  }
}

/** Where there is no O_PATH: a look by name, then an open by name that may meet something swapped in. */
function openByName(file: string | Buffer, refuse?: Refuse): SafeOpen {
  let before: Stats;
  try {
    before = lstatSync(file);
  } catch (e) {
    return refusedBy(e);
  }
  const early = whyNot(before, refuse);
  if (early) return { ok: false, reason: early };
  try {
    return checkOpened(openSync(file, READ | NOFOLLOW), refuse, null);
  } catch (e) {
    return refusedBy(e);
  }
}

/** Checks what `fd` is (closing it unless it is handed over); `looked`: the inode it must be. */
function checkOpened(fd: number, refuse: Refuse | undefined, looked: Stats | null): SafeOpen {
  try {
    const st = fstatSync(fd);
    // Through /proc/self/fd/N this cannot differ; checked so a kernel that resolved it otherwise is not trusted.
    const why = whyNot(st, refuse) ?? (looked && (st.dev !== looked.dev || st.ino !== looked.ino) ? 'was replaced while it was opened' : null);
    if (why) {
      closeSync(fd);
      return { ok: false, reason: why };
    }
    return { ok: true, fd, st };
  } catch (e) {
    closeSync(fd);
    return refusedBy(e);
  }
}

/** The whole file, when it is a regular file of at most `maxBytes`. Never throws for what is found. */
export function readSpoolFile(file: string | Buffer, maxBytes: number, refuse?: Refuse): SafeRead {
  const opened = openSpoolFile(file, refuse);
  if (!opened.ok) return opened;
  const { fd, st } = opened;
  try {
    if (st.size > maxBytes) return { ok: false, reason: `is ${st.size} bytes, over the limit of ${maxBytes}` };
    const buf = Buffer.alloc(maxBytes + 1);
    let n = 0;
    for (;;) {
      const r = readSync(fd, buf, n, buf.length - n, null);
      if (r === 0) break;
      n += r;
      if (n > maxBytes) return { ok: false, reason: `grew past the limit of ${maxBytes} bytes` };
    }
    return { ok: true, bytes: buf.subarray(0, n) };
  } catch (e) {
    return { ok: false, reason: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  } finally {
    closeSync(fd);
  }
}

/** A JSON file: its parsed value, or why it could not be read or parsed. */
export function readSpoolJson(file: string, maxBytes: number): { ok: true; value: unknown } | Refused {
  const r = readSpoolFile(file, maxBytes);
  if (!r.ok) return r;
  try {
    return { ok: true, value: JSON.parse(r.bytes.toString('utf8')) };
  } catch {
    return { ok: false, reason: 'is not valid JSON' };
  }
}

const MISSING = 'cannot be opened (ENOENT)';

/** Whether nothing at all is there (not written yet, say), as opposed to something unreadable. */
export function isMissing(r: Refused): boolean {
  return r.reason === MISSING;
}

function refusedBy(e: unknown): Refused {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return { ok: false, reason: 'is a symbolic link' };
  if (code === 'EWOULDBLOCK' || code === 'EAGAIN') return { ok: false, reason: 'is leased by another process' };
  return { ok: false, reason: `cannot be opened (${code ?? (e as Error).message})` };
}
