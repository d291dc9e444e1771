// Requests in the ledger: the source of truth for every state. Each change bumps `version` and clears
// `synced` in the same transaction; the result file is written after, and a crash in between is
// repaired at the next start by rewriting every unsynced result. This module reads them and keeps the
// bookkeeping that is no state (synced marks, a run's processes, a cancel request); the one writer of
// their states is ledger/requestStates.ts, which only the lifecycle holds.
import { commitSoon, flushSoon, type Db } from './db';
import { FINAL_STATES, type ApprovalInfo, type ErrorCode, type ReconcileAttempt, type RequestState } from '../../../shared/protocol/types';
import type { RunPlan } from '../allowlist/plan';
import { DEFAULT_SPOOL } from '../../../shared/protocol/ids';
import type { ApprovedBy } from './approvedBy';

export interface RequestRow {
  /** The host's handle (the command line, the app, the audit log, the run's DUMBWAITER_REQUEST_ID):
   *  the wire id in the spool `default`, `<wire id>@<spool>` in the others (handleFor). */
  id: string;
  /** The id the sandbox gave, bound within its spool: what everything in the spool names it by. */
  wire_id: string;
  key_id: string;
  op: string;
  args_json: string;
  binding_hash: string;
  mac: string;
  intent: string | null;
  created_at: string;
  expires_at: string | null;
  claimed_at: string;
  state: RequestState;
  plan_json: string | null;
  error_code: ErrorCode | null;
  error_message: string | null;
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdout_truncated: number;
  stderr_truncated: number;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  pid: number | null;
  resolved_by: string | null;
  note: string | null;
  updated_at: string;
  version: number;
  synced: number;
  approval_json: string | null;
  decided_by: string | null;
  decided_at: string | null;
  ceiling_override: number;
  cancel_requested_by: string | null;
  cost: number;
  /** Bytes and SHA-256 (hex) of the live log as the finished run left it; null without a log. */
  log_bytes: number | null;
  log_sha256: string | null;
  /** The approved plan this request claims to be a step of (payload `plan_id`). */
  plan_id: string | null;
  /** The payload's own limits (`{timeout_s?, max_output_bytes?}`), tighter than the operation's. */
  limits_json: string | null;
  /** A `dumbwaiter.plan` request: its PlanStep[] (shared/protocol/types.ts), updated as steps are used. */
  steps_json: string | null;
  /** 1 while a run found alive when the host started is watched (its state stays `running`). */
  orphaned: number;
  /** The run's marker and its main process's start time (procfs), to find its processes after a crash. */
  run_marker: string | null;
  run_since: number | null;
  /** The last ReconcileAttempt (shared/protocol/types.ts). */
  reconcile_json: string | null;
  /** 1 while an uncertain request waits for the daemon's reconcile check (its result says `reconcile_pending`). */
  reconcile_pending: number;
  /** The spool it came through: its result goes back there, and only that spool's keys see it. */
  spool: string;
  /** Who let it run (approvedBy.ts): one of the three, or none; `decided_by` is only their display text. */
  approved_by_actor: string | null;
  approved_by_grant: string | null;
  approved_by_plan: string | null;
}


/** Which requests to list, newest first; `before` pages on from the last row's `seq`. */
export interface RequestFilter {
  states?: RequestState[];
  keyId?: string;
  /** Any of these keys (a key's name may be on several: `dumbwaiter requests --key NAME`). */
  keyIds?: string[];
  op?: string;
  spool?: string;
  limit?: number;
  before?: number;
  /** ISO time: only requests claimed at or after it. */
  since?: string;
}

/** A request as the app lists it: no output, no arguments. */
export type RequestSummary = Pick<
  RequestRow,
  'id' | 'key_id' | 'op' | 'spool' | 'state' | 'intent' | 'claimed_at' | 'started_at' | 'finished_at' | 'duration_ms' | 'exit_code' | 'error_code' | 'error_message' | 'updated_at' | 'resolved_by'
> & { seq: number; resolved_by: 'human' | 'reconcile' | null };

