// Plans on a real allowlist and ledger: what a proposal must be to reach a human (every step a valid
// call this key may make, an expiry within a day), and when a request is a step of an approved plan
// (same key, approved, unexpired, an unused step with equal op and args that would run as approved).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAllowlist } from '../../../../main/core/allowlist/load';
import { PLAN_OP, claimBeforeStart, keptSteps, matchStep, planDocOf, proposePlan, stepsWith, type ProposalInput } from '../../../../main/core/policy/plans';
import { MAX_PLAN_STEPS } from '../../../../shared/protocol/plan';
import type { KeyInfo } from '../../../../main/core/keys/keyStore';
import type { RequestRow } from '../../../../main/core/ledger/requests';
import { TestLedger } from '../../../helpers/ledger';
import { DEPLOY, GREET, allowlistYaml } from '../../../helpers/allowlists';

const allowlistText = (word = 'hello', stage = 'one') =>
  allowlistYaml(
    { ...GREET, command: ['/bin/echo', word, '{name}', '{times}'], args: { ...GREET.args, times: { type: 'integer', min: 1, max: 9 } } },
    { ...DEPLOY, env: { STAGE: stage } },
  );
const allowlist = parseAllowlist(allowlistText());
const keyOf = (scope: 'read' | 'write', ops: string[] | null = null): KeyInfo => ({
  key_id: `k_${scope}`,
  name: `${scope} agent`,
  scope,
  ops,
  created_at: new Date().toISOString(),
  revoked_at: null,
  rotated_to: null,
  last_used_at: null,
  spool: 'default',
});
const writer = keyOf('write');
const now = new Date();
const inAnHour = new Date(now.getTime() + 3600_000).toISOString();

function propose(args: Record<string, unknown>, extra: Partial<ProposalInput> = {}) {
  return proposePlan({ allowlist, key: writer, args, expiresAt: inAnHour, intent: 'release 1.2', approvalTimeoutS: 600, now, ...extra });
}

const twoSteps = { steps: [{ op: 'greet', args: { name: 'ada', times: 2 } }, { op: 'deploy', args: { target: 'staging' } }] };

