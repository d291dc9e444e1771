// Admission: whether an authenticated request may be taken, and how, by the host's state now. Intake
// asks it of a new request in protocol-v1 section 3's order (clock, then a plan proposal, a built-in or
// the policy gate: operation, arguments, scope, spend, approval); the runner asks it again of a queued
// request just before its start, since what held at intake may not any more (its expiry or age, its
// key revoked, the allowlist, a path on disk, the spend, its grant revoked, its plan expired or withdrawn).
import type { RequestLimits, RunPlan } from '../allowlist/plan';
import type { Allowlist } from '../allowlist/types';
import type { Grant, Grants } from '../ledger/grants';
import { approvalOf, planOf, type RequestRow, type Requests } from '../ledger/requests';
import { approvedByOf, approvedByText, type ApprovedBy } from '../ledger/approvedBy';
import type { KeyInfo } from '../keys/keyStore';
import type { Settings } from '../settings';
import type { ApprovalInfo, ErrorCode } from '../../../shared/protocol/types';
import { clockProblem } from './clock';
import { gate } from './gate';
import { PLAN_OP, claimBeforeStart, matchStep, proposePlan, type KeptStep } from './plans';

export type PlanClaim = NonNullable<ApprovalInfo['plan_claim']>;

/** What is asked, as admission sees it. */
export interface AdmissionRequest {
  spool: string;
  /** Its key as the key store has it now (null: gone). */
  key: KeyInfo | null;
  op: string;
  args: Record<string, unknown>;
  limits: RequestLimits | null;
  intent: string | null;
  created_at: string;
  expires_at: string | null;
  /** The plan it claims to be a step of (payload `plan_id`). */
  plan_id: string | null;
  /** Its row, once recorded (the check before its start): who approved it, and the run they approved. */
  row?: RequestRow;
}

/** The host's state that admission reads. */
export interface HostNow {
  /** The allowlist as the request's spool sees it (allowlistFor). */
  allowlist: Allowlist;
  settings: Settings;
  grants: Grants;
  /** For the plan a request names, and the spend so far. */
  requests: Requests;
  maxRequestAgeMs: number;
  now: Date;
}

export type Admission =
  /** Not taken: its state, and the code and message its result gives. */
  | { kind: 'refused'; state: 'rejected' | 'expired'; code: ErrorCode; message: string; unmatched?: PlanClaim | null }
  /** A built-in (`dumbwaiter.*` but a plan): the host answers it itself. */
  | { kind: 'builtin' }
  /** Waits for a human: the card (`approval`), and the run it shows, or a proposed plan's steps. `step`:
   *  the plan step it is, though it crosses a ceiling; `why`: why a recorded one goes back. */
  | { kind: 'waits'; approval: ApprovalInfo; plan: RunPlan | null; steps?: KeptStep[]; step?: number | null; unmatched?: PlanClaim | null; why?: string }
  /** May run `plan`: approved by `by` (a grant's, `grant`, is used once more; as step `step` of its plan), or
   *  needing no approval (null). */
  | { kind: 'runs'; plan: RunPlan; by: ApprovedBy | null; grant: Grant | null; step?: number | null; unmatched?: PlanClaim | null };

/** What admission is asked about a recorded request whose key is now `key`. */
export function admissionOf(row: RequestRow, key: KeyInfo | null): AdmissionRequest {
  return {
    spool: row.spool,
    key,
    op: row.op,
    args: JSON.parse(row.args_json) as Record<string, unknown>,
    limits: row.limits_json ? (JSON.parse(row.limits_json) as RequestLimits) : null,
    intent: row.intent,
    created_at: row.created_at,
    expires_at: row.expires_at,
    plan_id: row.plan_id,
    row,
  };
}

