// What the ledger records of a run: that it started (its processes, to find them after a crash, and
// the audit entry), and how it ended: its final state by how (a cancel, an error, the host stopping,
// or its exit code), the row's fields from its outcome, and the audit entry that says so.
import type { RunPlan } from '../allowlist/plan';
import type { RunHandle, RunOutcome } from '../exec/executor';
import { faultPoint } from '../faults';
import type { MoveNote } from '../lifecycle';
import type { AuditLog } from '../ledger/audit';
import { commitSoon, type Db } from '../ledger/db';
import type { RequestPatch, RequestRow, Requests } from '../ledger/requests';
import { settleHint } from './reconciler';

/**
 * The started run's processes and its audit entry, in the commit without an fsync made at the end of
 * this turn (a burst's starts share one): a daemon's crash loses nothing written, and a power cut that
 * loses it ends the processes too (the run is then uncertain either way); the run's next synced commit
 * makes it durable.
 */
export function noteStarted(d: { db: Db; requests: Requests; audit: AuditLog }, row: RequestRow, plan: RunPlan, handle: RunHandle): void {
  commitSoon(
    d.db,
    () => {
      if (handle.pid !== null) d.requests.setProcesses(row.id, handle.pid, handle.marker, handle.since);
      d.audit.record({
        kind: 'started',
        request_id: row.id,
        key_id: row.key_id,
        op: row.op,
        message: `started ${row.op}: ${JSON.stringify(plan.argv)} in ${plan.cwd}${handle.pid !== null ? ` (pid ${handle.pid})` : ''}`,
        details: { argv: plan.argv, cwd: plan.cwd, pid: handle.pid },
      });
    },
    () => faultPoint('after_spawn'),
  );
}

/** The outcome of a run recorded as running that could not be started: it ends failed, never stays running with nothing behind it. */
export function spawnFailure(plan: RunPlan, e: Error): RunOutcome {
  const error = { code: 'spawn_failed' as const, message: `could not start "${plan.argv[0]}": ${e.message}` };
  return { exit_code: null, signal: null, stdout: '', stderr: '', stdout_truncated: false, stderr_truncated: false, error, terminated: null, finished_at: new Date().toISOString(), duration_ms: 0, log: null };
}

export type RunEndState = 'succeeded' | 'failed' | 'cancelled' | 'uncertain';

/** The end of `row`'s run from outcome `o`; `reconcilable`: its operation declares a reconcile command. */
export function runEnd(row: RequestRow, o: RunOutcome, reconcilable: boolean): { state: RunEndState; patch: RequestPatch; note: MoveNote; how: string } {
  const state: RunEndState =
    o.terminated === 'cancel' ? 'cancelled' : o.error ? 'failed' : o.terminated === 'shutdown' ? 'uncertain' : o.exit_code === 0 ? 'succeeded' : 'failed';
  const error = state === 'failed' ? o.error : null;
  const error_code = state === 'uncertain' ? ('interrupted' as const) : (error?.code ?? null);
  const error_message =
    state === 'uncertain' ? `terminated because the host was stopping; it may or may not have taken effect. ${settleHint(row.id, reconcilable)}` : (error?.message ?? null);
  const patch: RequestPatch = {
    exit_code: o.exit_code,
    signal: o.signal,
    stdout: o.stdout,
    stderr: o.stderr,
    stdout_truncated: o.stdout_truncated ? 1 : 0,
    stderr_truncated: o.stderr_truncated ? 1 : 0,
    finished_at: o.finished_at,
    duration_ms: o.duration_ms,
    log_bytes: o.log?.bytes ?? null,
    log_sha256: o.log?.sha256 ?? null,
    error_code,
    error_message,
    reconcile_pending: state === 'uncertain' && reconcilable ? 1 : 0,
  };
  const how = o.signal ? `signal ${o.signal}` : `exit code ${o.exit_code}`;
  const note: MoveNote = {
    kind: 'finished',
    // What the run left behind is the audit's too: a process left running unread is the human's to look at.
    message: `${row.op} ${state} (${how}, ${o.duration_ms} ms)${error_message ? `: ${error_message}` : ''}${o.leftovers ? `; ${o.leftovers}` : ''}`,
    details: { state, exit_code: o.exit_code, signal: o.signal, duration_ms: o.duration_ms, ...(error_code ? { code: error_code } : {}) },
  };
  return { state, patch, note, how };
}
