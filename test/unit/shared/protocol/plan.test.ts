// The shape every plan has, as host and clients both check it: a table of plan args, what each gives.
// (How each side words what else it checks: test/unit/core/policy/plans.test.ts, test/unit/shared/client/plans.test.ts.)
import { describe, expect, it } from 'vitest';
import { MAX_PLAN_STEPS, checkPlanShape } from '../../../../shared/protocol/plan';

const echo = { op: 'echo', args: { msg: 'hi' } };

const refused: [string, Record<string, unknown>, string][] = [
  ['another field', { steps: [echo], note: 'x' }, 'a plan has only "steps", not "note"'],
  ['a field name that would act on a terminal, escaped', { steps: [echo], '\u001b[2J': 1 }, 'a plan has only "steps", not "\\x1b[2J"'],
  ['no steps', {}, 'a plan is {"steps": [{"op": ..., "args": {...}}, ...]}'],
  ['steps that are not a list', { steps: echo }, 'a plan is {"steps": [{"op": ..., "args": {...}}, ...]}'],
  ['an empty list', { steps: [] }, 'a plan needs at least one step'],
  ['one step too many', { steps: Array(MAX_PLAN_STEPS + 1).fill(echo) }, `a plan has at most ${MAX_PLAN_STEPS} steps, this one has ${MAX_PLAN_STEPS + 1}`],
  ['a step that is not an object', { steps: [echo, ['echo']] }, 'steps[1] must be an object {"op": ..., "args": {...}}'],
  ['a step with another field', { steps: [{ ...echo, why: 'x' }] }, 'steps[0] has only "op" and "args", not "why"'],
  ['a step without op', { steps: [{ args: {} }] }, 'steps[0].op must be an operation name'],
  ['an op that is not a name', { steps: [{ op: '../echo' }] }, 'steps[0].op must be an operation name'],
  ['a built-in', { steps: [{ op: 'dumbwaiter.cancel', args: { target: 'x' } }] }, 'steps[0]: dumbwaiter.cancel is built in, not an operation a plan can hold'],
  ['args that are a list', { steps: [{ op: 'echo', args: ['hi'] }] }, 'steps[0].args must be an object'],
  ['args that are null', { steps: [{ op: 'echo', args: null }] }, 'steps[0].args must be an object'],
];

describe('the shape of a plan', () => {
  it(`takes 1 to ${MAX_PLAN_STEPS} steps of an op and its args (left out: none), whatever the ops are`, () => {
    expect(checkPlanShape({ steps: [echo, { op: 'any.thing' }] })).toEqual({ ok: true, steps: [echo, { op: 'any.thing', args: {} }] });
    expect(checkPlanShape({ steps: Array(MAX_PLAN_STEPS).fill(echo) })).toMatchObject({ ok: true, steps: { length: MAX_PLAN_STEPS } });
  });

  it.each(refused)('refuses %s, naming what is wrong', (_what, args, message) => {
    expect(checkPlanShape(args)).toEqual({ ok: false, message });
  });
});
