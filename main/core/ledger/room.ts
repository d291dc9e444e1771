// Room for the host's own records. A sandbox can fill any filesystem its spool lives on, and the default
// layout puts the spools and the home (the ledger, the audit log, the logs) on one. So the host keeps a
// reserve: while the home's filesystem has less free than RESERVE_BYTES, or a write of the ledger has
// just failed for want of space or by an I/O error, it takes no new requests (they wait in queue/,
// untouched); it says why once, and takes them again by itself once a check finds room (at each tick
// of the daemon: statfs costs microseconds). Nothing here throws.
import { statfsSync } from 'node:fs';

/**
 * The reserve under which no new request is taken: 64 MiB. A request costs the ledger a few KiB (its
 * row, its audit entries, their full-text index) and the WAL may grow by its checkpoint size (4 MiB)
 * before it is folded back, so this leaves room to finish every run already started and record its end,
 * many times over, however the space was taken; yet it is small next to any disk the host runs from.
 */
export const RESERVE_BYTES = 64 * 1024 * 1024;

/** Errors of a write that failed for want of space or by the disk itself, not by a fault of ours:
 *  errno codes of the filesystem and SQLite's result codes (SQLITE_IOERR has many extended ones). */
const ERRNO = new Set(['ENOSPC', 'EDQUOT', 'EIO']);
const SQLITE = /^SQLITE_(FULL|IOERR)/;

/** The code of such an error (ENOSPC, SQLITE_FULL, ...), or null for any other. */
export function writeFailureCode(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  return ERRNO.has(code) || SQLITE.test(code) ? code : null;
}

/** Free bytes an ordinary user may still write on the filesystem of `dir` (bavail: not the blocks
 *  ext4 keeps for root), or null when it cannot be measured. */
export function freeBytes(dir: string): number | null {
  try {
    const st = statfsSync(dir);
    return Number(st.bavail) * Number(st.bsize);
  } catch {
    return null;
  }
}

export function mib(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

/** Why the host takes no new requests for want of room on the home's filesystem, or null. */
export function reserveProblem(home: string, reserve = RESERVE_BYTES): string | null {
  const free = freeBytes(home);
  if (free === null || free >= reserve) return null;
  return `the home's filesystem has ${mib(free)} free, under the ${mib(reserve)} the host keeps for its ledger: new requests wait in queue/ until space returns`;
}

export interface RoomEvents {
  /** The host stopped taking requests, and why (said once per stretch). */
  lost(problem: string): void;
  /** Room again: the host takes requests again. */
  back(was: string): void;
}

/** Whether the host may take requests now, as far as its own records go (see the top of the file). */
export class LedgerRoom {
  problem: string | null = null;
  /** A write that failed since the last check: held until a check finds room and `retry` succeeds. */
  private failure: string | null = null;

  constructor(
    /** The home's folder: its filesystem is the one measured. */
    readonly home: string,
    private readonly events: RoomEvents,
    /** Tried when room seems back after a failed write (the audit entries held back, say): true if it wrote. */
    private readonly retry: () => boolean,
    private readonly reserve = RESERVE_BYTES,
  ) {}

  get ok(): boolean {
    return this.problem === null;
  }

  /** A write of the host's records failed: true (and no requests are taken until a check finds room)
   *  when it was for want of space or an I/O error, false for any other error. */
  failed(e: unknown, what: string): boolean {
    const code = writeFailureCode(e);
    if (!code) return false;
    this.failure = `a write of the ${what} failed (${code}): new requests wait in queue/ until it succeeds again`;
    this.set(this.failure);
    return true;
  }

  /** Measures the free space again; after a failed write, tries the retry once there is room. Returns `ok`. */
  check(): boolean {
    const low = reserveProblem(this.home, this.reserve);
    if (!low && this.failure) {
      let wrote = false;
      try {
        wrote = this.retry();
      } catch (e) {
        if (!writeFailureCode(e)) throw e;
      }
      if (wrote) this.failure = null;
    }
    this.set(low ?? this.failure);
    return this.ok;
  }

  private set(problem: string | null): void {
    if (problem === this.problem) return;
    const was = this.problem;
    this.problem = problem;
    if (problem && !was) this.events.lost(problem);
    else if (!problem && was) this.events.back(was);
  }
}
