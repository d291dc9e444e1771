// Plans from the sandbox side: the steps an agent proposes for one human approval (`dw plan FILE`, the
// MCP tool dumbwaiter_plan), checked here for shape so that a mistake is named before anything is
// written (the host checks every step again, against its allowlist and the key's scope), and the words
// for a plan the host answered: each step as it will run, and the request that used it.
import { OP_NAME } from '../protocol/ids';
import type { CatalogDoc, PlanStep, ResultDoc } from '../protocol/types';
import { visible } from '../text/visible';
import { checkArgs, ArgError } from './typedArgs';

export const PLAN_OP = 'dumbwaiter.plan';
export const MAX_PLAN_STEPS = 50;
/** How long an approved plan may be used: the host refuses an expiry more than 24 h ahead. */
export const DEFAULT_PLAN_EXPIRES_S = 3600;
export const MAX_PLAN_EXPIRES_S = 24 * 3600;

export interface ProposedStep {
  op: string;
  args: Record<string, unknown>;
}

export class PlanError extends Error {}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function extraKey(o: Record<string, unknown>, allowed: string[]): string | undefined {
  return Object.keys(o).find((k) => !allowed.includes(k));
}

/**
 * The steps of a plan, from `{"steps": [...]}` or the bare array: 1 to MAX_PLAN_STEPS of
 * `{"op": ..., "args": {...}}` (args may be left out), no built-in operation, and, when the catalog
 * could be read, each op one it offers with arguments that fit its schema.
 */
export function checkPlanSteps(value: unknown, catalog: CatalogDoc | null): ProposedStep[] {
  let steps = value;
  if (isObject(value)) {
    const extra = extraKey(value, ['steps']);
    if (extra !== undefined) throw new PlanError(`a plan has only "steps", not "${visible(extra)}"`);
    steps = value.steps;
  }
  if (!Array.isArray(steps)) throw new PlanError('a plan is {"steps": [{"op": ..., "args": {...}}, ...]} or just that list');
  if (steps.length === 0) throw new PlanError('a plan needs at least one step');
  if (steps.length > MAX_PLAN_STEPS) throw new PlanError(`a plan has at most ${MAX_PLAN_STEPS} steps, this one has ${steps.length}`);
  const offered = catalog?.operations ?? null;
  return steps.map((step: unknown, i) => {
    const at = `steps[${i}]`;
    if (!isObject(step)) throw new PlanError(`${at} must be an object {"op": ..., "args": {...}}`);
    const extra = extraKey(step, ['op', 'args']);
    if (extra !== undefined) throw new PlanError(`${at} has only "op" and "args", not "${visible(extra)}"`);
    const { op, args = {} } = step;
    if (typeof op !== 'string' || !OP_NAME.test(op)) throw new PlanError(`${at}.op must be an operation name (see: dw ops)`);
    if (op.startsWith('dumbwaiter.')) throw new PlanError(`${at}: ${op} is built in, not an operation a plan can hold`);
    if (!isObject(args)) throw new PlanError(`${at}.args must be an object`);
    if (offered) {
      const entry = offered.find((o) => o.name === op);
      if (!entry) throw new PlanError(`${at}: the host offers no operation "${op}" (it offers: ${offered.map((o) => o.name).join(', ') || 'none'})`);
      try {
        checkArgs(entry.args_schema, args);
      } catch (e) {
        if (e instanceof ArgError) throw new PlanError(`${at} (${op}): ${e.message}`);
        throw e;
      }
    }
    return { op, args };
  });
}

/** The steps of a plan file's text (JSON). */
export function parsePlanText(text: string, catalog: CatalogDoc | null): ProposedStep[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new PlanError(`the plan is not valid JSON: ${(e as Error).message}`);
  }
  return checkPlanSteps(value, catalog);
}

/** The steps of a plan's result as the host signed them: once approved its own, before that the approval card's. */
export function planStepsOf(s: ResultDoc): PlanStep[] | null {
  return s.plan?.steps ?? s.approval?.steps ?? null;
}

/** Each step on one line: what it asks, what it runs and where, and the request that used it. */
export function planStepLines(steps: PlanStep[]): string[] {
  return steps.map((st, i) => {
    const used = st.request_id === null ? 'not used yet' : `used by ${st.request_id}${st.state ? ` (${st.state})` : ''}`;
    // The agent's own arguments, shown as the host will pass them: nothing in them may act on a terminal.
    return visible(`  ${i + 1}. ${st.op} ${JSON.stringify(st.args)}: runs ${JSON.stringify(st.argv)} in ${st.cwd} (${st.scope}); ${used}`);
  });
}

/** The first line about a plan: its decision (or that it waits for one). */
export function planHead(s: ResultDoc): string {
  const by = s.approval?.decided_by;
  if (s.state === 'succeeded') return `plan ${s.id}: approved${by ? ` by ${visible(by)}` : ''}, usable until ${s.plan?.expires_at ?? 'it expires'}`;
  return `plan ${s.id}: ${s.state === 'awaiting_approval' ? 'waiting for a human to approve it' : s.state}`;
}

/** The steps of a plan's result, and once approved how to use them. */
export function planBody(s: ResultDoc): string[] {
  const lines = planStepLines(planStepsOf(s) ?? []);
  if (s.state === 'succeeded') {
    lines.push(`run each step with: dw run OP name=value ... --plan ${s.id} (the operation and arguments of a step, each step once: it then runs without asking)`);
  }
  return lines;
}
