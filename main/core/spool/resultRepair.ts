// Anyone who can write the spool can change or replace results/<id>.json: with an unsigned forgery, a
// file signed for another key, an older version the host signed (a replay), a FIFO, a link, a folder,
// or remove it. A client that checks signatures ignores all of that, but it then sees no answer, and
// an old client believes it. So the host looks at a bound request's result file and, when it is not
// what the host wrote, writes it again and records what it found (its kind and size, never its content).
// A look is an lstat compared with the version the daemon wrote (WrittenResults) or, by the sweep, with
// what the last sweeps proved (spool/resultsHorizon.ts: a file unchanged since they looked); only a
// file that differs is read: one of the host's size is compared with what the ledger says it must
// hold, byte for byte; of one of another size only the start is read, to say what it is.
// A writer can do that in a loop, so repairs are told within a budget (the first few a minute one by
// one, the rest counted in one audit entry per step, each step's entries in one commit), and an id
// repaired again and again within a minute is then written again only by the sweep, once a minute.
import { closeSync, fstatSync, lstatSync, readSync } from 'node:fs';
import { openHostDoc, type HostDocKey } from '../../../shared/protocol/hostAuth';
import { isFinalState } from '../../../shared/protocol/types';
import type { AuditEntry, AuditLog } from '../ledger/audit';
import type { RequestRow, Requests } from '../ledger/requests';
import type { Logger } from '../log';
import { spoolCutoff } from '../retention';
import type { SpoolPaths } from './layout';
import { resultPath, signedResultText, type ResultWriter, type WrittenResults } from './results';
import { openSpoolFile } from './safeRead';

/** Of a file not of the host's size, at most this much is read (a sparse 64 MiB file costs no more). */
export const DESCRIBE_MAX = 4096;
/** Repairs told one by one (an audit entry and a log line each) per minute; the rest are counted. */
export const TOLD_PER_MINUTE = 16;
/** Repairs of one id within a minute after which only the sweep writes it again. */
export const BACKOFF_AFTER = 4;
const MINUTE_MS = 60_000;
/** Ids named in the message of a counted entry (details has them all). */
const IDS_SHOWN = 10;

/** What made the look: the sweep, a file event, or an event saying the content changed. */
export type Look = 'sweep' | 'event' | 'change';

/** What a look ended with: the file is the host's; it was written again; it is none of this look's
 *  business (an unbound id, another spool's, removed by retention, backed off); or it could not be
 *  settled now (no key here to sign for, a write that failed, a row not written yet or moved on
 *  meanwhile), so a sweep that met it proves nothing of it. */
export type Outcome = 'host' | 'repaired' | 'none' | 'unsettled';

/** What was found: `kind` without the sizes (what counted entries group by), `text` in full. */
interface Found {
  kind: string;
  text: string;
}

interface Counted {
  id: string;
  kind: string;
  bySweep: boolean;
  backedOff: boolean;
}

export class ResultRepair {
  /** Times of each id's recent repairs (at most BACKOFF_AFTER each, pruned every minute). */
  private readonly recent = new Map<string, number[]>();
  /** Ids rewritten only by the sweep now, until a sweep finds the host's file left alone. */
  private readonly backedOff = new Set<string>();
  private told = 0;
  private pending: AuditEntry[] = [];
  private counted: Counted[] = [];
  private countedInMinute = 0;

  constructor(
    /** The pinned paths (read at each use: a repin changes them in place). */
    private readonly paths: SpoolPaths,
    private readonly requests: Requests,
    private readonly writer: ResultWriter,
    private readonly written: WrittenResults,
    private readonly signer: (keyId: string) => HostDocKey | null,
    private readonly audit: AuditLog,
    /** retention_spool_days: a finished result removed past that age is retention's doing. */
    private readonly spoolDays: () => number,
    private readonly log: Logger,
  ) {}

