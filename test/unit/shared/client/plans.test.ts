// Plans on the sandbox side: what a plan file may hold (checked before anything is written), and the
// words for a plan the host answered. dw.py (imported with python3) says the same as dw.cjs for each.
import { describe, expect, it } from 'vitest';
import { PlanError, checkPlanSteps, parsePlanText, planBody, planHead } from '../../../../shared/client/plans';
import { MAX_PLAN_LIFETIME_S, MAX_PLAN_STEPS, PLAN_OP } from '../../../../shared/protocol/plan';
import { MAX_REQUEST_LIMIT } from '../../../../shared/protocol/envelope';
import type { CatalogDoc, PlanStep, ResultDoc } from '../../../../shared/protocol/types';
import { dwPy, resultDoc } from '../../../helpers/clientCases';

const CATALOG: CatalogDoc = {
  v: 1,
  updated_at: '2026-12-01T00:00:00.000Z',
  operations: [
    {
      name: 'echo',
      description: 'Print',
      scope: 'read',
      approval: 'never',
      timeout_s: 60,
      args_schema: { type: 'object', properties: { msg: { type: 'string', maxLength: 10 } }, required: ['msg'], additionalProperties: false },
    },
    {
      name: 'deploy',
      description: 'Ship',
      scope: 'write',
      approval: 'always',
      timeout_s: 600,
      args_schema: { type: 'object', properties: { count: { type: 'integer', minimum: 1, maximum: 3 } }, additionalProperties: false },
    },
  ],
};

/** Plan files each client refuses before writing anything, and what its message says (dw.py's may go on). */
const REFUSED: [string, string, string][] = [
  ['not JSON', '{"steps": [', 'the plan is not valid JSON'],
  ['a string', '"echo"', 'a plan is {"steps": [{"op": ..., "args": {...}}, ...]} or just that list'],
  ['another key', '{"steps": [], "intent": "x"}', 'a plan has only "steps", not "intent"'],
  ['another key that would act on a terminal', '{"steps": [], "\u202ex": 1}', 'a plan has only "steps", not "\\u202ex"'],
  ['steps that are not a list', '{"steps": {"op": "echo"}}', 'a plan is {"steps": [{"op": ..., "args": {...}}, ...]}'],
  ['no steps', '{"steps": []}', 'a plan needs at least one step'],
  ['a step that is not an object', '[["echo"]]', 'steps[0] must be an object'],
  ['a misspelt field', '[{"op": "echo", "arg": {}}]', 'steps[0] has only "op" and "args", not "arg"'],
  ['no op', '[{"args": {}}]', 'steps[0].op must be an operation name'],
  ['an op that is not a name', '[{"op": "../echo"}]', 'steps[0].op must be an operation name'],
  ['args that are a list', '[{"op": "echo", "args": ["hi"]}]', 'steps[0].args must be an object'],
  ['a built-in', '[{"op": "echo", "args": {"msg": "a"}}, {"op": "dumbwaiter.cancel", "args": {"target": "x"}}]', 'steps[1]: dumbwaiter.cancel is built in'],
  ['a shape mistake after an op the host does not offer (the shape first, as the host checks it)', '[{"op": "rm"}, {"op": "echo", "args": 1}]', 'steps[1].args must be an object'],
  ['an op the host does not offer', '[{"op": "rm"}]', 'steps[0]: the host offers no operation "rm" (it offers: echo, deploy)'],
  ['args that do not fit', '[{"op": "deploy", "args": {"count": 9}}]', 'steps[0] (deploy): argument "count" must be at most 3'],
  ['a required argument missing', '[{"op": "echo"}]', 'steps[0] (echo): missing required argument "msg"'],
];

function planError(value: unknown, catalog: CatalogDoc | null = CATALOG): string {
  try {
    checkPlanSteps(value, catalog);
  } catch (e) {
    if (e instanceof PlanError) return e.message;
    throw e;
  }
  throw new Error('no PlanError');
}

describe('a plan file', () => {
  it('is {"steps": [...]} or just the list; args may be left out', () => {
    const steps = [{ op: 'echo', args: { msg: 'hi' } }, { op: 'deploy' }];
    expect(checkPlanSteps({ steps }, CATALOG)).toEqual([{ op: 'echo', args: { msg: 'hi' } }, { op: 'deploy', args: {} }]);
    expect(checkPlanSteps(steps, CATALOG)).toEqual(checkPlanSteps({ steps }, CATALOG));
    expect(parsePlanText(JSON.stringify({ steps }), CATALOG)).toHaveLength(2);
  });

  it.each(REFUSED)('refuses %s, naming what is wrong', (_what, text, message) => {
    expect(() => parsePlanText(text, CATALOG)).toThrow(PlanError);
    expect(() => parsePlanText(text, CATALOG)).toThrow(message);
  });

  it(`holds at most ${MAX_PLAN_STEPS} steps`, () => {
    const step = { op: 'echo', args: { msg: 'x' } };
    expect(checkPlanSteps(Array(MAX_PLAN_STEPS).fill(step), CATALOG)).toHaveLength(MAX_PLAN_STEPS);
    expect(planError(Array(MAX_PLAN_STEPS + 1).fill(step))).toBe(`a plan has at most ${MAX_PLAN_STEPS} steps, this one has ${MAX_PLAN_STEPS + 1}`);
  });

  it('without a readable catalog, is checked for shape only (the host checks the operations)', () => {
    expect(checkPlanSteps([{ op: 'anything', args: { x: 1 } }], null)).toEqual([{ op: 'anything', args: { x: 1 } }]);
    expect(planError([{ op: 'dumbwaiter.ping' }], null)).toContain('is built in');
  });

  it('names a key that would act on a terminal only escaped', () => {
    expect(planError({ steps: [], '\u001b[2Jx': 1 })).toBe('a plan has only "steps", not "\\x1b[2Jx"');
  });
});