export type NewRequest = Pick<
  RequestRow,
  'id' | 'key_id' | 'op' | 'args_json' | 'binding_hash' | 'mac' | 'intent' | 'created_at' | 'expires_at' | 'state' | 'spool'
> & Partial<Pick<RequestRow, 'plan_id' | 'limits_json' | 'steps_json'>>
  // The sandbox's id, when the host's handle is not that (default: `id`).
  & Partial<Pick<RequestRow, 'wire_id'>>
  // A built-in the host answered itself enters finished, with its output, in the one insert.
  & Partial<Pick<RequestRow, 'stdout' | 'exit_code' | 'started_at' | 'finished_at' | 'duration_ms'>> & {
  plan: RunPlan | null;
  error_code?: ErrorCode | null;
  error_message?: string | null;
  approval?: ApprovalInfo | null;
  /** A request that enters approved (a grant's, or as a step of its plan). */
  approved_by?: ApprovedBy | null;
};

export type RequestPatch = Partial<
  Pick<
    RequestRow,
    | 'state' | 'error_code' | 'error_message' | 'exit_code' | 'signal' | 'stdout' | 'stderr' | 'stdout_truncated'
    | 'stderr_truncated' | 'started_at' | 'finished_at' | 'duration_ms' | 'pid' | 'resolved_by' | 'note' | 'plan_json'
    | 'approval_json' | 'decided_by' | 'decided_at' | 'ceiling_override' | 'cancel_requested_by' | 'cost'
    | 'log_bytes' | 'log_sha256' | 'expires_at' | 'steps_json' | 'orphaned' | 'run_marker' | 'run_since' | 'reconcile_json' | 'reconcile_pending'
    | 'approved_by_actor' | 'approved_by_grant' | 'approved_by_plan'
  >
>;

export function approvalOf(row: RequestRow): ApprovalInfo | null {
  return row.approval_json ? (JSON.parse(row.approval_json) as ApprovalInfo) : null;
}

/** The run recorded on `row` (what was approved, or what runs), if any. */
export function planOf(row: RequestRow): RunPlan | null {
  return row.plan_json ? (JSON.parse(row.plan_json) as RunPlan) : null;
}

/** The last reconcile attempt recorded on `row`, if any. */
export function reconcileOf(row: RequestRow): ReconcileAttempt | null {
  return row.reconcile_json ? (JSON.parse(row.reconcile_json) as ReconcileAttempt) : null;
}

const FINALS = FINAL_STATES.map((s) => `'${s}'`).join(', ');

/**
 * The requests table inside the audit log's statements (ledger/audit.ts), kept here with the rest of its
 * SQL so that a change of the table is made in this module; inside one statement, each keeps the plan
 * it had. Each takes the SQL expression (a parameter, a column) it is about.
 */
export const REQUESTS_SQL = {
  /** The spool of the request `id` names (NULL: no such request). */
  spoolOf: (id: string) => `(SELECT spool FROM requests WHERE id = ${id})`,
  /** Whether `id` names a request in the state `state` names. */
  inState: (id: string, state: string) => `${id} IN (SELECT id FROM requests WHERE state = ${state})`,
  /** Whether `id` names no request still in the ledger. */
  gone: (id: string) => `${id} NOT IN (SELECT id FROM requests)`,
};

/** The keys a key stands for: itself and every key rotated into it, however many rotations back
 *  (keys.rotated_to): its requests' spend is theirs too. */
const LINEAGE = `WITH RECURSIVE lineage(id) AS (SELECT @key UNION SELECT k.key_id FROM keys k JOIN lineage l ON k.rotated_to = l.id)`;

/** Runs started in a window, their cost units and run time (ms). */
export interface Spent {
  runs: number;
  cost: number;
  ms: number;
}

/** A run that ended or was settled, by the audit entry that said so. */
export interface EndedRun {
  seq: number;
  id: string;
  op: string;
  spool: string;
  state: RequestState;
}

