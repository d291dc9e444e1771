// Taking requests out of queue/: every entry is checked with lstat (never followed), then either
// claimed by an atomic rename into claimed/ or moved out of the way into quarantine/.
import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, opendirSync, openSync, renameSync, type Stats } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isInProgressName, requestIdFromFileName } from '../../../shared/protocol/ids';
import { MAX_REQUEST_BYTES } from '../../../shared/protocol/types';
import type { SpoolPaths } from './layout';
import { kindReason, readSpoolFile, type SafeRead } from './safeRead';
import { HAS_PROC_FD, O_PATH } from '../fs/linuxFd';

export type Claim =
  | { kind: 'claimed'; id: string; file: string }
  | { kind: 'refused'; name: string; id: string | null; reason: string; movedTo: string | null }
  | { kind: 'gone' };

/** A folder entry: its name as raw bytes (any bytes are legal on Linux) and as text, for messages. */
export interface Entry {
  raw: Buffer;
  name: string;
}

/** Entries of a spool folder that are ready to look at, sorted by name; in-progress writes are skipped.
 *  Read as bytes: a name that is not valid UTF-8 must still be found again, to be moved away. */
export function readyEntries(dir: string): Entry[] {
  return firstEntries(dir, Infinity).entries;
}

const byName = (a: Entry, b: Entry) => Buffer.compare(a.raw, b.raw);

/**
 * The first `limit` ready entries by name, as readyEntries, holding no more than twice that many at
 * once however many the folder has (the sandbox can fill queue/ with millions). `more`: some were left.
 */
export function firstEntries(dir: string, limit: number): { entries: Entry[]; more: boolean } {
  // Names as bytes: Node supports 'buffer' here, but its types do not say so.
  const d = opendirSync(dir, { encoding: 'buffer' as BufferEncoding, bufferSize: 1024 });
  let kept: Entry[] = [];
  let more = false;
  try {
    for (let de = d.readSync(); de !== null; de = d.readSync()) {
      const raw = de.name as unknown as Buffer;
      const name = raw.toString('utf8');
      if (isInProgressName(name)) continue;
      kept.push({ raw, name });
      if (kept.length >= 2 * limit) {
        kept = kept.sort(byName).slice(0, limit);
        more = true;
      }
    }
  } finally {
    d.closeSync();
  }
  kept.sort(byName);
  if (kept.length > limit) {
    kept = kept.slice(0, limit);
    more = true;
  }
  return { entries: kept, more };
}

export function entryPath(dir: string, e: Entry): Buffer {
  return Buffer.concat([Buffer.from(dir + path.sep), e.raw]);
}

/** Why this entry may not be read as a request, or null when it may. */
export function refusalReason(st: Stats): string | null {
  const kind = kindReason(st);
  if (kind) return kind;
  if (st.nlink > 1) return `is a hard link (${st.nlink} names)`;
  if (st.size > MAX_REQUEST_BYTES) return `is ${st.size} bytes, over the limit of ${MAX_REQUEST_BYTES}`;
  return null;
}

function quarantineName(name: string): string {
  const safe = encodeURIComponent(name).slice(0, 120);
  return `${new Date().toISOString().replace(/[:.]/g, '')}-${randomBytes(3).toString('hex')}-${safe}`;
}

/** Moves an entry (of any type, without following it) into quarantine/. Null when it vanished. */
export function quarantine(paths: SpoolPaths, from: string | Buffer, name: string): string | null {
  const to = path.join(paths.quarantine, quarantineName(name));
  try {
    renameSync(from, to);
    return to;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    // Moving a folder needs write permission on it (its ".." changes); grant it through an fd opened
    // without following links, so a symlink swapped in meanwhile is never chmod-ed.
    if (code === 'EACCES' && makeMovable(from)) return quarantine(paths, from, name);
    throw e;
  }
}

function makeMovable(dir: string | Buffer): boolean {
  // O_PATH where /proc/self/fd exists (it needs no read permission on a folder the sandbox made mode
  // 000): chmod through /proc/self/fd/N then reaches that very inode (the fd never followed a link);
  // elsewhere an ordinary fd, which a folder we may not read refuses.
  const viaPath = HAS_PROC_FD;
  let fd: number;
  try {
    fd = openSync(dir, (viaPath ? O_PATH : constants.O_RDONLY) | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    return false;
  }
  try {
    if ((fstatSync(fd).mode & 0o200) !== 0) return false;
    if (viaPath) chmodSync(`/proc/self/fd/${fd}`, 0o700);
    else fchmodSync(fd, 0o700);
    return true;
  } finally {
    closeSync(fd);
  }
}

/**
 * Claims one queue entry into `claimedDir` (this host's own folder under claimed/, so that a host
 * recovering its claims after a crash never takes another host's in-flight claim on a shared spool).
 */
export function claim(paths: SpoolPaths, entry: Entry, claimedDir: string): Claim {
  const { name } = entry;
  const from = entryPath(paths.queue, entry);
  let st: Stats;
  try {
    st = lstatSync(from);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone' };
    throw e;
  }
  const id = requestIdFromFileName(name);
  const reason = id === null ? 'has a name that is not <id>.json with a valid id' : refusalReason(st);
  if (reason) {
    const movedTo = quarantine(paths, from, name);
    return movedTo === null && id !== null ? { kind: 'gone' } : { kind: 'refused', name, id, reason, movedTo };
  }
  const file = path.join(claimedDir, name);
  try {
    renameSync(from, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone' }; // another host took it
    throw e;
  }
  return { kind: 'claimed', id: id!, file };
}

export type { SafeRead } from './safeRead';

/**
 * Reads a claimed file without following links or blocking on a FIFO, and checks again what it is:
 * the sandbox can still swap the entry between our lstat and our open.
 */
export function readClaimed(file: string): SafeRead {
  return readSpoolFile(file, MAX_REQUEST_BYTES, refusalReason);
}
