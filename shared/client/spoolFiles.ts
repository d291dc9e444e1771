// Reading a file that anyone who can write the spool may have replaced: a FIFO (a plain open would
// block until someone writes to it), a link (to a file of the sandbox's own), a folder, a device or a
// file too large to hold. Every read opens without blocking and without following a link, takes only a
// regular file (fstat on the open descriptor, so nothing can be swapped in between) and is capped.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Caps (docs/SANDBOX.md): a result holds up to 2 x 1 MiB of output by default, far below this. */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024;
export const MAX_SPOOL_FILE_BYTES = 8 * 1024 * 1024;
/** An inbox message is a few lines of text: a cap this low keeps a flood of big files cheap to skip. */
export const MAX_MESSAGE_BYTES = 64 * 1024;
/** The live log shown as it grows: past this, only the host's signed output (a planted sparse log can be
 *  any size). The largest output an operation may keep (64 MiB) and the host's own lines past it (the
 *  limit reached, what the run left behind) fit: such a log is followed whole and checked. */
export const MAX_LIVE_LOG_BYTES = 65 * 1024 * 1024;

// O_NONBLOCK and O_NOFOLLOW do not exist on Windows, where FIFOs and links cannot be planted this way.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);

export type SpoolRead = { ok: true; data: Buffer } | { ok: false; why: 'missing' | 'not_a_file' | 'too_big' | 'denied' };

/** What an open fails with when the name is a link (ELOOP; EMLINK on BSDs) or something not to be read. */
const NOT_A_FILE = new Set(['ELOOP', 'EMLINK', 'ENXIO', 'EISDIR', 'EOPNOTSUPP', 'EFTYPE']);

function openFailure(e: unknown): SpoolRead {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  if (code === 'EACCES' || code === 'EPERM') return { ok: false, why: 'denied' };
  return { ok: false, why: NOT_A_FILE.has(code) ? 'not_a_file' : 'missing' };
}

export function readSpoolFile(file: string, maxBytes: number): SpoolRead {
  let fd: number;
  try {
    fd = openSync(file, READ_FLAGS);
  } catch (e) {
    return openFailure(e);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, why: 'not_a_file' };
    if (st.size > maxBytes) return { ok: false, why: 'too_big' };
    // The file may grow while it is read: read until its end, never more than the cap.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.alloc(Math.min(Math.max(st.size - total, 0) + 1, maxBytes + 1 - total, 1024 * 1024));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) return { ok: false, why: 'too_big' };
      chunks.push(buf.subarray(0, n));
    }
    return { ok: true, data: Buffer.concat(chunks, total) };
  } catch {
    return { ok: false, why: 'missing' }; // replaced or removed while it was read: the caller looks again
  } finally {
    closeSync(fd);
  }
}

/** One more read from an open log: from `offset`, at most `max` bytes. */
export function readAt(fd: number, offset: number, max: number): Buffer {
  const buf = Buffer.alloc(Math.min(max, 64 * 1024));
  const n = buf.length === 0 ? 0 : readSync(fd, buf, 0, buf.length, offset);
  return buf.subarray(0, n);
}

/** An open descriptor of a regular file at `file` (not followed if a link, never blocking), or null. */
export function openSpoolFile(file: string): number | null {
  let fd: number;
  try {
    fd = openSync(file, READ_FLAGS);
  } catch {
    return null;
  }
  try {
    if (fstatSync(fd).isFile()) return fd;
  } catch {
    /* below */
  }
  closeSync(fd);
  return null;
}
