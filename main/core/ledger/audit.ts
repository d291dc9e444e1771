// The audit log: an append-only table with a full-text index, searched by `dumbwaiter audit`. The index
// is written in batches, at most a second after an entry and before each search that uses it: one
// entry at a time it cost a quarter of a request's ledger work (its segment written at each commit).
import os from 'node:os';
import { commitUnsynced, type Db } from './db';
import type { AuditView } from '../../../shared/ipc/views';
import { nowIso } from '../time';
import type { AuditKind } from '../../../shared/audit/kinds';
import { writeFailureCode } from './room';
import { REQUESTS_SQL } from './requests';

export interface AuditEntry {
  kind: AuditKind;
  message: string;
  actor?: string;
  request_id?: string | null;
  key_id?: string | null;
  op?: string | null;
  /** The spool it concerns; by default the spool of its request, else of its key. */
  spool?: string | null;
  details?: Record<string, unknown>;
}

/** One entry as stored and as shown (the app receives exactly this over IPC). */
export type AuditRow = AuditView;

export interface AuditQuery {
  text?: string;
  kind?: string;
  requestId?: string;
  limit?: number;
  /** Only entries with seq below this (paging backwards from the newest). */
  before?: number;
  op?: string;
  keyId?: string;
  spool?: string;
  /** Only entries of requests now in this state. */
  state?: string;
  /** ISO times: entries at or after `since`, before `until`. */
  since?: string;
  until?: string;
}

/** Who did it, for entries made from the command line. */
export function cliActor(): string {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    /* no passwd entry */
  }
  return `cli:${user}`;
}

/** Every word becomes a quoted prefix phrase, so ids like `req-0001` and codes like `bad_args` match
 *  and no user input can be read as FTS syntax. */
export function ftsQuery(text: string): string | null {
  const words = text.split(/\s+/).filter((w) => w.length > 0);
  if (words.length === 0) return null;
  return words.map((w) => `"${w.replaceAll('"', '""')}"*`).join(' AND ');
}

/** How long an entry may wait for the full-text index (a search adds what waits first). */
export const INDEX_AFTER_MS = 1000;

/** Entries kept in memory while the ledger refuses writes (a full disk): the oldest are written when
 *  it takes them again; past this many, the newest are counted, and the count is recorded instead. */
export const HELD_MAX = 1000;

type Params = Record<string, string | null>;