export class Requests {
  private readonly byId;
  private readonly byWire;
  private readonly markSyncedStmt;
  /** Result files written whose rows are not yet marked synced: id -> the version written. */
  private readonly toMark = new Map<string, number>();

  constructor(private readonly db: Db) {
    this.byId = db.prepare('SELECT * FROM requests WHERE id = ?');
    this.byWire = db.prepare('SELECT * FROM requests WHERE spool = ? AND wire_id = ?');
    this.markSyncedStmt = db.prepare('UPDATE requests SET synced = 1 WHERE id = ? AND version = ?');
  }

  get(id: string): RequestRow | null {
    return (this.byId.get(id) as RequestRow | undefined) ?? null;
  }

  /** The request bound to `wireId` in `spool` (what a sandbox's id names there), if any. */
  bound(spool: string, wireId: string): RequestRow | null {
    return (this.byWire.get(spool, wireId) as RequestRow | undefined) ?? null;
  }

  /**
   * The host's handle for a new request of `spool` with `wireId`: the wire id itself in the spool
   * `default` (so a home of one spool sees no difference), `<wire id>@<spool>` in every other (`@` is in
   * no wire id, and that spool's binding is unique). Never decided by what other spools hold: the
   * handle reaches the run (DUMBWAITER_REQUEST_ID), and a sandbox must not learn another's ids from it.
   * Only a default request whose id a row of another spool made before ids were per spool holds as a
   * handle gets `@default`.
   */
  handleFor(spool: string, wireId: string): string {
    if (spool !== DEFAULT_SPOOL || this.db.prepare('SELECT 1 FROM requests WHERE id = ?').get(wireId)) return `${wireId}@${spool}`;
    return wireId;
  }

  /** The row's version alone (null: no such request), to tell whether it changed without reading it. */
  versionOf(id: string): number | null {
    return (this.db.prepare('SELECT version FROM requests WHERE id = ?').get(id) as { version: number } | undefined)?.version ?? null;
  }

  /** Marks a running request for cancellation; the daemon terminates it. Not a state change yet. */
  requestCancel(id: string, by: string): RequestRow | null {
    const r = this.db
      .prepare("UPDATE requests SET cancel_requested_by = ? WHERE id = ? AND state = 'running' AND cancel_requested_by IS NULL")
      .run(by, id);
    return r.changes === 1 ? this.get(id) : null;
  }

  /** Running requests someone asked to cancel. */
  cancelRequested(): RequestRow[] {
    return this.db.prepare("SELECT * FROM requests WHERE state = 'running' AND cancel_requested_by IS NOT NULL").all() as RequestRow[];
  }

  /**
   * Notes that the result file is current: those of one turn of the event loop in one commit, without
   * its own fsync. Losing them (a power cut, a crash, a process that ends first) only means the file is
   * written once more at the next start; until then the host's repair leaves the file to its writer.
   */
  markSynced(id: string, version: number): void {
    this.toMark.set(id, version);
    if (this.toMark.size === 1) commitSoon(this.db, () => this.markAll());
  }

  private markAll(): void {
    for (const [id, version] of this.toMark) this.markSyncedStmt.run(id, version);
    this.toMark.clear();
  }

  /** Whether the result file of this version of the row is written (marked, or to be marked this turn). */
  isSynced(row: RequestRow): boolean {
    return row.synced === 1 || this.toMark.get(row.id) === row.version;
  }

  /** Commits the marks (and the other notes) waiting for the end of this turn now (before the ledger is closed). */
  flushSynced(): void {
    flushSoon(this.db);
  }

  /** Rows whose result file may be behind, of one spool (each spool's writer writes only its own). */
  unsynced(spool: string): RequestRow[] {
    return this.db.prepare('SELECT * FROM requests WHERE synced = 0 AND spool = ?').all(spool) as RequestRow[];
  }

