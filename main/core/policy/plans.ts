// Plans (`dumbwaiter.plan`): an agent proposes its next steps for one human approval; once approved,
// a request that names the plan (payload `plan_id`) and asks exactly for one of its unused steps runs
// without asking again, once, and only while it would run what the human saw.
import { planRun, type RunPlan } from '../allowlist/plan';
import { sharedRoots } from '../allowlist/roots';
import type { Allowlist } from '../allowlist/types';
import type { KeyInfo } from '../keys/keyStore';
import type { RequestRow } from '../ledger/requests';
import { samePlan, scopeProblem } from './gate';
import { canonicalJson } from '../../../shared/protocol/canonicalJson';
import { MAX_PLAN_LIFETIME_S, PLAN_OP, checkPlanShape } from '../../../shared/protocol/plan';
import type { ApprovalInfo, ErrorCode, PlanDoc, PlanStep, RequestState } from '../../../shared/protocol/types';

// For the host modules that ask this one about plans; the plan rules themselves are shared with the clients.
export { PLAN_OP };

/**
 * A step as the plan's row keeps it (steps_json): what the wire shows, and what else must be unchanged
 * for the step to run as approved (samePlan: its environment, and whether it leaves processes running).
 */
export interface KeptStep extends PlanStep {
  env: Record<string, string>;
  leaves_processes: boolean;
}

export type PlanProposal = { ok: true; approval: ApprovalInfo; steps: KeptStep[] } | { ok: false; code: Extract<ErrorCode, 'unknown_op' | 'bad_args' | 'scope_denied'>; message: string };

export interface ProposalInput {
  allowlist: Allowlist;
  key: KeyInfo;
  args: Record<string, unknown>;
  /** The payload's `expires_at`: until when the steps may be used. */
  expiresAt: string | undefined;
  intent: string | null;
  approvalTimeoutS: number;
  now: Date;
}

const badArgs = (message: string): PlanProposal => ({ ok: false, code: 'bad_args', message });

/** What the wire shows of a kept step (the approval card, the plan's result). */
function wireStep({ env: _env, leaves_processes: _leaves, ...step }: KeptStep): PlanStep {
  return step;
}

/** Why `expiresAt` cannot be a plan's expiry; null when it can. */
function expiryProblem(expiresAt: string | undefined, now: Date): string | null {
  if (expiresAt === undefined) return `a plan needs the payload's expires_at: until when its steps may be used (at most 24 h ahead)`;
  const at = Date.parse(expiresAt);
  if (at <= now.getTime()) return `the plan's expires_at ${expiresAt} has passed`;
  if (at - now.getTime() > MAX_PLAN_LIFETIME_S * 1000) return `the plan's expires_at ${expiresAt} is more than 24 h ahead: a plan may be used for at most 24 hours`;
  return null;
}

/**
 * A proposed plan checked as a whole: of the shape every plan has (checkPlanShape), each step an
 * operation of the allowlist with valid arguments that this key may call now. The approval card shows
 * every step as it would run.
 */
export function proposePlan(i: ProposalInput): PlanProposal {
  const expiry = expiryProblem(i.expiresAt, i.now);
  if (expiry) return badArgs(expiry);
  const shape = checkPlanShape(i.args);
  if (!shape.ok) return badArgs(shape.message);

  const steps: KeptStep[] = [];
  const shared = new Set<string>();
  for (const [n, { op, args }] of shape.steps.entries()) {
    const at = `steps[${n}]`;
    const planned = planRun(i.allowlist, op, args);
    if (!planned.ok) return { ok: false, code: planned.code, message: `${at} (${op}): ${planned.message}` };
    const plan = planned.plan;
    const scope = scopeProblem(i.key, plan);
    if (scope) return { ok: false, code: 'scope_denied', message: `${at}: ${scope}` };
    for (const root of sharedRoots(i.allowlist.operations.get(op)!)) shared.add(root);
    steps.push({ op, args, argv: plan.argv, cwd: plan.cwd, scope: plan.scope, request_id: null, state: null, env: plan.env, leaves_processes: plan.leaves_processes === true });
  }
  const approval: ApprovalInfo = {
    operation: PLAN_OP,
    argv: [],
    cwd: '',
    key_id: i.key.key_id,
    key_name: i.key.name,
    intent: i.intent,
    requested_at: i.now.toISOString(),
    timeout_at: new Date(i.now.getTime() + i.approvalTimeoutS * 1000).toISOString(),
    ceiling: null,
    // The card's warnings hold for the plan as a whole: some step works on what the sandbox controls, or leaves processes.
    ...(shared.size > 0 ? { shared_with_sandbox: [...shared] } : {}),
    ...(steps.some((s) => s.leaves_processes) ? { leaves_processes: true } : {}),
    steps: steps.map(wireStep),
  };
  return { ok: true, approval, steps };
}

export function keptSteps(row: RequestRow): KeptStep[] | null {
  return row.op === PLAN_OP && row.steps_json ? (JSON.parse(row.steps_json) as KeptStep[]) : null;
}

/** A plan's result field: its expiry, and each step with the request that used it and that request's state. */
export function planDocOf(row: RequestRow): PlanDoc | null {
  const steps = keptSteps(row);
  return steps && row.expires_at ? { expires_at: row.expires_at, steps: steps.map(wireStep) } : null;
}

type PlanClaim = NonNullable<ApprovalInfo['plan_claim']>;

export type StepMatch = { ok: true; index: number; plan: RunPlan } | { ok: false; reason: string };

/**
 * The step of plan `planId` (its row, if any) that a request of key `keyId` for `op` with `args` may
 * run as: the plan is this key's, approved and not expired, and an unused step asks for the same
 * operation and arguments (in canonical JSON: key order does not matter) and would still run exactly
 * what the human approved. Otherwise why not: for the audit log, and, when the request goes to a
 * human, for the card and the agent (the approval's plan_claim).
 */
