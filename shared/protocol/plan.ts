// The rules of a plan (`dumbwaiter.plan`) that host and sandbox clients share: the host refuses a
// proposal that breaks them (main/core/policy/plans.ts), and a client names the same mistake in the same
// words before anything is written (shared/client/plans.ts; dw.py keeps a copy, held to it by a test).
import { OP_NAME } from './ids';
import { visible } from '../text/visible';

export const PLAN_OP = 'dumbwaiter.plan';
export const MAX_PLAN_STEPS = 50;
/** How far ahead a plan's `expires_at` may be: an approval is not meant to outlive a working day. */
export const MAX_PLAN_LIFETIME_S = 24 * 3600;

/** A step as proposed: an operation and its arguments (left out: none). */
export interface ProposedStep {
  op: string;
  args: Record<string, unknown>;
}

export type PlanShape = { ok: true; steps: ProposedStep[] } | { ok: false; message: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const bad = (message: string): PlanShape => ({ ok: false, message });

/**
 * A plan's args checked for shape: `{"steps": [...]}` and nothing else, 1 to MAX_PLAN_STEPS steps, each
 * `{"op": NAME, "args": {...}}` and nothing else, no built-in operation. A refusal names the step
 * (`steps[i]`); names the sandbox chose are shown escaped. Whether each op exists and takes these
 * args is for the caller, which knows the operations.
 */
export function checkPlanShape(args: Record<string, unknown>): PlanShape {
  const extra = Object.keys(args).find((k) => k !== 'steps');
  if (extra !== undefined) return bad(`a plan has only "steps", not "${visible(extra)}"`);
  const proposed = args.steps;
  if (!Array.isArray(proposed)) return bad('a plan is {"steps": [{"op": ..., "args": {...}}, ...]}');
  if (proposed.length === 0) return bad('a plan needs at least one step');
  if (proposed.length > MAX_PLAN_STEPS) return bad(`a plan has at most ${MAX_PLAN_STEPS} steps, this one has ${proposed.length}`);
  const steps: ProposedStep[] = [];
  for (const [i, step] of proposed.entries()) {
    const at = `steps[${i}]`;
    if (!isObject(step)) return bad(`${at} must be an object {"op": ..., "args": {...}}`);
    const stray = Object.keys(step).find((k) => k !== 'op' && k !== 'args');
    if (stray !== undefined) return bad(`${at} has only "op" and "args", not "${visible(stray)}"`);
    const { op, args: stepArgs = {} } = step;
    if (typeof op !== 'string' || !OP_NAME.test(op)) return bad(`${at}.op must be an operation name`);
    if (op.startsWith('dumbwaiter.')) return bad(`${at}: ${op} is built in, not an operation a plan can hold`);
    if (!isObject(stepArgs)) return bad(`${at}.args must be an object`);
    steps.push({ op, args: stepArgs });
  }
  return { ok: true, steps };
}