  /**
   * A page of the requests whose result file may be in the spool (changed since `since`, or not
   * finished), in rowid order after `after`: for the periodic look at result files.
   */
  resultIdsAfter(spool: string, after: number, since: string, limit: number): { rowid: number; wire_id: string }[] {
    return this.db
      .prepare(`SELECT rowid, wire_id FROM requests WHERE rowid > ? AND spool = ? AND (updated_at >= ? OR state NOT IN (${FINAL_STATES.map((s) => `'${s}'`).join(', ')})) ORDER BY rowid LIMIT ?`)
      .all(after, spool, since, limit) as { rowid: number; wire_id: string }[];
  }

  /**
   * Requests given a human's forced verdict while orphaned, whose processes no host has ended yet:
   * `orphaned` stays 1 until one has (host/verdicts.ts resolve). The host that watched them may have stopped
   * first, or the verdict came once a new host held the lock but before it adopted the run.
   */
  endedOrphans(): RequestRow[] {
    return this.db.prepare("SELECT * FROM requests WHERE orphaned = 1 AND state <> 'running'").all() as RequestRow[];
  }

  inState(state: RequestState): RequestRow[] {
    return this.db.prepare('SELECT * FROM requests WHERE state = ? ORDER BY claimed_at, rowid').all(state) as RequestRow[];
  }

  /** A spool's oldest queued request whose operation has a free slot. */
  nextQueued(excludeOps: string[], spool: string): RequestRow | null {
    const not = excludeOps.length ? `AND op NOT IN (${excludeOps.map(() => '?').join(', ')})` : '';
    const sql = `SELECT * FROM requests WHERE state = 'queued' AND spool = ? ${not} ORDER BY claimed_at, rowid LIMIT 1`;
    return (this.db.prepare(sql).get(spool, ...excludeOps) as RequestRow | undefined) ?? null;
  }

  countInState(state: RequestState, spool?: string): number {
    // `+spool`: counted through the state's index (the few queued or running), never the spool's (all of its history).
    const sql = `SELECT COUNT(*) AS n FROM requests WHERE state = ?${spool === undefined ? '' : ' AND +spool = ?'}`;
    return (this.db.prepare(sql).get(...(spool === undefined ? [state] : [state, spool])) as { n: number }).n;
  }

