// One daemon per home. The lock is an exclusive SQLite lock (an OS file lock), so the kernel releases it
// when the holder dies, even by SIGKILL, and a reused pid can never keep it alive. daemon.json beside it
// says who holds it.
import os from 'node:os';
import { existsSync, lstatSync, readFileSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { UserError } from '../errors';
import { nowIso } from '../time';

export interface LockHolder {
  pid: number;
  host: string;
  user: string;
  started_at: string;
  command: string;
}

export interface HomeLock {
  release(): void;
}

function tryLock(lockFile: string): Database.Database | null {
  const db = new Database(lockFile, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    return db;
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code === 'SQLITE_BUSY') return null;
    throw e;
  }
}

export function readHolder(infoFile: string): LockHolder | null {
  try {
    return JSON.parse(readFileSync(infoFile, 'utf8')) as LockHolder;
  } catch {
    return null;
  }
}

export function describeHolder(h: LockHolder | null): string {
  return h ? `pid ${h.pid} on ${h.host}, user ${h.user}, since ${h.started_at} (${h.command})` : 'a process that did not say who it is';
}

/** `isLocked` probes (the app's status, every second) hold the lock for a moment: a start that meets
 *  one tries again for this long before it concludes that a daemon runs. */
const PROBE_PATIENCE_MS = 1000;

function lockWithPatience(lockFile: string): Database.Database | null {
  const until = Date.now() + PROBE_PATIENCE_MS;
  for (;;) {
    const db = tryLock(lockFile);
    if (db || Date.now() >= until) return db;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); // a synchronous 20 ms pause
  }
}

export function acquireHomeLock(lockFile: string, infoFile: string, command: string): HomeLock {
  const db = lockWithPatience(lockFile);
  if (!db) {
    throw new UserError(
      `another Dumbwaiter daemon already runs for this home: ${describeHolder(readHolder(infoFile))}. ` +
        'Stop it first (or quit the desktop app), or use another --home.',
      'home_locked',
    );
  }
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    /* no passwd entry */
  }
  writeJsonAtomic(infoFile, { pid: process.pid, host: os.hostname(), user, started_at: nowIso(), command } satisfies LockHolder);
  return {
    release() {
      if (existsSync(infoFile) && readHolder(infoFile)?.pid === process.pid) rmSync(infoFile, { force: true });
      db.close();
    },
  };
}

/** Runs `fn` while holding another home's lock (no file there: that home never ran a daemon), so its
 *  daemon cannot start meanwhile; refused while it runs. `who` names it in the refusal. */
export function whileStopped<T>(lockFile: string, infoFile: string, who: string, fn: () => T): T {
  const st = lstatSync(lockFile, { throwIfNoEntry: false });
  if (!st) return fn();
  if (!st.isFile()) throw new UserError(`${lockFile} is not a file: cannot tell whether ${who} runs`);
  const db = lockWithPatience(lockFile);
  if (!db) throw new UserError(`${who} runs (${describeHolder(readHolder(infoFile))}): stop it first`);
  try {
    return fn();
  } finally {
    db.close();
  }
}

/** Whether a daemon holds the lock right now (without keeping it). */
export function isLocked(lockFile: string): boolean {
  if (!existsSync(lockFile)) return false;
  const db = tryLock(lockFile);
  if (!db) return true;
  db.close();
  return false;
}
