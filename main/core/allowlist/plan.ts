// From a request's op and args to exactly what will run: argv, cwd, env, limits.
import { validateArgs } from './validateArgs';
import { render, type PathSlot } from './template';
import type { Allowlist, Operation } from './types';

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
}

export type PlanResult =
  | { ok: true; plan: RunPlan }
  | { ok: false; code: 'unknown_op' | 'bad_args'; message: string };

export function planRun(allowlist: Allowlist, opName: string, args: Record<string, unknown>): PlanResult {
  const op = allowlist.operations.get(opName);
  if (!op) return { ok: false, code: 'unknown_op', message: `no operation "${opName}" in this host's allowlist` };
  const checked = validateArgs(op, args);
  if (!checked.ok) return { ok: false, code: 'bad_args', message: checked.message };
  const { argv, paths } = render(op.template, op.args, checked.values);
  return {
    ok: true,
    plan: {
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
    },
  };
}