  /** Requests of a spool still in the ledger, whatever their state. */
  countInSpool(spool: string): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM requests WHERE spool = ?').get(spool) as { n: number }).n;
  }

  /** Requests of a spool that are not finished (uncertain ones count: a human must still settle them). */
  openInSpool(spool: string): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM requests WHERE spool = ? AND state NOT IN (${FINALS})`).get(spool) as { n: number }).n;
  }

  /** A spool's requests that may still run or be decided: queued, waiting for a human, running. */
  openOf(spool: string): RequestRow[] {
    return this.db.prepare("SELECT * FROM requests WHERE spool = ? AND state IN ('queued', 'awaiting_approval', 'running')").all(spool) as RequestRow[];
  }

  /** What finds a run's processes after a crash (its process group, marker and main process's start
   *  time: exec/leftovers.ts), recorded once it started. Not a state change. */
  setProcesses(id: string, pid: number, marker: string | null, since: number | null): void {
    this.db.prepare('UPDATE requests SET pid = ?, run_marker = ?, run_since = ? WHERE id = ?').run(pid, marker, since, id);
  }

  list(f: RequestFilter = {}): RequestSummary[] {
    const where: string[] = [];
    const params: Record<string, unknown> = { limit: Math.min(Math.max(f.limit ?? 100, 1), 1000) };
    if (f.states?.length) {
      where.push(`state IN (${f.states.map((_, i) => `@s${i}`).join(', ')})`);
      f.states.forEach((s, i) => (params[`s${i}`] = s));
    }
    if (f.keyId) {
      where.push('key_id = @keyId');
      params.keyId = f.keyId;
    }
    if (f.keyIds) {
      // None: no request (IN (NULL) matches nothing).
      where.push(`key_id IN (${f.keyIds.map((_, i) => `@k${i}`).join(', ') || 'NULL'})`);
      f.keyIds.forEach((k, i) => (params[`k${i}`] = k));
    }
    if (f.since) {
      where.push('claimed_at >= @since');
      params.since = f.since;
    }
    if (f.op) {
      where.push('op = @op');
      params.op = f.op;
    }
    if (f.spool) {
      where.push('spool = @spool');
      params.spool = f.spool;
    }
    if (f.before !== undefined) {
      where.push('rowid < @before');
      params.before = f.before;
    }
    return this.db
      .prepare(
        `SELECT rowid AS seq, id, key_id, op, spool, state, intent, claimed_at, started_at, finished_at, duration_ms, exit_code,
                error_code, error_message, updated_at, resolved_by
         FROM requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY rowid DESC LIMIT @limit`,
      )
      .all(params) as RequestSummary[];
  }

  /** How many requests each key has made (those still in the ledger). */
  countByKey(): Map<string, number> {
    const rows = this.db.prepare('SELECT key_id, COUNT(*) AS n FROM requests GROUP BY key_id').all() as { key_id: string; n: number }[];
    return new Map(rows.map((r) => [r.key_id, r.n]));
  }

  countByState(): Record<string, number> {
    const rows = this.db.prepare('SELECT state, COUNT(*) AS n FROM requests GROUP BY state').all() as { state: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  // What retention, spend ceilings and the status feed ask about requests, each in the one statement it was.

  /** The wire ids (what their result files are named by) of the requests not finished, uncertain ones
   *  included, in every spool. */
  unfinishedWireIds(): Set<string> {
    const rows = this.db.prepare(`SELECT wire_id FROM requests WHERE state NOT IN (${FINALS})`).all() as { wire_id: string }[];
    return new Set(rows.map((r) => r.wire_id));
  }

  /** Removes the finished requests last changed before `before` (never an unfinished or uncertain
   *  one: a human must still settle it); returns how many left. */
  deleteFinishedBefore(before: string): number {
    return this.db.prepare(`DELETE FROM requests WHERE state IN (${FINALS}) AND updated_at < ?`).run(before).changes;
  }

  /** The keys whose requests count as `keyId`'s: itself and the keys it replaced by rotation. */
  keyLineage(keyId: string): string[] {
    return (this.db.prepare(`${LINEAGE} SELECT id FROM lineage`).all({ key: keyId }) as { id: string }[]).map((r) => r.id);
  }

  /** The runs started at or after `since`, of `keyId`'s lineage (null: of every key). Run time counts
   *  what is known: a finished run's duration, a running one's time until `now`. A run cut short by a
   *  crash (uncertain) has no known duration and adds none, rather than growing for ever. */
  spentSince(since: string, now: string, keyId: string | null): Spent {
    return this.db
      .prepare(
        `${keyId ? LINEAGE : ''} SELECT COUNT(*) AS runs, COALESCE(SUM(cost), 0) AS cost,
                COALESCE(SUM(COALESCE(duration_ms,
                  CASE WHEN state = 'running' THEN (julianday(@now) - julianday(started_at)) * 86400000.0 ELSE 0 END)), 0) AS ms
         FROM requests WHERE started_at IS NOT NULL AND started_at >= @since ${keyId ? 'AND key_id IN (SELECT id FROM lineage)' : ''}`,
      )
      .get({ since, now, key: keyId }) as Spent;
  }

  /** Runs of allowlisted operations that ended, or were settled (by a human, or by their reconcile
   *  check), in audit entries after `seq`, in the order recorded. The seq, not a time stamp: it grows in
   *  commit order whichever process writes. */
  endedRunsAfter(seq: number, limit = 1000): EndedRun[] {
    return this.db
      .prepare(
        `SELECT a.seq, r.id, r.op, r.spool, r.state FROM audit a JOIN requests r ON r.id = a.request_id
         WHERE a.seq > ? AND a.kind IN ('finished', 'uncertain', 'resolved', 'reconciled') AND r.op NOT LIKE 'dumbwaiter.%'
         ORDER BY a.seq LIMIT ?`,
      )
      .all(seq, limit) as EndedRun[];
  }
}