describe('proposing a plan', () => {
  it('shows every step as it would run on an approval card of its own', () => {
    const r = propose(twoSteps);
    if (!r.ok) throw new Error(r.message);
    expect(r.approval).toMatchObject({
      operation: PLAN_OP,
      argv: [],
      cwd: '',
      key_id: writer.key_id,
      key_name: 'write agent',
      intent: 'release 1.2',
      ceiling: null,
      requested_at: now.toISOString(),
      timeout_at: new Date(now.getTime() + 600_000).toISOString(),
    });
    expect(r.approval.steps).toEqual([
      { op: 'greet', args: { name: 'ada', times: 2 }, argv: ['/bin/echo', 'hello', 'ada', '2'], cwd: expect.any(String), scope: 'read', request_id: null, state: null },
      { op: 'deploy', args: { target: 'staging' }, argv: ['/bin/echo', 'deploy', 'staging'], cwd: expect.any(String), scope: 'write', request_id: null, state: null },
    ]);
    // The ledger keeps what else must hold for a step to run as approved; the wire does not show it.
    expect(r.steps[1]).toMatchObject({ env: { STAGE: 'one' }, leaves_processes: false });
  });

  it('refuses an empty plan, and one of more than 50 steps', () => {
    expect(propose({ steps: [] })).toEqual({ ok: false, code: 'bad_args', message: 'a plan needs at least one step' });
    const many = Array.from({ length: MAX_PLAN_STEPS + 1 }, () => ({ op: 'greet', args: { name: 'x', times: 1 } }));
    expect(propose({ steps: many })).toEqual({ ok: false, code: 'bad_args', message: 'a plan has at most 50 steps, this one has 51' });
    expect(propose({ steps: many.slice(1) }).ok).toBe(true);
  });

  it('refuses any other shape, naming what is wrong', () => {
    expect(propose({ steps: twoSteps.steps, note: 'x' })).toMatchObject({ code: 'bad_args', message: 'a plan has only "steps", not "note"' });
    expect(propose({ steps: 'greet' })).toMatchObject({ code: 'bad_args', message: 'a plan is {"steps": [{"op": ..., "args": {...}}, ...]}' });
    expect(propose({ steps: [twoSteps.steps[0], 'deploy'] })).toMatchObject({ code: 'bad_args', message: expect.stringMatching(/^steps\[1\] must be an object/) });
    expect(propose({ steps: [{ op: 'greet', args: {}, why: 'x' }] })).toMatchObject({ code: 'bad_args', message: 'steps[0] has only "op" and "args", not "why"' });
    expect(propose({ steps: [{ op: 'deploy', args: ['staging'] }] })).toMatchObject({ code: 'bad_args', message: 'steps[0].args must be an object' });
    expect(propose({ steps: [{ op: '../deploy', args: {} }] })).toMatchObject({ code: 'bad_args', message: 'steps[0].op must be an operation name' });
  });

  it('refuses a step of an operation the allowlist does not have', () => {
    const r = propose({ steps: [twoSteps.steps[0], { op: 'format_disk', args: {} }] });
    expect(r).toMatchObject({ ok: false, code: 'unknown_op', message: expect.stringMatching(/^steps\[1\] \(format_disk\): no operation "format_disk"/) });
  });

  it('refuses a built-in as a step', () => {
    for (const op of ['dumbwaiter.cancel', 'dumbwaiter.plan']) {
      expect(propose({ steps: [{ op, args: {} }] })).toMatchObject({ ok: false, code: 'bad_args', message: `steps[0]: ${op} is built in, not an operation a plan can hold` });
    }
  });

  it('refuses a step whose arguments the operation would refuse', () => {
    const r = propose({ steps: [twoSteps.steps[0], { op: 'deploy', args: { target: 'everywhere' } }] });
    expect(r).toMatchObject({ ok: false, code: 'bad_args', message: expect.stringMatching(/^steps\[1\] \(deploy\): .*target/) });
  });

  it('refuses a step this key may not call now', () => {
    expect(propose(twoSteps, { key: keyOf('read') })).toMatchObject({ ok: false, code: 'scope_denied', message: expect.stringMatching(/^steps\[1\]: key k_read has read scope/) });
    expect(propose(twoSteps, { key: keyOf('write', ['deploy']) })).toMatchObject({ ok: false, code: 'scope_denied', message: expect.stringMatching(/^steps\[0\]: key k_write may not call "greet"/) });
  });

  it('needs an expiry in the future and at most 24 h ahead', () => {
    expect(propose(twoSteps, { expiresAt: undefined })).toMatchObject({ ok: false, code: 'bad_args', message: expect.stringContaining("needs the payload's expires_at") });
    const past = new Date(now.getTime() - 1000).toISOString();
    expect(propose(twoSteps, { expiresAt: past })).toMatchObject({ ok: false, code: 'bad_args', message: `the plan's expires_at ${past} has passed` });
    const late = new Date(now.getTime() + 24 * 3600_000 + 1000).toISOString();
    expect(propose(twoSteps, { expiresAt: late })).toMatchObject({ ok: false, code: 'bad_args', message: expect.stringContaining('more than 24 h ahead') });
    expect(propose(twoSteps, { expiresAt: new Date(now.getTime() + 24 * 3600_000).toISOString() }).ok).toBe(true);
  });
});

