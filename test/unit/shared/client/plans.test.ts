// Plans on the sandbox side: what a plan file may hold (checked before anything is written), and the
// words for a plan the host answered; the flags that go into a request; what a result says about a run
// the host lost sight of. dw.py (imported with python3) says the same as dw.cjs for each.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PlanError, checkPlanSteps, parsePlanText, planBody, planHead } from '../../../../shared/client/plans';
import { FlagError, durationSeconds, positiveInteger } from '../../../../shared/client/flagValues';
import { MAX_PLAN_LIFETIME_S, MAX_PLAN_STEPS, PLAN_OP } from '../../../../shared/protocol/plan';
import { MAX_REQUEST_LIMIT } from '../../../../shared/protocol/envelope';
import { runNotes } from '../../../../shared/client/runNotes';
import type { CatalogDoc, PlanStep, ResultDoc } from '../../../../shared/protocol/types';

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

function result(over: Partial<ResultDoc>): ResultDoc {
  return {
    v: 1, id: 'p-1', op: 'dumbwaiter.plan', state: 'succeeded', updated_at: '', exit_code: null, signal: null, stdout: '', stderr: '', stdout_truncated: false,
    stderr_truncated: false, started_at: null, finished_at: null, duration_ms: null, error: null, ...over,
  };
}

const card = { operation: 'dumbwaiter.plan', argv: [], cwd: '', key_id: 'k', key_name: 'k', intent: null, requested_at: '', timeout_at: '', ceiling: null, steps: [step()] };

/** Plans as the host answers them, with the first line and the steps each client prints. */
const PLANS: [string, ResultDoc, string, string[]][] = [
  [
    'once approved: who approved it, until when, each step as it runs and the request that used it, and how to use it',
    result({
      approval: { ...card, decided_by: 'cli (user)' },
      plan: { expires_at: '2026-12-01T01:00:00.000Z', steps: [step({ request_id: 'r-1', state: 'succeeded' }), step({ op: 'deploy', args: { count: 1 }, argv: ['echo', 'deployed'], scope: 'write' })] },
    }),
    'plan p-1: approved by cli (user), usable until 2026-12-01T01:00:00.000Z',
    [
      '  1. echo {"msg":"hi"}: runs ["echo","hi"] in /work (read); used by r-1 (succeeded)',
      '  2. deploy {"count":1}: runs ["echo","deployed"] in /work (write); not used yet',
      'run each step with: dw run OP name=value ... --plan p-1 (the operation and arguments of a step, each step once: it then runs without asking)',
    ],
  ],
  ['while it waits: the steps of the approval card', result({ state: 'awaiting_approval', approval: card }), 'plan p-1: waiting for a human to approve it', ['  1. echo {"msg":"hi"}: runs ["echo","hi"] in /work (read); not used yet']],
  ['once denied: the steps, and no way to use them', result({ state: 'denied', approval: card }), 'plan p-1: denied', ['  1. echo {"msg":"hi"}: runs ["echo","hi"] in /work (read); not used yet']],
  [
    'an argument that would act on a terminal, escaped',
    result({ plan: { expires_at: 'x', steps: [step({ args: { msg: '\u202egpj.exe' }, argv: ['echo', '\u202egpj.exe'] })] } }),
    'plan p-1: approved, usable until x',
    ['  1. echo {"msg":"\\u202egpj.exe"}: runs ["echo","\\u202egpj.exe"] in /work (read); not used yet', expect.stringContaining('--plan p-1') as unknown as string],
  ],
];

describe('a plan the host answered', () => {
  it.each(PLANS)('%s', (_what, s, head, body) => {
    expect(planHead(s)).toBe(head);
    expect(planBody(s)).toEqual(body);
  });
});

