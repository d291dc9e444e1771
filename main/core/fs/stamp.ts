import { statSync } from 'node:fs';

/** Changes whenever the file is edited or replaced (a cheap change check for files we poll). */
export function stampOf(file: string): string {
  try {
    const st = statSync(file);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return 'missing';
  }
}

/** The inode a stamp was taken of (null: the file was missing): another one means the file was
 *  replaced (renamed over), not written in place. */
export function inodeOf(stamp: string): string | null {
  return stamp === 'missing' || stamp === '' ? null : (stamp.split(':')[2] ?? null);
}