describe('a request as a step of a plan', () => {
  let l: TestLedger;
  beforeEach(() => {
    l = new TestLedger();
  });
  afterEach(() => l.close());

  /** A plan of `writer` as intake records it and a human's approval leaves it. */
  function approvedPlan(id = 'plan-1', fields: Partial<Parameters<TestLedger['add']>[1]> = {}): RequestRow {
    const r = propose({ steps: [...twoSteps.steps, twoSteps.steps[0]] }); // greet twice: each once
    if (!r.ok) throw new Error(r.message);
    return l.add(id, { key_id: writer.key_id, op: PLAN_OP, state: 'succeeded', expires_at: inAnHour, approval: r.approval, steps_json: JSON.stringify(r.steps), ...fields });
  }
  const match = (plan: RequestRow | null, op: string, args: Record<string, unknown>, keyId = writer.key_id, al = allowlist, at = now) => matchStep(plan, 'plan-1', keyId, op, args, al, at);

  it('matches an unused step with the same arguments in another key order, as it will run now', () => {
    const plan = approvedPlan();
    const m = match(plan, 'greet', { times: 2, name: 'ada' });
    expect(m).toMatchObject({ ok: true, index: 0, plan: { op: 'greet', argv: ['/bin/echo', 'hello', 'ada', '2'] } });
  });

  it('does not match different arguments, another operation, or arguments with more in them, and says how the closest step differs', () => {
    const plan = approvedPlan();
    const closest = (op: string, rest: string) => ({ ok: false, reason: `no step of plan plan-1 is ${op} with these arguments: the closest, ${rest}` });
    expect(match(plan, 'greet', { name: 'ada', times: 3 })).toEqual(closest('greet', 'step 1, differs in times (step 2, request 3)'));
    expect(match(plan, 'deploy', { target: 'production' })).toEqual(closest('deploy', 'step 2, differs in target (step "staging", request "production")'));
    expect(match(plan, 'deploy', { target: 'staging', extra: 1 })).toEqual(closest('deploy', 'step 2, differs in extra (step none, request 1)'));
    expect(match(plan, 'greet', { name: 'x'.repeat(80) })).toEqual(closest('greet', `step 1, differs in name (step "ada", request "${'x'.repeat(58)}…) and times (step 2, request none)`));
    expect(match(plan, 'wave', {})).toEqual({ ok: false, reason: 'plan plan-1 has no step of operation wave (its steps are greet and deploy)' });
  });

  it('names an unused step as the closest before a used one that differs as little', () => {
    let plan = approvedPlan();
    plan = l.move(plan.id, 'succeeded', { steps_json: stepsWith(plan, 'req-a', 'queued', 0)! });
    expect(match(plan, 'greet', { name: 'ada', times: 5 })).toMatchObject({ reason: expect.stringContaining('the closest, step 3, differs in times') });
    plan = l.move(plan.id, 'succeeded', { steps_json: stepsWith(plan, 'req-b', 'queued', 2)! });
    expect(match(plan, 'greet', { name: 'ada', times: 5 })).toMatchObject({ reason: expect.stringContaining('the closest, step 1 (already used by req-a), differs in times') });
  });

  it('uses each step once: a used step matches the next equal one, then nothing', () => {
    let plan = approvedPlan();
    plan = l.move(plan.id, 'succeeded', { steps_json: stepsWith(plan, 'req-a', 'queued', 0)! });
    expect(match(plan, 'greet', { name: 'ada', times: 2 })).toMatchObject({ ok: true, index: 2 });
    plan = l.move(plan.id, 'succeeded', { steps_json: stepsWith(plan, 'req-b', 'queued', 2)! });
    expect(match(plan, 'greet', { name: 'ada', times: 2 })).toEqual({ ok: false, reason: 'the step of plan plan-1 with greet and these arguments was already used (by req-a, req-b)' });
    expect(() => stepsWith(plan, 'req-c', 'queued', 0)).toThrow('step 1 of plan plan-1 was already used by req-a');
  });

  it("does not match another key's plan, one not approved, or no plan", () => {
    expect(match(approvedPlan(), 'greet', { name: 'ada', times: 2 }, 'k_other')).toEqual({ ok: false, reason: 'no plan plan-1 of this key' });
    expect(match(approvedPlan('plan-2', { state: 'awaiting_approval' }), 'greet', { name: 'ada', times: 2 })).toEqual({ ok: false, reason: 'plan plan-1 is awaiting_approval, not approved' });
    expect(match(approvedPlan('plan-3', { state: 'denied' }), 'greet', { name: 'ada', times: 2 })).toMatchObject({ ok: false, reason: expect.stringContaining('denied, not approved') });
    expect(match(null, 'greet', { name: 'ada', times: 2 })).toEqual({ ok: false, reason: 'no plan plan-1 of this key' });
    expect(match(l.add('not-a-plan', { key_id: writer.key_id, state: 'succeeded' }), 'greet', { name: 'ada', times: 2 })).toEqual({ ok: false, reason: 'no plan plan-1 of this key' });
  });

  it('does not match once the plan has expired', () => {
    const plan = approvedPlan();
    expect(match(plan, 'greet', { name: 'ada', times: 2 }, writer.key_id, allowlist, new Date(Date.parse(inAnHour) + 1))).toEqual({ ok: false, reason: `plan plan-1 expired at ${inAnHour}` });
  });

  it('does not match a step that would now run something else than was approved', () => {
    const plan = approvedPlan();
    const changed = parseAllowlist(allowlistText('HELLO'));
    expect(match(plan, 'greet', { name: 'ada', times: 2 }, writer.key_id, changed)).toEqual({ ok: false, reason: 'what step 1 of plan plan-1 would run changed since the plan was approved' });
    const otherEnv = parseAllowlist(allowlistText('hello', 'two'));
    expect(match(plan, 'deploy', { target: 'staging' }, writer.key_id, otherEnv)).toMatchObject({ ok: false, reason: expect.stringContaining('changed since the plan was approved') });
  });

  it("follows the state of the request that took a step, and the plan's result shows it without the kept extras", () => {
    let plan = approvedPlan();
    plan = l.move(plan.id, 'succeeded', { steps_json: stepsWith(plan, 'req-a', 'queued', 1)! });
    expect(stepsWith(plan, 'req-a', 'queued')).toBeNull(); // nothing new
    expect(stepsWith(plan, 'req-z', 'running')).toBeNull(); // not a step of it
    plan = l.move(plan.id, 'succeeded', { steps_json: stepsWith(plan, 'req-a', 'succeeded')! });
    expect(keptSteps(plan)!.map((s) => [s.request_id, s.state])).toEqual([[null, null], ['req-a', 'succeeded'], [null, null]]);
    const doc = planDocOf(plan)!;
    expect(doc.expires_at).toBe(inAnHour);
    expect(doc.steps[1]).toEqual({ op: 'deploy', args: { target: 'staging' }, argv: ['/bin/echo', 'deploy', 'staging'], cwd: expect.any(String), scope: 'write', request_id: 'req-a', state: 'succeeded' });
  });
});