const DAY = 24 * 3600;
const BAD_WHOLE = ['0', '-1', '2.5', '1e3', '', ' 5', '0x10', String(MAX_REQUEST_LIMIT + 1), '٥'];
const DURATIONS: [string, number][] = [['90', 90], ['45s', 45], ['30m', 1800], ['2h', 7200], ['1h30m', 5400], ['24h', DAY]];
const BAD_DURATIONS = ['', '0', '0s', '1h30', 'h', '1d', '-1h', '1.5h', 'm30', '٥s'];

describe("dw's flags that go into a request", () => {
  it('--time-limit and --max-output: a whole number from 1 up', () => {
    expect(positiveInteger(undefined, '--time-limit', 'seconds')).toBeUndefined();
    expect(positiveInteger('5', '--time-limit', 'seconds')).toBe(5);
    expect(positiveInteger(String(MAX_REQUEST_LIMIT), '--max-output', 'bytes')).toBe(MAX_REQUEST_LIMIT);
    for (const bad of BAD_WHOLE) {
      expect(() => positiveInteger(bad, '--time-limit', 'seconds')).toThrow(new FlagError(`--time-limit takes a whole number of seconds from 1 to ${MAX_REQUEST_LIMIT}, not "${bad}"`));
    }
  });

  it('--expires: a duration of at most 24 h', () => {
    for (const [text, s] of DURATIONS) expect(durationSeconds(text, '--expires', DAY)).toBe(s);
    for (const bad of BAD_DURATIONS) expect(() => durationSeconds(bad, '--expires', DAY)).toThrow(`--expires takes a duration such as 45s, 30m, 2h or 1h30m, not "${bad}"`);
    expect(() => durationSeconds('25h', '--expires', DAY)).toThrow('--expires is at most 24 h (86400 s), not 25h');
  });
});

const attempt = { at: '', argv: ['/usr/bin/gh', 'release', 'view', 'v1'], stdout: '', stderr: '', by: 'daemon (restart)', signal: null };
const run = (over: Partial<ResultDoc>) => result({ id: 'r-1', op: 'deploy', ...over });

/** Results of runs the host lost sight of, and the lines each client says about them. */
const NOTES: [string, ResultDoc, string[]][] = [
  ['an orphaned run', run({ state: 'running', orphaned: true }), ['r-1 is still running after the host restarted: the host watches it until it ends (dw cancel r-1 ends it)']],
  ['an orphan, once it ended (said only while it runs)', run({ state: 'cancelled', orphaned: true }), []],
  ['reconciled: applied', run({ state: 'succeeded', resolved_by: 'reconcile', reconcile: { ...attempt, exit_code: 0, error: null, verdict: 'applied' } }), ["r-1: the host's reconcile check says it took effect (exit code 0)"]],
  [
    'reconciled: not applied',
    run({ state: 'failed', resolved_by: 'reconcile', reconcile: { ...attempt, exit_code: 1, error: null, verdict: 'not_applied' } }),
    ["r-1: the host's reconcile check says it did not take effect (exit code 1): safe to retry with a new id"],
  ],
  ['a check that could not tell', run({ state: 'uncertain', reconcile: { ...attempt, exit_code: 3, error: null, verdict: 'unknown' } }), ["r-1: the host's reconcile check says it could not tell (exit code 3)"]],
  ['a check killed by a signal', run({ state: 'uncertain', reconcile: { ...attempt, exit_code: null, signal: 'SIGKILL', error: null, verdict: 'unknown' } }), ["r-1: the host's reconcile check says it could not tell (signal SIGKILL)"]],
  [
    'a check that could not run',
    run({ state: 'uncertain', reconcile: { ...attempt, exit_code: null, error: 'timeout after 30 s', verdict: 'unknown' } }),
    ['r-1: the host could not check whether its effect happened: timeout after 30 s'],
  ],
  [
    'settled by a human after the check',
    run({ state: 'succeeded', resolved_by: 'human', note: 'checked by hand', reconcile: { ...attempt, exit_code: 3, error: null, verdict: 'unknown' } }),
    ["r-1: the host's reconcile check says it could not tell (exit code 3)", 'r-1 was settled by a human: checked by hand'],
  ],
  ['settled by reconcile, the attempt not given', run({ state: 'succeeded', resolved_by: 'reconcile' }), ["r-1 was settled by the host's reconcile check"]],
  ['a run the host saw through', run({ state: 'succeeded' }), []],
];

