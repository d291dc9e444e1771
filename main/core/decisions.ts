// What a human (or the host, on their behalf) decides about a request: approve, deny, cancel, time out,
// revoke. Shared by the command line, the desktop app and the daemon; each change is one move of the
// request's lifecycle (a guarded transition, its audit entry and its result), so racing deciders cannot
// both win.
import type { AuditLog } from './ledger/audit';
import type { Grant, Grants } from './ledger/grants';
import type { Lifecycle } from './lifecycle';
import { approvalOf, planOf, type RequestRow, type Requests } from './ledger/requests';
import { UserError } from './errors';
import { formatDuration } from './duration';
import { isFinalState, type RequestState } from '../../shared/protocol/types';
import { PLAN_OP, keptSteps } from './policy/plans';
import { samePlan } from './policy/gate';
import { covers, grantRules, rulesInBrief, type ArgRules, type Widen } from './policy/grantRules';
import { approvedByFields, approvedByText, type ApprovedBy } from './ledger/approvedBy';
import { merged } from './merged';

const planNotForAWhile = (id: string) =>
  new UserError(`${id} is a plan: it is approved once, as a whole, and its expiry says how long its steps may be used (no --for)`);

export interface CancelOutcome {
  changed: boolean;
  state: RequestState;
  message: string;
  row: RequestRow;
}

export class Decisions {
  constructor(
    private readonly requests: Requests,
    private readonly lifecycle: Lifecycle,
    private readonly audit: AuditLog,
    private readonly grants: Grants,
    /** Told when a running request is marked for cancelling (the daemon terminates it at once). */
    private readonly cancelAsked: () => void = () => {},
  ) {}

  private pending(id: string): RequestRow {
    const row = this.requests.get(id);
    if (!row) throw new UserError(`no request ${id}`);
    if (row.state !== 'awaiting_approval') throw new UserError(`request ${id} is ${row.state}, not awaiting approval`);
    return row;
  }

  private approveRow(row: RequestRow, by: ApprovedBy, how: string): RequestRow | null {
    const ceiling = approvalOf(row)?.ceiling ?? null;
    const who = approvedByText(by);
    return this.lifecycle.move(
      row,
      'queued',
      merged(approvedByFields(by), { decided_at: new Date().toISOString(), ceiling_override: ceiling ? 1 : 0 }),
      { kind: 'approved', actor: who, message: `approved by ${who}${how}${ceiling ? ` (allowed past ${ceiling})` : ''}` },
    );
  }

  /**
   * The rules a grant made from waiting request `id` would have: each argument of the run its card
   * shows must equal its value there, unless `widen` lets it vary (policy/grantRules.ts). Refuses a
   * plan, a request recorded before grants named their arguments, and a widen the request cannot take.
   */
  grantRules(id: string, widen?: Widen): ArgRules {
    return this.rulesFor(this.pending(id), widen);
  }

  private rulesFor(row: RequestRow, widen: Widen | undefined): ArgRules {
    if (row.op === PLAN_OP) throw planNotForAWhile(row.id);
    const args = planOf(row)?.args;
    if (!args) throw new UserError(`${row.id} was recorded before grants named their arguments: approve it once, without a time box`);
    return grantRules(args, widen);
  }

  /**
   * Approves one request; with `forSeconds`, also this key's later calls of this operation with the
   * same arguments (or within what `widen` lets vary) for that long, recorded as a grant, visible and
   * revocable. Other cards already waiting are approved with it only when they would run exactly what
   * this card shows (same argv, folder and environment): the person saw nothing else. Requests waiting
   * because of a spend ceiling are only approved one by one: a grant lifts the approval rule, not the
   * ceilings.
   */
  approve(id: string, by: string, forSeconds?: number, widen?: Widen): { row: RequestRow; grant: Grant | null; alsoApproved: RequestRow[] } {
    const row = this.pending(id);
    if (widen !== undefined && forSeconds === undefined) {
      throw new UserError('only a time-boxed approval (--for) has later calls to let arguments vary for: add --for, or approve without --any-args/--args-match');
    }
    if (row.op === PLAN_OP) return { row: this.approvePlan(row, by, forSeconds), grant: null, alsoApproved: [] };
    const rules = forSeconds === undefined ? null : this.rulesFor(row, widen); // refused before anything changes
    const approved = this.approveRow(row, { actor: by }, '');
    if (!approved) throw new UserError(`request ${id} changed while approving; look again`);
    if (forSeconds === undefined || rules === null) return { row: approved, grant: null, alsoApproved: [] };
    const grant = this.grants.create(row.key_id, row.op, rules, forSeconds, by);
    this.audit.record({
      kind: 'grant_created',
      actor: by,
      key_id: row.key_id,
      op: row.op,
      message: `${by} approved ${row.op} for key ${row.key_id} for ${formatDuration(forSeconds)}, arguments ${rulesInBrief(rules)} (grant ${grant.id}, until ${grant.expires_at})`,
      details: { grant: grant.id, args: rules },
    });
    const shown = planOf(row);
    const alsoApproved: RequestRow[] = [];
    for (const other of this.requests.inState('awaiting_approval')) {
      if (other.key_id !== row.key_id || other.op !== row.op || approvalOf(other)?.ceiling) continue;
      const plan = planOf(other);
      if (!plan?.args || !samePlan(shown, plan) || !covers(rules, plan.args)) continue;
      const next = this.approveRow(other, { grant: grant.id }, ` (time-boxed approval by ${by})`);
      if (next) {
        this.grants.use(grant.id);
        alsoApproved.push(next);
      }
    }
    return { row: approved, grant, alsoApproved };
  }