export function admit(r: AdmissionRequest, h: HostNow): Admission {
  const recorded = r.row ?? null;
  const clock = clockProblem(r.created_at, r.expires_at, h.now.getTime(), h.maxRequestAgeMs);
  // Once recorded only its age and expiry count: a clock skew would have refused it at intake.
  if (clock && !recorded) return { kind: 'refused', state: clock.state, code: clock.code, message: clock.message };
  if (clock?.state === 'expired') return { kind: 'refused', state: 'expired', code: 'expired', message: `${clock.message}, before it could start` };
  // A new request's key was just authenticated (authenticate.ts refuses a revoked one).
  if (!r.key || r.key.revoked_at) return { kind: 'refused', state: 'rejected', code: 'revoked_key', message: `key ${r.key?.key_id ?? recorded?.key_id} was revoked before this request started` };
  if (recorded) return admitRecorded(r, recorded, r.key, h);
  if (r.op === PLAN_OP) {
    const p = proposePlan({ allowlist: h.allowlist, key: r.key, args: r.args, expiresAt: r.expires_at ?? undefined, intent: r.intent, approvalTimeoutS: h.settings.approval_timeout_s, now: h.now });
    return p.ok ? { kind: 'waits', approval: p.approval, plan: null, steps: p.steps } : { kind: 'refused', state: 'rejected', code: p.code, message: p.message };
  }
  if (r.op.startsWith('dumbwaiter.')) return { kind: 'builtin' };

  const step = r.plan_id ? matchStep(h.requests.bound(r.spool, r.plan_id), r.plan_id, r.key.key_id, r.op, r.args, h.allowlist, h.now) : null;
  // A matched step is approved as the plan's approval (scope, ceilings and validity still apply).
  const g = gateNow(r, r.key, h, step?.ok ? { plan: step.plan, ceilingOverride: false } : null);
  const unmatched = step && !step.ok ? { plan_id: r.plan_id!, reason: step.reason } : null;
  if (g.kind === 'refuse') return { kind: 'refused', state: 'rejected', code: g.code, message: g.message, unmatched };
  // A plan it claims but does not match is said on the card and in its result: the person and the
  // agent both learn why it waits.
  if (g.kind === 'ask') return { kind: 'waits', approval: unmatched ? { ...g.approval, plan_claim: unmatched } : g.approval, plan: g.plan, step: step?.ok ? step.index : null, unmatched };
  if (step?.ok) return { kind: 'runs', plan: g.plan, by: { plan: r.plan_id! }, grant: null, step: step.index };
  return { kind: 'runs', plan: g.plan, by: g.grant ? { grant: g.grant.id } : null, grant: g.grant, unmatched };
}

/** The check just before a queued request starts: the gate again, with the approval it had while that holds. */
function admitRecorded(r: AdmissionRequest, row: RequestRow, key: KeyInfo, h: HostNow): Admission {
  const by = approvedByOf(row);
  const holds = by !== null && stillHolds(by, row.spool, h);
  const g = gateNow(r, key, h, holds ? { plan: planOf(row), ceilingOverride: row.ceiling_override === 1 } : null);
  if (g.kind === 'refuse') return { kind: 'refused', state: 'rejected', code: g.code, message: `${g.message} (checked again before starting)` };
  if (g.kind === 'ask') {
    const why = g.approval.ceiling
      ? `it would cross ${g.approval.ceiling}`
      : by && !holds
        ? `its approval (${approvedByText(by)}) no longer holds`
        : 'what it would run changed since it was approved';
    const claim = claimBeforeStart(row, approvalOf(row), holds, g.approval.ceiling, row.plan_id ? h.requests.bound(row.spool, row.plan_id) : null);
    return { kind: 'waits', approval: claim ? { ...g.approval, plan_claim: claim } : g.approval, plan: g.plan, why };
  }
  // Approved already: it keeps who did; else the grant that lets it run now.
  return { kind: 'runs', plan: g.plan, by: by ?? (g.grant ? { grant: g.grant.id } : null), grant: g.grant };
}

/** A person's approval stands; a plan's while the plan has not expired or been withdrawn (its expiry is
 *  then the withdrawal); a grant's while the grant is still active. */
function stillHolds(by: ApprovedBy, spool: string, h: HostNow): boolean {
  if ('grant' in by) return h.grants.isActive(by.grant);
  if ('plan' in by) {
    const expires = h.requests.bound(spool, by.plan)?.expires_at;
    return expires != null && Date.parse(expires) > h.now.getTime();
  }
  return true;
}

function gateNow(r: AdmissionRequest, key: KeyInfo, h: HostNow, approved: { plan: RunPlan | null; ceilingOverride: boolean } | null) {
  return gate({ allowlist: h.allowlist, settings: h.settings, requests: h.requests, grants: h.grants, key, op: r.op, args: r.args, limits: r.limits, intent: r.intent, approved, now: h.now });
}
