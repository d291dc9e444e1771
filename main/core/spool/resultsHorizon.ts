// What a sweep over a spool's result files proved, kept in the ledger so that the next sweep (in this
// process or after a restart) reads only what changed since. A sweep that began at time S and looked
// at a file found it the host's at that look; any later change to the file, a rename of another over
// it or another name for it sets its change time (ctime) to the moment of the change, which no user
// can set back. So a regular file of one name whose ctime is older than S is still as the sweep found
// it: the host's. That holds as long as it is the same folder (a replaced results/ holds files the
// sweep never saw) and the clock did not step back since S (then a change made after S could carry an
// older time): both are checked before the record is trusted, and across a reboot it is not.
// The record holds the last complete sweep's S and, for a sweep under way, its own S and the last
// request (ledger rowid) it got through: a sweep cut short by a stop is taken up where it was.
import { readFileSync, statSync } from 'node:fs';
import type { HostFlags } from '../ledger/meta';

/** A change made just after S may carry a time a little before it (file times come from a coarse
 *  clock): a horizon is set this much before the sweep began. */
const MARGIN_NS = 1_000_000_000n;
/** How far back the wall clock may be found against the monotonic clock before a record is dropped
 *  (both are slewed alike by time adjustments; only a step moves one against the other). */
const CLOCK_STEP_MS = 1000;

/** A time before which a regular file of one name in the folder is the host's. */
export interface Horizon {
  before_ns: bigint;
  /** The wall clock minus the monotonic one when it was taken (see clockStepped). */
  offset_ms: number;
}

export interface HorizonRecord {
  /** The results/ folder the sweeps looked at (its device and inode). */
  folder: string;
  /** This boot's id: the monotonic clock starts again at each boot. */
  boot: string;
  /** The last complete sweep's, or null. */
  complete: Horizon | null;
  /** A sweep under way: its horizon, for the requests up to `through` (ledger rowids). */
  current: (Horizon & { through: number }) | null;
}

function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null; // not Linux: no record is trusted across processes (each start compares once)
  }
}

const BOOT = bootId();

function clockOffsetMs(): number {
  return Date.now() - Number(process.hrtime.bigint() / 1_000_000n);
}

/** A horizon for a sweep beginning now. */
export function horizonNow(): Horizon {
  return { before_ns: BigInt(Date.now()) * 1_000_000n - MARGIN_NS, offset_ms: clockOffsetMs() };
}

/** Whether the wall clock stepped back since `h` was taken: changes since may carry older times. */
function clockStepped(h: Horizon): boolean {
  return clockOffsetMs() < h.offset_ms - CLOCK_STEP_MS;
}

/** The folder's identity (device and inode), or null when it cannot be stat'ed. */
export function folderIdentity(dir: string): string | null {
  try {
    const st = statSync(dir, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/** What of `r` can be trusted now for `folder`: a horizon whose clock stepped back is dropped. */
export function trusted(r: HorizonRecord | null, folder: string | null): HorizonRecord | null {
  if (!r || BOOT === null || folder === null || r.folder !== folder || r.boot !== BOOT) return null;
  const complete = r.complete && !clockStepped(r.complete) ? r.complete : null;
  const current = r.current && !clockStepped(r.current) ? r.current : null;
  return complete || current ? { ...r, complete, current } : null;
}

/** A new record for `folder` (none of its files trusted yet). */
export function emptyRecord(folder: string): HorizonRecord {
  return { folder, boot: BOOT ?? '', complete: null, current: null };
}

/** The ctime before which a result of request `rowid` is the host's, or null (it must be compared). */
export function trustedBefore(r: HorizonRecord | null, rowid: number): bigint | null {
  if (!r) return null;
  if (r.current && rowid <= r.current.through) return r.current.before_ns;
  return r.complete?.before_ns ?? null;
}

/** The ledger's copy of a spool's record (HostFlags). */
export class HorizonStore {
  constructor(
    private readonly flags: HostFlags,
    private readonly spool: string,
  ) {}

  load(): HorizonRecord | null {
    const v = this.flags.resultsHorizon(this.spool);
    if (!v) return null;
    try {
      const j = JSON.parse(v) as { folder: string; boot: string; complete: { before_ns: string; offset_ms: number } | null; current: { before_ns: string; offset_ms: number; through: number } | null };
      const h = <T extends { before_ns: string }>(x: T | null) => (x ? { ...x, before_ns: BigInt(x.before_ns) } : null);
      return { folder: j.folder, boot: j.boot, complete: h(j.complete), current: h(j.current) };
    } catch {
      return null; // unreadable: every file is compared once
    }
  }

  save(r: HorizonRecord | null): void {
    this.flags.setResultsHorizon(this.spool, r ? JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) : null);
  }
}