export class AuditLog {
  private readonly insert;
  private indexTimer: NodeJS.Timeout | null = null;
  /** Entries a full (or failing) disk refused, oldest first, with their own times; and those past HELD_MAX. */
  private held: Params[] = [];
  private dropped = 0;
  /** Told when an entry could not be written (the daemon: it stops taking requests until room returns).
   *  Unset (a command's own process, which ends soon), such an entry's failure is thrown. */
  onWriteFailure: ((e: unknown) => void) | null = null;

  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      `INSERT INTO audit (at, kind, actor, request_id, key_id, op, message, details, spool)
       VALUES (@at, @kind, @actor, @request_id, @key_id, @op, @message, @details,
               COALESCE(@spool, ${REQUESTS_SQL.spoolOf('@request_id')}, (SELECT spool FROM keys WHERE key_id = @key_id)))`,
    );
  }

  /**
   * Records an entry. Outside a transaction, with `onWriteFailure` set, a disk that refuses the write
   * (full, failing) never makes this throw: the entry is held in memory (HELD_MAX of them) and written before the next one that
   * can be, or by `writeHeld()`. Inside one it throws, so that the transaction fails as a whole.
   */
  record(e: AuditEntry): void {
    const params = this.paramsOf(e);
    if (this.db.inTransaction || !this.onWriteFailure) return void this.write(params);
    try {
      if (this.held.length || this.dropped) this.writeHeld(true);
      this.write(params);
    } catch (err) {
      if (!writeFailureCode(err)) throw err;
      if (this.held.length < HELD_MAX) this.held.push(params);
      else this.dropped++;
      this.onWriteFailure(err);
    }
  }

  /** Writes the entries held back, in one commit, then how many could not be held: true once none
   *  waits. `rethrow`: a refused write throws (else it is kept for the next try, and false returned). */
  writeHeld(rethrow = false): boolean {
    if (!this.held.length && !this.dropped) return true;
    try {
      this.db.transaction(() => {
        this.held.forEach((p) => this.write(p));
        if (this.dropped) {
          this.write(this.paramsOf({ kind: 'internal_error', message: `${this.dropped} audit entries were lost: the ledger's disk refused writes for longer than ${HELD_MAX} entries could be held in memory` }));
        }
      })();
    } catch (err) {
      if (rethrow || !writeFailureCode(err)) throw err;
      return false;
    }
    this.held = [];
    this.dropped = 0;
    return true;
  }

  /** How many entries wait in memory for the disk, and how many were lost past those. */
  get waiting(): { held: number; dropped: number } {
    return { held: this.held.length, dropped: this.dropped };
  }

  private paramsOf(e: AuditEntry): Params {
    return {
      at: nowIso(),
      kind: e.kind,
      actor: e.actor ?? 'daemon',
      request_id: e.request_id ?? null,
      key_id: e.key_id ?? null,
      op: e.op ?? null,
      message: e.message,
      details: e.details ? JSON.stringify(e.details) : null,
      spool: e.spool ?? null,
    };
  }

  private write(params: Params): void {
    this.insert.run(params);
    this.indexTimer ??= setTimeout(() => {
      this.indexTimer = null;
      try {
        if (this.db.open) this.indexPending();
      } catch {
        // A busy or full disk: the entries wait for the next batch, or the next search adds them.
      }
    }, INDEX_AFTER_MS).unref();
  }

  /**
   * Adds to the full-text index the entries recorded since its last batch, by any process, in one
   * commit without its own fsync: a power cut takes back the batch with the mark of where it ended
   * (audit_fts_through, db.ts), and the next one does it again. Returns how many it added.
   */
  indexPending(): number {
    return commitUnsynced(this.db, () => {
      // A write first, so that the commit holds the ledger's write lock from its start.
      const added = this.db
        .prepare(
          `INSERT INTO audit_fts (rowid, kind, request_id, key_id, op, message, details)
           SELECT seq, kind, request_id, key_id, op, message, details FROM audit WHERE seq > (SELECT seq FROM audit_fts_through) ORDER BY seq`,
        )
        .run().changes;
      if (added) this.db.prepare('UPDATE audit_fts_through SET seq = (SELECT MAX(seq) FROM audit)').run();
      return added;
    });
  }

  /** Several entries in one commit (one fsync), as a step of refusals or repairs records them. */
  recordAll(entries: AuditEntry[]): void {
    if (entries.length) this.db.transaction(() => entries.forEach((e) => this.record(e)))();
  }

  search(q: AuditQuery = {}): AuditRow[] {
    const where: string[] = [];
    const params: Record<string, unknown> = { limit: Math.min(Math.max(q.limit ?? 100, 1), 10_000) };
    const match = q.text ? ftsQuery(q.text) : null;
    if (match) this.indexPending();
    // With words, walk the full-text index newest first and stop at the limit (FTS5 orders by rowid
    // cheaply), instead of collecting every match first.
    const from = match ? 'audit_fts f JOIN audit a ON a.seq = f.rowid' : 'audit a';
    const order = match ? 'f.rowid DESC' : 'a.seq DESC';
    // Stored times are all toISOString() (UTC, milliseconds), so they compare as text once the
    // caller's time is written the same way (an offset or whole seconds would otherwise sort wrongly).
    const iso = (t: string | undefined) => (t ? new Date(t).toISOString() : undefined);
    const conditions: [string, string, unknown][] = [
      ['match', 'audit_fts MATCH @match', match],
      ['kind', 'a.kind = @kind', q.kind],
      ['requestId', 'a.request_id = @requestId', q.requestId],
      ['op', 'a.op = @op', q.op],
      ['keyId', 'a.key_id = @keyId', q.keyId],
      ['spool', 'a.spool = @spool', q.spool],
      ['state', REQUESTS_SQL.inState('a.request_id', '@state'), q.state],
      ['since', 'a.at >= @since', iso(q.since)],
      ['until', 'a.at < @until', iso(q.until)],
      ['before', 'a.seq < @before', q.before],
    ];
    for (const [name, condition, value] of conditions) {
      if (value === undefined || value === null || value === '') continue;
      where.push(condition);
      params[name] = value;
    }
    const sql = `SELECT a.* FROM ${from} ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
                 ORDER BY ${order} LIMIT @limit`;
    const rows = this.db.prepare(sql).all(params) as (Omit<AuditRow, 'details'> & { details: string | null })[];
    return rows.map((r) => ({ ...r, details: r.details ? (JSON.parse(r.details) as Record<string, unknown>) : null }));
  }

  /** The newest entry's seq (0 for none): where to read on from. */
  lastSeq(): number {
    return (this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM audit').get() as { seq: number }).seq;
  }

  /** Removes the entries recorded before `before` but those of a request still in the ledger (run
   *  after the requests were removed: an old uncertain one keeps its history); returns how many left. */
  deleteBefore(before: string): number {
    return this.db.prepare(`DELETE FROM audit WHERE at < ? AND (request_id IS NULL OR ${REQUESTS_SQL.gone('request_id')})`).run(before).changes;
  }
}
