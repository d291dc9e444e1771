// From a request's op and args to exactly what will run: argv, cwd, env, limits. And the same for the
// operation's reconcile command, the lookup that says whether a run whose end the host missed took effect.
import { validateArgs } from './validateArgs';
import { REQUEST_ID_PLACEHOLDER, REQUEST_ID_SPEC, render, type PathSlot } from './template';
import { operationWorldProblem } from './roots';
import type { Allowlist, Operation } from './types';
import type { ReconcileAttempt } from '../../../shared/protocol/types';

export interface RunPlan {
  op: string;
  argv: string[];
  /** Where argv holds checked paths; the executor hands the program those very objects (absent: none). */
  paths?: PathSlot[];
  cwd: string;
  /** The operation declares its cwd shared with the sandbox: its links may be the sandbox's, so the
   *  executor never follows one there (absent: false). */
  cwd_shared?: true;
  /** The operation's own env; the base environment is added when the process starts. */
  env: Record<string, string>;
  timeout_s: number;
  max_output_bytes: number;
  concurrency: number;
  cost: number;
  scope: Operation['scope'];
  approval: Operation['approval'];
  /** The operation's `leaves_processes` (absent, as in plans recorded before it existed: false). */
  leaves_processes?: boolean;
  /** The arguments argv was rendered from, checked (defaults filled in, paths resolved): what a grant's
   *  per-argument rules compare. Absent in a reconcile's plan and in plans recorded before grants named
   *  their arguments. */
  args?: Record<string, unknown>;
}

export type PlanRefusal = { ok: false; code: 'unknown_op' | 'bad_args'; message: string };
export type PlanResult = { ok: true; plan: RunPlan & { args: Record<string, unknown> } } | PlanRefusal;
export type ReconcilePlanResult = { ok: true; plan: RunPlan } | PlanRefusal | { ok: false; code: 'no_reconcile'; message: string };

/** A request's own limits (payload `timeout_s`, `max_output_bytes`): at most the operation's. */
export interface RequestLimits {
  timeout_s?: number;
  max_output_bytes?: number;
}

/**
 * The operation `opName`, when it may run now: not one disabled at load, and none of its folders led
 * since into a spool or the home by a link (looked at again here, before each plan: a sandbox may
 * plant one between two ticks of the daemon). Either is refused as `unknown_op`, as it is not in the
 * catalog, naming why.
 */
function lookUp(allowlist: Allowlist, opName: string): Operation | PlanRefusal {
  const disabled = (why: string): PlanRefusal => ({ ok: false, code: 'unknown_op', message: `operation "${opName}" is disabled until the host's person makes its folders safe again: ${why}` });
  const off = allowlist.disabled.get(opName);
  if (off) return disabled(off.reason);
  const op = allowlist.operations.get(opName);
  if (!op) return { ok: false, code: 'unknown_op', message: `no operation "${opName}" in this host's allowlist` };
  const unsafe = operationWorldProblem(op, allowlist.context);
  return unsafe ? disabled(unsafe) : op;
}

/** The plan of `op`'s run as the allowlist sets it, argv aside. */
function basePlan(op: Operation, argv: string[], paths: PathSlot[]): RunPlan {
  return {
    op: op.name,
    argv,
    paths,
    cwd: op.cwd,
    ...(op.cwd_shared_with_sandbox ? { cwd_shared: true as const } : {}),
    env: op.env,
    timeout_s: op.timeout_s,
    max_output_bytes: op.max_output_bytes,
    concurrency: op.concurrency,
    cost: op.cost,
    scope: op.scope,
    approval: op.approval,
    leaves_processes: op.leaves_processes,
  };
}

/** The limit `name` the run gets: the request's when it asks for less; a problem when it asks for more. */
function limit(op: Operation, name: keyof RequestLimits, asked: number | undefined): number | string {
  if (asked === undefined) return op[name];
  return asked > op[name] ? `${name} ${asked} is more than operation "${op.name}" allows (${name} ${op[name]}): a request may only tighten it` : asked;
}

export function planRun(allowlist: Allowlist, opName: string, args: Record<string, unknown>, limits?: RequestLimits | null): PlanResult {
  const op = lookUp(allowlist, opName);
  if ('ok' in op) return op;
  const checked = validateArgs(op, args);
  if (!checked.ok) return { ok: false, code: 'bad_args', message: checked.message };
  const timeout = limit(op, 'timeout_s', limits?.timeout_s);
  const output = limit(op, 'max_output_bytes', limits?.max_output_bytes);
  for (const problem of [timeout, output]) if (typeof problem === 'string') return { ok: false, code: 'bad_args', message: problem };
  const { argv, paths } = render(op.template, op.args, checked.values);
  return { ok: true, plan: { ...basePlan(op, argv, paths), timeout_s: timeout as number, max_output_bytes: output as number, args: checked.values } };
}

/**
 * The run of `op`'s reconcile command for request `requestId` with its `args`: the op's cwd, env and
 * path rules, reconcile's timeout, the op's output limit; one at a time, free, and nothing it starts
 * outlives it.
 */
export function planReconcile(allowlist: Allowlist, opName: string, args: Record<string, unknown>, requestId: string): ReconcilePlanResult {
  const op = lookUp(allowlist, opName);
  if ('ok' in op) return op;
  if (!op.reconcile) return { ok: false, code: 'no_reconcile', message: `operation "${op.name}" declares no reconcile command` };
  const checked = validateArgs(op, args);
  if (!checked.ok) return { ok: false, code: 'bad_args', message: checked.message };
  const { argv, paths } = render(
    op.reconcile.template,
    { ...op.args, [REQUEST_ID_PLACEHOLDER]: REQUEST_ID_SPEC },
    { ...checked.values, [REQUEST_ID_PLACEHOLDER]: requestId },
  );
  return { ok: true, plan: { ...basePlan(op, argv, paths), timeout_s: op.reconcile.timeout_s, concurrency: 1, cost: 0, leaves_processes: false } };
}

/** What a reconcile run's end says: exit 0, the run took effect; exit 1, it did not; anything else
 *  (another code, a signal, a timeout, no start) cannot tell. */
export function reconcileVerdict(run: { exit_code: number | null; error: unknown }): ReconcileAttempt['verdict'] {
  if (run.error !== null) return 'unknown';
  return run.exit_code === 0 ? 'applied' : run.exit_code === 1 ? 'not_applied' : 'unknown';
}
