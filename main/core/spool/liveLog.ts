// Reading a running request's live log (results/<id>.log) for the app. The sandbox can put anything at
// that name, so it is opened as every spool file is (safeRead: no link followed, no wait on a FIFO),
// and only a plain file is read, at most LIVE_LOG_CHUNK bytes of it.
import { closeSync, readSync } from 'node:fs';
import { logPath } from './results';
import { openSpoolFile } from './safeRead';

/** At most this much is returned per call; the app asks again from where it stopped. */
export const LIVE_LOG_CHUNK = 256 * 1024;

export interface LiveLogChunk {
  /** Text from `from` (or from the last LIVE_LOG_CHUNK bytes when the caller is that far behind). */
  text: string;
  /** Where the next call should start. */
  next: number;
  /** Bytes before `text` that were skipped. */
  skipped: number;
}

export function readLiveLog(resultsDir: string, id: string, from: number): LiveLogChunk {
  const opened = openSpoolFile(logPath(resultsDir, id));
  if (!opened.ok) return { text: '', next: from, skipped: 0 };
  const { fd, st } = opened;
  try {
    const start = Math.max(Math.min(from, st.size), st.size - LIVE_LOG_CHUNK);
    const buf = Buffer.alloc(st.size - start);
    const n = completeUtf8(buf.subarray(0, buf.length ? readSync(fd, buf, 0, buf.length, start) : 0));
    return { text: buf.subarray(0, n).toString('utf8'), next: start + n, skipped: Math.max(0, start - from) };
  } finally {
    closeSync(fd);
  }
}

/** How many bytes of `b` end on a whole UTF-8 character: a character cut by a write in progress waits for the next call. */
function completeUtf8(b: Buffer): number {
  for (let i = b.length - 1, back = 0; i >= 0 && back < 4; i--, back++) {
    const c = b[i]!;
    if ((c & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return back + 1 >= need ? b.length : i;
  }
  return b.length;
}
