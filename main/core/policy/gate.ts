// The policy gate of protocol-v1 section 3, after authentication: operation and arguments, scope,
// spend ceilings, then approval. Passed at claim time, and again just before a run starts (the
// allowlist, a path on disk, the spend or a grant may have changed meanwhile).
import { planRun, type RequestLimits, type RunPlan } from '../allowlist/plan';
import type { Allowlist } from '../allowlist/types';
import { sharedRoots } from '../allowlist/roots';
import type { Grant, Grants } from '../ledger/grants';
import type { Requests } from '../ledger/requests';
import type { KeyInfo } from '../keys/keyStore';
import type { Settings } from '../settings';
import { crossings } from './spend';
import type { ApprovalInfo, ErrorCode } from '../../../shared/protocol/types';

export type GateResult =
  | { kind: 'refuse'; code: Extract<ErrorCode, 'unknown_op' | 'bad_args' | 'scope_denied' | 'spend_ceiling'>; message: string }
  | { kind: 'ask'; plan: RunPlan; approval: ApprovalInfo }
  | { kind: 'go'; plan: RunPlan; grant: Grant | null };

export interface GateInput {
  allowlist: Allowlist;
  settings: Settings;
  /** The ledger's requests: the spend so far. */
  requests: Requests;
  grants: Grants;
  key: KeyInfo;
  op: string;
  args: Record<string, unknown>;
  intent: string | null;
  /** The request's own limits (payload `timeout_s`, `max_output_bytes`): tighter than the operation's, or bad_args. */
  limits?: RequestLimits | null;
  /** Set when a human already approved this request: the plan they saw, and whether past a ceiling. */
  approved?: { plan: RunPlan | null; ceilingOverride: boolean } | null;
  now?: Date;
}

/** Scope rules of a key: a read key may only call read operations; an ops list limits further. */
export function scopeProblem(key: KeyInfo, plan: RunPlan): string | null {
  if (key.scope === 'read' && plan.scope === 'write') return `key ${key.key_id} has read scope; "${plan.op}" is a write operation`;
  if (key.ops && !key.ops.includes(plan.op)) return `key ${key.key_id} may not call "${plan.op}" (it may call: ${key.ops.join(', ')})`;
  return null;
}

/** What a human approved must be what runs: the same argv, cwd and environment, and processes left
 *  running only if the card said so. Not the limits: a request's own can only make them tighter, and
 *  the operation's are the allowlist's, which the human chose. */
export function samePlan(a: RunPlan | null, b: RunPlan): boolean {
  return a !== null && JSON.stringify([a.argv, a.cwd, a.env, a.leaves_processes === true]) === JSON.stringify([b.argv, b.cwd, b.env, b.leaves_processes === true]);
}

export function gate(i: GateInput): GateResult {
  const now = i.now ?? new Date();
  const planned = planRun(i.allowlist, i.op, i.args, i.limits);
  if (!planned.ok) return { kind: 'refuse', code: planned.code, message: planned.message };
  const plan = planned.plan;
  const scope = scopeProblem(i.key, plan);
  if (scope) return { kind: 'refuse', code: 'scope_denied', message: scope };

  const shared = sharedRoots(i.allowlist.operations.get(plan.op)!);
  const ask = (ceiling: string | null): GateResult => ({
    kind: 'ask',
    plan,
    approval: {
      operation: plan.op,
      argv: plan.argv,
      cwd: plan.cwd,
      key_id: i.key.key_id,
      key_name: i.key.name,
      intent: i.intent,
      requested_at: now.toISOString(),
      timeout_at: new Date(now.getTime() + i.settings.approval_timeout_s * 1000).toISOString(),
      ceiling,
      ...(shared.length > 0 ? { shared_with_sandbox: shared } : {}),
      ...(plan.leaves_processes ? { leaves_processes: true } : {}),
    },
  });

  // A `reject` ceiling always holds; an `ask` ceiling holds until a human let this very run past it.
  const approvedAsIs = i.approved != null && samePlan(i.approved.plan, plan);
  const crossed = crossings(i.requests, i.settings.ceilings, i.key.key_id, plan.cost, now);
  const hard = crossed.find((c) => c.ceiling.action === 'reject');
  if (hard) return { kind: 'refuse', code: 'spend_ceiling', message: hard.message };
  if (crossed.length > 0 && !(approvedAsIs && i.approved!.ceilingOverride)) return ask(crossed.map((c) => c.message).join('; '));
  if (plan.approval === 'never' || approvedAsIs) return { kind: 'go', plan, grant: null };
  // A grant covers only calls whose checked arguments are within its rules (policy/grantRules.ts).
  const grant = i.grants.active(i.key.key_id, plan.op, plan.args, now);
  return grant ? { kind: 'go', plan, grant } : ask(null);
}
