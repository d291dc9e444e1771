// results/<id>.json: built from the ledger row, replaced atomically at every change of state.
import path from 'node:path';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { approvalOf, type RequestRow, type Requests } from '../ledger/requests';
import type { ErrorCode, ResultDoc } from '../../../shared/protocol/types';
import { nowIso } from '../time';

export function resultPath(resultsDir: string, id: string): string {
  return path.join(resultsDir, `${id}.json`);
}

export function logPath(resultsDir: string, id: string): string {
  return path.join(resultsDir, `${id}.log`);
}

export function resultDocOf(row: RequestRow): ResultDoc {
  const doc: ResultDoc = {
    v: 1,
    id: row.id,
    op: row.op,
    state: row.state,
    updated_at: row.updated_at,
    exit_code: row.exit_code,
    signal: row.signal,
    stdout: row.stdout,
    stderr: row.stderr,
    stdout_truncated: row.stdout_truncated === 1,
    stderr_truncated: row.stderr_truncated === 1,
    started_at: row.started_at,
    finished_at: row.finished_at,
    duration_ms: row.duration_ms,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
  };
  if (row.resolved_by === 'human') {
    doc.resolved_by = 'human';
    doc.note = row.note ?? '';
  }
  const approval = approvalOf(row);
  if (approval) {
    doc.approval = row.decided_by ? { ...approval, decided_by: row.decided_by, decided_at: row.decided_at ?? undefined } : approval;
  }
  if (row.state === 'cancelled' && row.cancel_requested_by) doc.cancelled_by = row.cancel_requested_by;
  return doc;
}

/** A result for a file that never bound its id (refused before authentication): no ledger row. */
export function unboundRejection(id: string, op: string | null, code: ErrorCode, message: string): ResultDoc {
  return {
    v: 1,
    id,
    op,
    state: 'rejected',
    updated_at: nowIso(),
    exit_code: null,
    signal: null,
    stdout: '',
    stderr: '',
    stdout_truncated: false,
    stderr_truncated: false,
    started_at: null,
    finished_at: null,
    duration_ms: null,
    error: { code, message },
  };
}

export class ResultWriter {
  constructor(
    private readonly resultsDir: string,
    private readonly requests: Requests,
  ) {}

  /**
   * Writes the row's result file, then records in the ledger that the file is current. Another process
   * (the daemon, or the command line) may have changed the row meanwhile: then the newer version is
   * written too, so the last writer always leaves the latest state in the file.
   */
  publish(row: RequestRow): void {
    for (let current: RequestRow | null = row; current; ) {
      writeJsonAtomic(resultPath(this.resultsDir, current.id), resultDocOf(current), 0o644);
      this.requests.markSynced(current.id, current.version);
      const latest = this.requests.get(current.id);
      current = latest && latest.version !== current.version ? latest : null;
    }
  }

  writeUnbound(doc: ResultDoc): void {
    writeJsonAtomic(resultPath(this.resultsDir, doc.id), doc, 0o644);
  }

  /** After a crash: every row whose last change may not have reached its result file. */
  repairAll(): number {
    const rows = this.requests.unsynced();
    for (const row of rows) this.publish(row);
    return rows.length;
  }
}