describe('what a result says about a run the host lost sight of, one line each', () => {
  it.each(NOTES)('%s', (_what, s, lines) => {
    expect(runNotes(s)).toEqual(lines);
  });

  it("shows a human's note that would act on a terminal escaped", () => {
    expect(runNotes(run({ state: 'succeeded', resolved_by: 'human', note: 'ok\u001b[2A' }))).toEqual(['r-1 was settled by a human: ok\\x1b[2A']);
  });
});

const DW_PY_DIR = path.resolve(import.meta.dirname, '../../../../shared/client');
const HARNESS = `
import json, sys
sys.path.insert(0, sys.argv[1])
import dw
def call(c):
    try:
        if c[0] == "plan":
            return {"ok": dw.check_plan_steps(dw.parse_json_text(c[1], "the plan"), c[2])}
        if c[0] == "whole":
            o = dw.Opts()
            o.flags = {c[1]: c[2]}
            return {"ok": dw.positive_int(o, c[1], c[3])}
        if c[0] == "duration":
            return {"ok": dw.duration_seconds(c[1], c[2], c[3])}
        if c[0] == "constants":
            return {"ok": [dw.PLAN_OP, dw.MAX_PLAN_STEPS, dw.MAX_PLAN_LIFETIME_S, dw.MAX_REQUEST_LIMIT]}
        if c[0] == "plan_lines":
            return {"ok": [dw.plan_head(c[1])] + dw.plan_body(c[1])}
        return {"ok": dw.run_notes(c[1])}
    except dw.DwError as e:
        return {"error": e.message}
    except dw.Usage as e:
        return {"error": str(e)}
for line in sys.stdin:
    print(json.dumps(call(json.loads(line))))
`;

/** What dw.py's functions give for each case (one python3 for all of them). */
function dwPy(cases: unknown[][]): { ok?: unknown; error?: string }[] {
  const r = spawnSync('python3', ['-c', HARNESS, DW_PY_DIR], { input: cases.map((c) => JSON.stringify(c)).join('\n'), encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { ok?: unknown; error?: string });
}

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

  it('of --time-limit, --max-output and --expires', () => {
    const cases = [
      ['whole', '--time-limit', '5', 'seconds'],
      ['whole', '--max-output', String(MAX_REQUEST_LIMIT), 'bytes'],
      ...BAD_WHOLE.map((bad) => ['whole', '--time-limit', bad, 'seconds']),
      ...[...DURATIONS.map(([text]) => text), ...BAD_DURATIONS, '25h'].map((text) => ['duration', text, '--expires', DAY]),
    ];
    const ts = cases.map((c) => {
      try {
        return { ok: c[0] === 'whole' ? positiveInteger(c[2] as string, c[1] as string, c[3] as string) : durationSeconds(c[1] as string, '--expires', DAY) };
      } catch (e) {
        return { error: (e as Error).message };
      }
    });
    expect(dwPy(cases)).toEqual(ts);
  });

  it("of a plan the host answered, and of a run it lost sight of", () => {
    const py = dwPy([...PLANS.map(([, s]) => ['plan_lines', s]), ...NOTES.map(([, s]) => ['notes', s])]);
    expect(py.slice(0, PLANS.length).map((r) => r.ok)).toEqual(PLANS.map(([, s]) => [planHead(s), ...planBody(s)]));
    expect(py.slice(PLANS.length).map((r) => r.ok)).toEqual(NOTES.map(([, s]) => runNotes(s)));
  });
});
