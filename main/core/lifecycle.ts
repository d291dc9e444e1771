// Every state a request can be in, and how it gets there: the one table of transitions, and the one
// way to make one (the guarded ledger change and its audit entry in one commit, then its result file).
// Intake, the runner, decisions, the service and reconcile all move requests through here.
import type { Db } from './ledger/db';
import type { AuditEntry, AuditLog } from './ledger/audit';
import type { RequestPatch, RequestRow, Requests } from './ledger/requests';
import type { ErrorCode, RequestState } from '../../shared/protocol/types';
import { stepsWith } from './policy/plans';

/**
 * The states a request is recorded in when intake first records it (an authenticated request binds
 * its id, whatever the answer):
 * - `queued`: the policy lets it run (at once, or when a slot is free);
 * - `awaiting_approval`: a human must decide (the operation asks, a spend ceiling would be crossed, or
 *   it is a `dumbwaiter.plan`);
 * - `rejected` / `expired`: refused by the clock or the policy;
 * - `succeeded`: a built-in the host answered itself (`dumbwaiter.ping`, `dumbwaiter.cancel`).
 */
export const ENTRY_STATES = ['queued', 'awaiting_approval', 'rejected', 'expired', 'succeeded'] as const satisfies readonly RequestState[];

/**
 * From each state, where it may go, and who takes it there. A state may also be "moved" to itself to
 * record something about it (a run's orphan flag, a reconcile attempt) with the same guard.
 */
export const TRANSITIONS = {
  queued: [
    'running', // the runner starts it (the gate passed again, a slot is free, the host is not paused)
    'awaiting_approval', // checked again before starting: a ceiling would now be crossed, or the plan changed since approval
    'rejected', // checked again before starting: the key was revoked, the allowlist or a path changed
    'expired', // it waited past its expiry or the host's maximum age
    'failed', // its working folder is gone
    'cancelled', // a human, or the agent (dumbwaiter.cancel)
  ],
  awaiting_approval: [
    'queued', // approved (by a human, or a time-boxed grant)
    'succeeded', // a plan approved: its approval is its whole effect
    'denied', // denied, or nobody decided within the approval timeout
    'rejected', // its key was revoked
    'cancelled',
  ],
  running: [
    'succeeded', // exit 0; or a human's forced verdict on an orphan
    'failed', // non-zero exit, timeout, could not start; or a human's forced verdict on an orphan
    'cancelled', // terminated on request (an orphan too)
    'uncertain', // the host stopped while it ran (cleanly past the grace period, or a crash)
  ],
  uncertain: [
    'succeeded', // a human's verdict, or the reconcile command said it happened (resolved_by)
    'failed', // a human's verdict, or reconcile said it did not happen (not_applied)
  ],
  succeeded: [],
  failed: [],
  rejected: [],
  denied: [],
  expired: [],
  cancelled: [],
} as const satisfies Record<RequestState, readonly RequestState[]>;

export function mayMove(from: RequestState, to: RequestState): boolean {
  return from === to || (TRANSITIONS[from] as readonly RequestState[]).includes(to);
}

/** The audit kind of a refusal: expiry and ceilings have their own, to be found. */
export function refusalKind(state: RequestState, code: ErrorCode): string {
  return state === 'expired' ? 'expired' : code === 'spend_ceiling' ? 'ceiling_hit' : 'rejected';
}

/** What the audit log says about a move; the request's id, key and operation are added. */
export type MoveNote = Omit<AuditEntry, 'request_id' | 'key_id' | 'op'>;

export class Lifecycle {
  constructor(
    private readonly db: Db,
    private readonly requests: Requests,
    private readonly audit: AuditLog,
    /** Writes the result file of a changed request (a no-op where the spool cannot be reached). */
    private readonly publish: (row: RequestRow) => void,
  ) {}

  /**
   * Moves `row` to `to` if it is still in one of `from` (by default the state it was read in), with
   * `patch`; the change and `note` are one commit, and the result file follows. Returns the new row, or
   * null when it had moved on (a racing decider won: nothing was changed or recorded).
   */
  move(row: RequestRow, to: RequestState, patch: RequestPatch, note: MoveNote | null, from: readonly RequestState[] = [row.state]): RequestRow | null {
    for (const f of from) if (!mayMove(f, to)) throw new Error(`no transition from ${f} to ${to} (lifecycle.ts)`);
    const [next, plan] = this.db.transaction(() => {
      const n = this.requests.transition(row.id, from, { ...patch, state: to });
      if (n && note) this.audit.record({ ...note, request_id: row.id, key_id: row.key_id, op: row.op });
      return [n, n && this.followPlan(n)] as const;
    })();
    if (next) this.publish(next);
    if (plan) this.publish(plan);
    return next;
  }

  /** queued -> running, unless the host was paused or the key revoked meanwhile (Requests.start). The
   *  `started` entry follows once the process exists (with its pid). */
  start(row: RequestRow, patch: RequestPatch): RequestRow | null {
    const [next, plan] = this.db.transaction(() => {
      const n = this.requests.start(row.id, patch);
      return [n, n && this.followPlan(n)] as const;
    })();
    if (next) this.publish(next);
    if (plan) this.publish(plan);
    return next;
  }

  /**
   * The plan hook, kept this small on purpose: a request that took a step of a plan (policy/plans.ts)
   * has moved, so that step of the plan's row takes its new state, in the same commit (the plan's
   * result lists its steps' states). Returns the plan's changed row, to publish; null for any other row.
   */
  private followPlan(row: RequestRow): RequestRow | null {
    const plan = row.plan_id ? this.requests.get(row.plan_id) : null;
    const steps = plan && stepsWith(plan, row.id, row.state);
    return plan && steps ? this.requests.transition(plan.id, [plan.state], { steps_json: steps }) : null;
  }

  /** Refused (rejected, expired or failed) from where it is, with the audit kind that says why. */
  refuse(row: RequestRow, state: 'rejected' | 'expired' | 'failed', code: ErrorCode, message: string, actor?: string): RequestRow | null {
    return this.move(row, state, { error_code: code, error_message: message }, { kind: refusalKind(state, code), message: `${code}: ${message}`, ...(actor ? { actor } : {}) });
  }

  /** Writes a request's result again (its row changed in a way that is not a move, e.g. a plan's steps). */
  republish(row: RequestRow): void {
    this.publish(row);
  }
}
