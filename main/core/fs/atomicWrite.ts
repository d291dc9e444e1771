// Maildir-style durable replace: hidden temp file in the target folder, fsync, rename, fsync the folder.
// Readers never see a partial file, and after a crash the file is either the old or the new version.
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync, constants } from 'node:fs';
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

export function writeFileAtomic(file: string, data: string | Buffer, mode = 0o600): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  try {
    renameSync(tmp, file);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw e;
  }
  fsyncDir(dir);
}

export function writeJsonAtomic(file: string, value: unknown, mode = 0o600): void {
  writeFileAtomic(file, JSON.stringify(value, null, 2) + '\n', mode);
}
