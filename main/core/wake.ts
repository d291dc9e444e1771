// Changes made elsewhere, learnt of without polling: after a commit the daemon must act on (an approval,
// a cancel, a pause...), the command line and the app touch <home>/wake, and whoever must know watches
// the home folder for it (one watch on a private folder: the ledger's files, the settings and the lock
// are there too, for those that want them). Events are hints: the daemon's rescan tick still checks
// the ledger, for file systems without events.
import { closeSync, constants, openSync, watch, writeSync, type FSWatcher } from 'node:fs';
import path from 'node:path';

/** Tells a daemon of this home, if one runs, that something changed. Never fails the caller: the
 *  change is committed, and the daemon's next tick finds it anyway. Never blocks on a FIFO put there. */
export function wakeDaemon(wakeFile: string): void {
  try {
    const fd = openSync(wakeFile, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, '1'); // a write, so that every watcher sees a change, not only an open
    } finally {
      closeSync(fd);
    }
  } catch {
    /* a read-only home, a folder in its place: the tick's check of the ledger delivers it */
  }
}

export interface HomeWatch {
  close(): void;
}

/**
 * Calls `onChange(name)` when one of `names` (files directly in `dir`) changes, or when the system
 * does not say which file did. Null when the folder cannot be watched (no inotify watch left, say):
 * the caller's periodic check is then all there is, and `onError` says so.
 */
export function watchFiles(dir: string, names: readonly string[], onChange: (name: string | null) => void, onError: (e: Error) => void): HomeWatch | null {
  let w: FSWatcher;
  try {
    // Not persistent: a watch never keeps a process alive that has stopped everything else.
    w = watch(dir, { persistent: false });
  } catch (e) {
    onError(e as Error);
    return null;
  }
  w.on('change', (_event, name) => {
    const file = name === null ? null : path.basename(String(name));
    if (file === null || names.includes(file)) onChange(file);
  });
  w.on('error', onError);
  return { close: () => w.close() };
}