  /**
   * Looks at results/<id>.json and writes it again when it is not the host's. `from` 'change': a file
   * event said its content changed, so it is read even if it looks as written (a write in place within
   * the clock's tick leaves its times as they were). `unchangedBefore` (the sweep's, from
   * resultsHorizon.ts): a regular file of one name last changed before this time (ns) is the host's.
   * What was repaired is recorded at flush().
   */
  check(id: string, from: Look = 'sweep', unchangedBefore: bigint | null = null): Outcome {
    if (from !== 'sweep' && this.backedOff.has(id)) return 'none'; // said when it began
    const file = resultPath(this.paths.results, id);
    const st = lstatSync(file, { bigint: true, throwIfNoEntry: false });
    if (st && unchangedBefore !== null && from === 'sweep' && st.isFile() && st.nlink === 1n && st.ctimeNs < unchangedBefore) {
      this.written.forget(id); // the horizon says it from now on: nothing kept per file
      return this.leftAlone(id, from);
    }
    if (st && from !== 'change' && this.written.matches(id, st)) return this.leftAlone(id, from);
    // The file's name is the id as this spool's sandbox gave it: another spool's request of that id
    // is none of this spool's business (its sandbox must not get it).
    const row = this.requests.bound(this.spool, id);
    // Unbound: the host's own unsigned refusals, or anything named like one; no key to sign for.
    if (!row) {
      this.written.forget(id);
      this.backedOff.delete(id);
      return 'none';
    }
    // Its latest state is not in the file yet: whoever made it writes it (or repairAll does).
    if (!this.requests.isSynced(row)) return 'unsettled';
    if (!st) {
      this.written.forget(id);
      // Retention removes a finished result of that age (it may have); any other removal is undone.
      if (isFinalState(row.state) && Date.parse(row.updated_at) < spoolCutoff(this.spoolDays())) return 'none';
    }
    const key = this.signer(row.key_id);
    if (!key) return 'unsettled'; // sealed for another process (the app's daemon), which looks itself
    const expected = Buffer.from(signedResultText(row, key), 'utf8');
    const found = st ? this.differs(id, file, expected, key, from) : { kind: 'was removed', text: 'was removed' };
    if (found === null) return this.leftAlone(id, from);
    // Another process (the command line) may have moved the request on and written it meanwhile.
    const now = this.requests.get(row.id);
    if (!now || now.version !== row.version || !this.requests.isSynced(now)) return 'unsettled';
    if (!this.writer.publish(now)) return 'unsettled'; // retried at the next look: the file is still not ours
    this.repaired(now, found, from);
    return 'repaired';
  }

  /** Whether a file is written again only by the sweep now (it then comes every minute). */
  get backingOff(): boolean {
    return this.backedOff.size > 0;
  }

  get spool(): string {
    return this.writer.spool;
  }

  /** End of a step: what it repaired, in one commit. */
  flush(): void {
    const entries = this.pending;
    if (this.counted.length) entries.push(this.summary(this.counted));
    this.pending = [];
    this.counted = [];
    this.audit.recordAll(entries);
  }

  /** Once a minute: one log line for what was only counted; the budget starts again. */
  endMinute(): void {
    this.flush();
    if (this.countedInMinute) this.log.warn(`${this.countedInMinute} more result files were not the host's and were written again (counted in the audit log)`);
    this.told = this.countedInMinute = 0;
    const since = Date.now() - MINUTE_MS;
    for (const [id, times] of this.recent) if (times[times.length - 1]! < since) this.recent.delete(id);
  }

  /** The host's file, as it wrote it: a sweep that finds it so ends a back-off. */
  private leftAlone(id: string, from: Look): 'host' {
    if (from === 'sweep' && this.backedOff.delete(id)) {
      this.recent.delete(id);
      this.log.info(`results/${id}.json was left alone since the last sweep; file events on it are looked at again`);
    }
    return 'host';
  }

  private repaired(row: RequestRow, found: Found, from: Look): void {
    const now = Date.now();
    const file = row.wire_id; // the file's name, as check() was given it; the records name the host's handle
    const times = (this.recent.get(file) ?? []).filter((t) => t >= now - MINUTE_MS).slice(-(BACKOFF_AFTER - 1));
    times.push(now);
    this.recent.set(file, times);
    const backsOff = times.length >= BACKOFF_AFTER && !this.backedOff.has(file);
    if (backsOff) this.backedOff.add(file);
    if (this.told >= TOLD_PER_MINUTE) {
      this.counted.push({ id: row.id, kind: found.kind, bySweep: from === 'sweep', backedOff: backsOff });
      this.countedInMinute++;
      return;
    }
    this.told++;
    const backOff = backsOff ? `; it was not the host's ${BACKOFF_AFTER} times within a minute, so from now on only the sweep writes it again (once a minute) until it is left alone` : '';
    const message = `results/${file}.json ${found.text}; the host wrote its result again${backOff}`;
    this.log.warn(`${row.id}: ${message}`);
    this.pending.push({
      kind: 'result_repaired',
      request_id: row.id,
      key_id: row.key_id,
      op: row.op,
      message,
      details: { found: found.text, seen_by: from === 'sweep' ? 'sweep' : 'event', ...(backsOff ? { backed_off: true } : {}) },
    });
  }

