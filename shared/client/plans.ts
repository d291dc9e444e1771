// Plans from the sandbox side: the steps an agent proposes for one human approval (`dw plan FILE`, the
// MCP tool dumbwaiter_plan), checked here for shape so that a mistake is named before anything is
// written (the host checks every step again, against its allowlist and the key's scope), and the words
// for a plan the host answered: each step as it will run, and the request that used it.
import { checkPlanShape, type ProposedStep } from '../protocol/plan';
import type { CatalogDoc, PlanStep, ResultDoc } from '../protocol/types';
import { visible } from '../text/visible';
import { utcText } from './approvalWait';
import { checkArgs, ArgError } from './typedArgs';

/** How long an approved plan may be used unless the agent says (at most MAX_PLAN_LIFETIME_S). */
export const DEFAULT_PLAN_EXPIRES_S = 3600;

export class PlanError extends Error {}

/**
 * The steps of a plan, from `{"steps": [...]}` or the bare array, of the shape every plan has
 * (checkPlanShape), and, when the catalog could be read, each op one it offers with arguments that
 * fit its schema.
 */
export function checkPlanSteps(value: unknown, catalog: CatalogDoc | null): ProposedStep[] {
  const args = Array.isArray(value) ? { steps: value } : value;
  if (typeof args !== 'object' || args === null) throw new PlanError('a plan is {"steps": [{"op": ..., "args": {...}}, ...]} or just that list');
  const shape = checkPlanShape(args as Record<string, unknown>);
  if (!shape.ok) throw new PlanError(shape.message);
  const offered = catalog?.operations ?? null;
  if (!offered) return shape.steps;
  for (const [i, { op, args: stepArgs }] of shape.steps.entries()) {
    const at = `steps[${i}]`;
    const entry = offered.find((o) => o.name === op);
    if (!entry) throw new PlanError(`${at}: the host offers no operation "${op}" (it offers: ${offered.map((o) => o.name).join(', ') || 'none'})`);
    try {
      checkArgs(entry.args_schema, stepArgs);
    } catch (e) {
      if (e instanceof ArgError) throw new PlanError(`${at} (${op}): ${e.message}`);
      throw e;
    }
  }
  return shape.steps;
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
  if (s.state === 'succeeded') return `plan ${s.id}: approved${by ? ` by ${visible(by)}` : ''}, usable until ${utcText(s.plan?.expires_at) ?? 'it expires'}`;
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
