// results/<id>.json: built from the ledger row, replaced atomically at every change of state.
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { quarantine } from './claim';
import { scopedLogger } from '../log';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { approvalOf, type RequestRow, type Requests } from '../ledger/requests';
import type { ErrorCode, ResultDoc } from '../../../shared/protocol/types';
import { nowIso } from '../time';
import type { SpoolPaths } from './layout';
import type { SpoolHealth } from './health';

const log = scopedLogger('results');

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
    private readonly paths: SpoolPaths,
    private readonly requests: Requests,
    private readonly health: SpoolHealth | null = null,
  ) {}

  /**
   * Writes the row's result file, then records in the ledger that the file is current. Another process
   * (the daemon, or the command line) may have changed the row meanwhile: then the newer version is
   * written too, so the last writer always leaves the latest state in the file. Never throws: a file
   * that cannot be written now stays unsynced and is retried, so a ledger step is never undone by it.
   */
  publish(row: RequestRow): boolean {
    for (let current: RequestRow | null = row; current; ) {
      if (!this.write(current.id, resultDocOf(current))) return false;
      this.requests.markSynced(current.id, current.version);
      const latest = this.requests.get(current.id);
      current = latest && latest.version !== current.version ? latest : null;
    }
    return true;
  }

  writeUnbound(doc: ResultDoc): boolean {
    return this.write(doc.id, doc);
  }

  /** Something the sandbox put where the result goes (a folder, say) is moved to quarantine once. */
  private write(id: string, doc: ResultDoc): boolean {
    const file = resultPath(this.paths.results, id);
    for (let attempt = 0; ; attempt++) {
      try {
        writeJsonAtomic(file, doc, 0o644);
        this.health?.succeeded();
        return true;
      } catch (e) {
        if (this.health?.failed(e, `results/${id}.json`)) return false;
        if (attempt === 0 && lstatSync(file, { throwIfNoEntry: false })?.isDirectory()) {
          quarantine(this.paths, file, `${id}.json`);
          log.warn(`results/${id}.json was a folder; moved it to quarantine`);
          continue;
        }
        log.error(`cannot write results/${id}.json (will retry): ${(e as Error).message}`);
        return false;
      }
    }
  }

  /** After a crash: every row whose last change may not have reached its result file. */
  repairAll(): number {
    let n = 0;
    for (const row of this.requests.unsynced()) if (this.publish(row)) n++;
    return n;
  }
}