describe('the plan claim of a request the check before its start sends back to a human', () => {
  const row = (fields: Partial<RequestRow>) => ({ plan_id: 'plan-1', approved_by_plan: 'plan-1', ...fields }) as RequestRow;
  const plan = { expires_at: '2026-12-04T23:00:00.000Z' } as RequestRow;
  const had = (claim?: { plan_id: string; reason: string }) => ({ ...(claim ? { plan_claim: claim } : {}) }) as Parameters<typeof claimBeforeStart>[1];

  it('keeps the claim of one that never matched its plan (a human let it run)', () => {
    const claim = { plan_id: 'plan-1', reason: 'no plan plan-1 of this key' };
    expect(claimBeforeStart(row({ approved_by_plan: null, approved_by_actor: 'cli:me' }), had(claim), true, null, null)).toEqual(claim);
  });

  it('says why a step no longer holds: its plan expired or was withdrawn, or what it runs changed', () => {
    expect(claimBeforeStart(row({}), null, false, null, plan)).toEqual({ plan_id: 'plan-1', reason: 'plan plan-1 expired or was withdrawn at 2026-12-04T23:00:00.000Z, before this step could start' });
    expect(claimBeforeStart(row({}), null, false, 'one-run (1 of 1 runs)', plan)?.reason).toContain('expired or was withdrawn');
    expect(claimBeforeStart(row({}), null, true, null, plan)).toEqual({ plan_id: 'plan-1', reason: 'what this step of plan plan-1 would run changed since the plan was approved' });
  });

  it('names none for a step that only crosses a ceiling, one a human approved, or one that claims no plan', () => {
    expect(claimBeforeStart(row({}), null, true, 'one-run (1 of 1 runs)', plan)).toBeUndefined();
    expect(claimBeforeStart(row({ approved_by_plan: null, approved_by_actor: 'cli:me' }), had(), true, null, plan)).toBeUndefined();
    expect(claimBeforeStart(row({ plan_id: null, approved_by_plan: null, approved_by_grant: 'g_1' }), null, false, null, null)).toBeUndefined();
  });
});