export function matchStep(planRow: RequestRow | null, planId: string, keyId: string, op: string, args: Record<string, unknown>, allowlist: Allowlist, now: Date): StepMatch {
  const steps = planRow ? keptSteps(planRow) : null;
  if (!planRow || !steps) return { ok: false, reason: `no plan ${planId} of this key` };
  // Said as if there were none: the reason reaches the sandbox (the result's plan_claim), which may not learn another key's ids.
  if (planRow.key_id !== keyId) return { ok: false, reason: `no plan ${planId} of this key` };
  if (planRow.state !== 'succeeded') return { ok: false, reason: `plan ${planId} is ${planRow.state}, not approved` };
  if (!planRow.expires_at || Date.parse(planRow.expires_at) <= now.getTime()) return { ok: false, reason: `plan ${planId} expired at ${planRow.expires_at}` };
  const wanted = canonicalJson(args);
  const same = steps.map((s, index) => ({ s, index })).filter(({ s }) => s.op === op && canonicalJson(s.args) === wanted);
  if (same.length === 0) return { ok: false, reason: unlikeAnyStep(steps, planId, op, args) };
  const free = same.find(({ s }) => s.request_id === null);
  if (!free) return { ok: false, reason: `the step of plan ${planId} with ${op} and these arguments was already used (by ${same.map(({ s }) => s.request_id).join(', ')})` };
  const { s, index } = free;
  const planned = planRun(allowlist, op, args);
  if (!planned.ok) return { ok: false, reason: `step ${index + 1} of plan ${planId} is no longer valid: ${planned.message}` };
  const approved: RunPlan = { ...planned.plan, argv: s.argv, cwd: s.cwd, env: s.env, leaves_processes: s.leaves_processes };
  if (!samePlan(approved, planned.plan)) return { ok: false, reason: `what step ${index + 1} of plan ${planId} would run changed since the plan was approved` };
  return { ok: true, index, plan: planned.plan };
}

/**
 * The plan_claim of a request the check before its start sends back to a human: the one it had (it
 * never matched its plan, and a human let it run), or, for one queued as a step of its plan, why that
 * no longer holds. None for a step that only crosses a ceiling: it is still a step of its plan.
 */
export function claimBeforeStart(row: RequestRow, had: ApprovalInfo | null, planHolds: boolean, ceiling: string | null, planRow: RequestRow | null): PlanClaim | undefined {
  if (had?.plan_claim) return had.plan_claim;
  const planId = row.plan_id;
  if (!planId || row.approved_by_plan !== planId) return undefined;
  if (!planHolds) return { plan_id: planId, reason: `plan ${planId} expired or was withdrawn at ${planRow?.expires_at ?? 'an unknown time'}, before this step could start` };
  return ceiling === null ? { plan_id: planId, reason: `what this step of plan ${planId} would run changed since the plan was approved` } : undefined;
}

/** An argument's value as the reason quotes it: JSON, cut short (the card and the client escape it). */
function quoted(value: unknown): string {
  if (value === undefined) return 'none';
  const text = JSON.stringify(value);
  return [...text].length > 60 ? `${[...text].slice(0, 59).join('')}…` : text;
}

/** "a", "a and b", "a, b and c". */
function inWords(items: string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/**
 * Why a request is no step of the plan, in words a person can check against the plan: the plan has no
 * step of this operation, or the closest one (fewest arguments differ; an unused one before a used
 * one) and each argument that differs, with the step's value and the request's.
 */
function unlikeAnyStep(steps: KeptStep[], planId: string, op: string, args: Record<string, unknown>): string {
  const ofOp = steps.map((s, index) => ({ s, index })).filter(({ s }) => s.op === op);
  if (ofOp.length === 0) return `plan ${planId} has no step of operation ${op} (its steps are ${inWords([...new Set(steps.map((s) => s.op))])})`;
  const differing = (stepArgs: Record<string, unknown>) =>
    [...new Set([...Object.keys(stepArgs), ...Object.keys(args)])].sort().filter((name) => canonicalJson(stepArgs[name]) !== canonicalJson(args[name]));
  const [closest] = ofOp
    .map(({ s, index }) => ({ s, index, names: differing(s.args) }))
    .sort((a, b) => a.names.length - b.names.length || Number(a.s.request_id !== null) - Number(b.s.request_id !== null) || a.index - b.index);
  const { s, index, names } = closest!;
  const used = s.request_id !== null ? ` (already used by ${s.request_id})` : '';
  const diffs = names.map((name) => `${name} (step ${quoted(s.args[name])}, request ${quoted(args[name])})`);
  return `no step of plan ${planId} is ${op} with these arguments: the closest, step ${index + 1}${used}, differs in ${inWords(diffs)}`;
}

/**
 * The plan's steps_json once request `requestId` is in `state`: with `index`, it takes that unused
 * step now; without, the step it took follows it. Null when there is nothing to change (not a plan,
 * or no step of it is this request's).
 */
export function stepsWith(planRow: RequestRow, requestId: string, state: RequestState, index?: number): string | null {
  const steps = keptSteps(planRow);
  if (!steps) return null;
  const at = index ?? steps.findIndex((s) => s.request_id === requestId);
  const step = steps[at];
  if (!step) return null;
  if (index !== undefined && step.request_id !== null) throw new Error(`step ${index + 1} of plan ${planRow.id} was already used by ${step.request_id}`);
  if (step.request_id === requestId && step.state === state) return null;
  steps[at] = { ...step, request_id: requestId, state };
  return JSON.stringify(steps);
}