  /** One entry for the repairs only counted in a step: how many of each kind, which ids (seen by a file
   *  event or by the sweep), and which of them are now written again only by the sweep. */
  private summary(cs: Counted[]): AuditEntry {
    const kinds: Record<string, number> = {};
    for (const c of cs) kinds[c.kind] = (kinds[c.kind] ?? 0) + 1;
    const ids = [...new Set(cs.map((c) => c.id))];
    const backedOff = cs.filter((c) => c.backedOff).map((c) => c.id);
    const shown = (list: string[]) => list.slice(0, IDS_SHOWN).join(', ') + (list.length > IDS_SHOWN ? ', ...' : '');
    const what = Object.entries(kinds).map(([kind, n]) => `${n} ${kind}`).join('; ');
    const backOff = backedOff.length ? `; from now on only the sweep writes these again (once a minute): ${shown(backedOff)}` : '';
    return {
      kind: 'result_repaired',
      message: `${cs.length} more result files were not the host's and were written again (${what}): ${shown(ids)}${backOff}`,
      details: {
        count: cs.length,
        kinds,
        by_event: cs.filter((c) => !c.bySweep).map((c) => c.id),
        by_sweep: cs.filter((c) => c.bySweep).map((c) => c.id),
        backed_off: backedOff,
      },
    };
  }

  /** Null when the file holds exactly `expected` (its version is then remembered); else what it is. */
  private differs(id: string, file: string, expected: Buffer, key: HostDocKey, from: Look): Found | null {
    const opened = openSpoolFile(file);
    if (!opened.ok) {
      const kind = opened.reason.replace(/^is /, 'was '); // "was a FIFO", "was a symbolic link", "was a folder"...
      return { kind, text: kind };
    }
    const { fd } = opened;
    try {
      const st = fstatSync(fd, { bigint: true });
      // The host's size: compared in full (no more than the host wrote); another: its start says what it is.
      const limit = st.size === BigInt(expected.length) ? expected.length : Math.min(Number(st.size), DESCRIBE_MAX);
      const bytes = readAtMost(fd, limit + 1);
      const links = st.nlink > 1n ? `, ${st.nlink} names (hard links)` : '';
      const size = `(${st.size} bytes${links})`;
      if (bytes.equals(expected)) {
        // Right, but another name for it would let it be changed later, unseen by a look at this name.
        if (links) return { kind: "was the host's file with another name", text: `was the host's file with another name ${size}` };
        // Written by another process (the command line), or before a restart: kept for the next event's
        // look. Not from a sweep: the next sweep's horizon covers what it found, and a host with many
        // results would hold a version of each meanwhile (100,000 files: tens of MiB).
        if (from !== 'sweep') this.written.set(id, st);
        return null;
      }
      const kind = `was ${describe(bytes, key, BigInt(bytes.length) === st.size)}`;
      return { kind, text: `${kind} ${size}` };
    } catch (e) {
      const kind = `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
      return { kind, text: kind };
    } finally {
      closeSync(fd);
    }
  }
}

/** The first `max` bytes (fewer if the file is shorter). */
function readAtMost(fd: number, max: number): Buffer {
  const buf = Buffer.alloc(max);
  let n = 0;
  for (let r; n < buf.length && (r = readSync(fd, buf, n, buf.length - n, n)) > 0; ) n += r;
  return buf.subarray(0, n);
}

/** What kind of file it was, by its signature alone (the key id is of the protocol's safe characters).
 *  `whole`: all of it was read; else only its start, which says who it claims to be signed for. */
function describe(bytes: Buffer, key: HostDocKey, whole: boolean): string {
  const opened = openHostDoc('result', bytes.toString('utf8'), key);
  if (opened.ok) return 'another version the host signed for this key (a replay)';
  if (opened.why === 'unsigned') return 'an unsigned file';
  if (opened.why === 'other_key') return `a file signed for another key, ${opened.keyId}`;
  if (!whole) return `a file marked as signed for this key, not of the host's size (only its first ${DESCRIBE_MAX} bytes were read)`;
  return 'a file whose signature does not match';
}