const step = (over: Partial<PlanStep> = {}): PlanStep => ({ op: 'echo', args: { msg: 'hi' }, argv: ['echo', 'hi'], cwd: '/work', scope: 'read', request_id: null, state: null, ...over });

const result = (over: Partial<ResultDoc>): ResultDoc => resultDoc({ id: 'p-1', op: 'dumbwaiter.plan', ...over });

const card = { operation: 'dumbwaiter.plan', argv: [], cwd: '', key_id: 'k', key_name: 'k', intent: null, requested_at: '', timeout_at: '', ceiling: null, steps: [step()] };

/** Plans as the host answers them, with the first line and the steps each client prints. */
const PLANS: [string, ResultDoc, string, string[]][] = [
  [
    'once approved: who approved it, until when, each step as it runs and the request that used it, and how to use it',
    result({
      approval: { ...card, decided_by: 'cli (user)' },
      plan: { expires_at: '2026-12-01T01:00:00.000Z', steps: [step({ request_id: 'r-1', state: 'succeeded' }), step({ op: 'deploy', args: { count: 1 }, argv: ['echo', 'deployed'], scope: 'write' })] },
    }),
    'plan p-1: approved by cli (user), usable until 2026-12-01 01:00:00 UTC',
    [
      '  1. echo {"msg":"hi"}: runs ["echo","hi"] in /work (read); used by r-1 (succeeded)',
      '  2. deploy {"count":1}: runs ["echo","deployed"] in /work (write); not used yet',
      'run each step with: dw run OP name=value ... --plan p-1 (the operation and arguments of a step, each step once: it then runs without asking)',
    ],
  ],
  [
    'an expiry written with an offset, in UTC (raw, 02:00+01:00 reads as an hour later than it is)',
    result({ approval: card, plan: { expires_at: '2026-12-01T02:00:00+01:00', steps: [step({})] } }),
    'plan p-1: approved, usable until 2026-12-01 01:00:00 UTC',
    ['  1. echo {"msg":"hi"}: runs ["echo","hi"] in /work (read); not used yet', expect.stringContaining('--plan p-1') as unknown as string],
  ],
  ['while it waits: the steps of the approval card', result({ state: 'awaiting_approval', approval: card }), 'plan p-1: waiting for a human to approve it', ['  1. echo {"msg":"hi"}: runs ["echo","hi"] in /work (read); not used yet']],
  ['once denied: the steps, and no way to use them', result({ state: 'denied', approval: card }), 'plan p-1: denied', ['  1. echo {"msg":"hi"}: runs ["echo","hi"] in /work (read); not used yet']],
  [
    'an argument that would act on a terminal, escaped',
    result({ plan: { expires_at: 'x', steps: [step({ args: { msg: '\u202egpj.exe' }, argv: ['echo', '\u202egpj.exe'] })] } }),
    'plan p-1: approved, usable until it expires',
    ['  1. echo {"msg":"\\u202egpj.exe"}: runs ["echo","\\u202egpj.exe"] in /work (read); not used yet', expect.stringContaining('--plan p-1') as unknown as string],
  ],
];

describe('a plan the host answered', () => {
  it.each(PLANS)('%s', (_what, s, head, body) => {
    expect(planHead(s)).toBe(head);
    expect(planBody(s)).toEqual(body);
  });
});

describe('dw.py says the same', () => {
  it('of plan files: the same steps, and each refusal with the same words (its own after them)', () => {
    const good = JSON.stringify({ steps: [{ op: 'echo', args: { msg: 'hi' } }, { op: 'deploy' }] });
    const [ok, noCatalog, tooMany, ...refused] = dwPy([
      ['plan', good, CATALOG.operations],
      ['plan', '[{"op": "anything", "args": {"x": 1}}]', null],
      ['plan', JSON.stringify(Array(MAX_PLAN_STEPS + 1).fill({ op: 'echo', args: { msg: 'x' } })), CATALOG.operations],
      ...REFUSED.map(([, text]) => ['plan', text, CATALOG.operations]),
    ]);
    expect(ok!.ok).toEqual(parsePlanText(good, CATALOG));
    expect(noCatalog!.ok).toEqual([{ op: 'anything', args: { x: 1 } }]);
    expect(tooMany!.error).toBe(`a plan has at most ${MAX_PLAN_STEPS} steps, this one has ${MAX_PLAN_STEPS + 1}`);
    refused.forEach((r, i) => expect(r.error, REFUSED[i]![0]).toContain(REFUSED[i]![2]));
  });

  it("of the protocol's plan and limit rules it keeps a copy of", () => {
    expect(dwPy([['constants']])[0]!.ok).toEqual([PLAN_OP, MAX_PLAN_STEPS, MAX_PLAN_LIFETIME_S, MAX_REQUEST_LIMIT]);
  });

  it('of a plan the host answered', () => {
    expect(dwPy(PLANS.map(([, s]) => ['plan_lines', s])).map((r) => r.ok)).toEqual(PLANS.map(([, s]) => [planHead(s), ...planBody(s)]));
  });
});
