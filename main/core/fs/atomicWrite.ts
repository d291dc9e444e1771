// Maildir-style durable replace: hidden temp file in the target folder, fsync, rename, fsync the folder.
// Readers never see a partial file, and after a crash the file is either the old or the new version.
import { closeSync, fstatSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync, constants, type BigIntStats } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

export function fsyncDir(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NONBLOCK); // never blocks on a FIFO swapped in
  } catch {
    return; // Some platforms (Windows) cannot open folders; the rename is still atomic there.
  }
  try {
    fsyncSync(fd);
  } catch {
    // EINVAL/EISDIR on filesystems that cannot sync folders: nothing more we can do.
  } finally {
    closeSync(fd);
  }
}

/** Returns what the new file is once in place (fstat of it, taken after the rename through the file
 *  written, so it is that very file whatever the name holds by then): a later look can tell whether
 *  the name still holds it, unchanged. `durable` false: no fsyncs, for a file whose loss in a power
 *  cut something else repairs (still atomic: a reader sees the old or the new version). */
export function writeFileAtomic(file: string, data: string | Buffer, mode = 0o600, durable = true): BigIntStats {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  let st: BigIntStats;
  try {
    try {
      const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
      if (durable) fsyncSync(fd);
      renameSync(tmp, file);
    } catch (e) {
      try {
        unlinkSync(tmp);
      } catch {
        /* already gone */
      }
      throw e;
    }
    st = fstatSync(fd, { bigint: true }); // after the rename, which changes the file's ctime
  } finally {
    closeSync(fd);
  }
  if (durable) fsyncDir(dir);
  return st;
}

export function writeJsonAtomic(file: string, value: unknown, mode = 0o600, durable = true): void {
  writeFileAtomic(file, JSON.stringify(value, null, 2) + '\n', mode, durable);
}