  /**
   * A plan's approval is its whole effect (it runs nothing itself): it succeeds at once, and its steps
   * may then run, each once, until it expires. It is approved as a whole, never for a while.
   */
  private approvePlan(row: RequestRow, by: string, forSeconds: number | undefined): RequestRow {
    if (forSeconds !== undefined) throw planNotForAWhile(row.id);
    if (row.expires_at && Date.parse(row.expires_at) <= Date.now()) throw new UserError(`plan ${row.id} expired at ${row.expires_at}: approving it would let nothing run (deny it, or let it time out)`);
    const next = this.lifecycle.move(
      row,
      'succeeded',
      merged(approvedByFields({ actor: by }), { decided_at: new Date().toISOString() }),
      { kind: 'approved', actor: by, message: `approved by ${by}: plan of ${keptSteps(row)?.length ?? 0} step(s), usable until ${row.expires_at}` },
    );
    if (!next) throw new UserError(`request ${row.id} changed while approving; look again`);
    return next;
  }

  deny(id: string, by: string, reason: string): RequestRow {
    const row = this.pending(id);
    const message = `denied by ${by}${reason ? `: ${reason}` : ''}`;
    const next = this.lifecycle.move(row, 'denied', { decided_by: by, decided_at: new Date().toISOString(), error_code: 'denied', error_message: message }, { kind: 'denied', actor: by, message });
    if (!next) throw new UserError(`request ${id} changed while denying; look again`);
    return next;
  }

  /**
   * Denies, on the human's behalf, every approval that waited longer than `timeoutS`, and every plan
   * still waiting once its own expiry has passed (approvePlan refuses it then: it could let nothing run).
   */
  timeOut(timeoutS: number, now = new Date()): RequestRow[] {
    const cutoff = new Date(now.getTime() - timeoutS * 1000).toISOString();
    const out: RequestRow[] = [];
    for (const row of this.requests.inState('awaiting_approval')) {
      const lapsed = row.op === PLAN_OP && row.expires_at !== null && Date.parse(row.expires_at) <= now.getTime();
      if (!lapsed && row.updated_at > cutoff) continue;
      const message = lapsed ? `the plan expired at ${row.expires_at} before anyone approved it` : `no decision within the approval timeout of ${timeoutS} s`;
      const next = this.lifecycle.move(
        row,
        'denied',
        { decided_by: lapsed ? 'host (plan expired)' : 'host (approval timeout)', decided_at: now.toISOString(), error_code: 'approval_timeout', error_message: message },
        { kind: 'approval_timeout', actor: 'daemon', message: `denied: ${message}` },
      );
      if (next) out.push(next);
    }
    return out;
  }

  /**
   * Queued or waiting: cancelled at once. Running: marked, and the daemon terminates its process group
   * (within a second) and records it as cancelled. Finished: nothing changes, and it says so.
   */
  cancel(id: string, by: string): CancelOutcome {
    const row = this.requests.get(id);
    if (!row) throw new UserError(`no request ${id}`);
    if (row.state === 'queued' || row.state === 'awaiting_approval') {
      const next = this.lifecycle.move(row, 'cancelled', { cancel_requested_by: by }, { kind: 'cancelled', actor: by, message: `cancelled by ${by} while ${row.state}` });
      if (next) {
        return { changed: true, state: 'cancelled', message: `${id} cancelled (it was ${row.state.replace('_', ' ')})`, row: next };
      }
      return this.cancel(id, by); // it moved on meanwhile (started, most likely): look again
    }
    if (row.state === 'running') {
      if (row.cancel_requested_by) return { changed: false, state: 'running', message: `${id} is already being cancelled (by ${row.cancel_requested_by})`, row };
      const next = this.requests.requestCancel(id, by);
      if (!next) return this.cancel(id, by);
      this.audit.record({ kind: 'cancel_requested', actor: by, request_id: id, key_id: row.key_id, op: row.op, message: `${by} asked to cancel the running ${row.op}; its process group will be terminated` });
      this.cancelAsked();
      return { changed: true, state: 'running', message: `${id} is running: its process group is being terminated`, row: next };
    }
    if (row.op === PLAN_OP && row.state === 'succeeded') return this.withdrawPlan(row, by);
    const what = isFinalState(row.state) ? 'already finished' : 'not cancellable';
    return { changed: false, state: row.state, message: `${id} is ${what} (${row.state}): nothing changed`, row };
  }

  /**
   * Cancelling an approved plan withdraws it: its expiry becomes now, so no unused step matches any
   * more, and a step request still queued goes back to a human before it starts (runner.ts). What ran
   * or runs already is not touched (cancel those one by one).
   */
  private withdrawPlan(row: RequestRow, by: string): CancelOutcome {
    const now = new Date().toISOString();
    if (!row.expires_at || row.expires_at <= now) return { changed: false, state: row.state, message: `plan ${row.id} has expired already: nothing changed`, row };
    const message = `plan ${row.id} withdrawn by ${by}: its unused steps can no longer run without asking`;
    const next = this.lifecycle.move(row, 'succeeded', { expires_at: now, cancel_requested_by: by }, { kind: 'plan_withdrawn', actor: by, message });
    return next ? { changed: true, state: 'succeeded', message, row: next } : this.cancel(row.id, by);
  }

  /** A revoked key's requests that have not started are rejected. */
  rejectPendingOfKey(keyId: string, by: string): RequestRow[] {
    const out: RequestRow[] = [];
    for (const state of ['queued', 'awaiting_approval'] as const) {
      for (const row of this.requests.inState(state)) {
        if (row.key_id !== keyId) continue;
        const next = this.lifecycle.refuse(row, 'rejected', 'revoked_key', `key ${keyId} was revoked by ${by} before this request started`, by);
        if (next) out.push(next);
      }
    }
    return out;
  }
}
