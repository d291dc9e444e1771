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
