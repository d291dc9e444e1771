// Intake on a real ledger and real spool files, without a daemon: what one claimed file becomes, in
// protocol-v1's order (envelope and key, then the bound id, then admission), recorded by the lifecycle
// with who approved it in its own columns: a grant, a plan whose step it takes, or nobody yet.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HomeParts } from '../../../helpers/homeParts';
import { envelope } from '../../../helpers/host';
import { grantRules } from '../../../../main/core/policy/grantRules';
import { PLAN_OP } from '../../../../main/core/policy/plans';

let p: HomeParts;
beforeEach(() => {
  p = new HomeParts();
});
afterEach(async () => {
  await p.close();
  expect(p.caught).toEqual([]); // nothing the daemon would only have logged
});

const auditOf = (id: string) => p.core.audit.search({ requestId: id }).reverse();
const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();

describe('a request its policy lets run', () => {
  it('enters running in its own commit while a slot is free, approved by nobody, and its claimed file is gone', async () => {
    const { file } = p.key();
    expect(p.take(file, 'r1', 'greet', { name: 'ada' })).toEqual({ kind: 'recorded', state: 'running' });
    expect(existsSync(path.join(p.io.claimed, 'r1.json'))).toBe(false);
    expect(p.row('r1')).toMatchObject({ approved_by_actor: null, approved_by_grant: null, approved_by_plan: null, decided_by: null });
    expect(await p.until('r1', ['succeeded'])).toMatchObject({ stdout: 'hello ada\n' });
  });

  it('enters queued when the host is paused, and nothing starts', () => {
    p.core.flags.setPaused(true);
    expect(p.take(p.key().file, 'r1', 'greet', { name: 'ada' })).toEqual({ kind: 'recorded', state: 'queued' });
    expect(p.runner.size).toBe(0);
  });
});

describe('who approved it', () => {
  it('a grant that covers it: in the grant column, used once, and said in the audit entry', () => {
    const { info, file } = p.key();
    const g = p.core.grants.create(info.key_id, 'deploy', grantRules({ target: 'staging' }), 600, 'cli:alice');
    p.core.flags.setPaused(true);
    expect(p.take(file, 'r1', 'deploy', { target: 'staging' })).toEqual({ kind: 'recorded', state: 'queued' });
    expect(p.row('r1')).toMatchObject({ approved_by_grant: g.id, approved_by_actor: null, approved_by_plan: null, decided_by: `grant ${g.id}` });
    expect(p.core.grants.get(g.id)?.uses).toBe(1);
    expect(auditOf('r1').at(-1)?.message).toBe(`claimed r1: deploy -> queued (approved by grant ${g.id})`);
  });

  it('its approved plan, whose step it takes: in the plan column, and the step is its', () => {
    const { file } = p.key();
    expect(p.take(file, 'pl-1', PLAN_OP, { steps: [{ op: 'deploy', args: { target: 'staging' } }] }, { expiresAt: inAnHour() })).toEqual({ kind: 'recorded', state: 'awaiting_approval' });
    expect(p.core.decisions.approve('pl-1', 'cli:alice').row).toMatchObject({ state: 'succeeded', approved_by_actor: 'cli:alice', decided_by: 'cli:alice' });
    p.core.flags.setPaused(true);
    expect(p.take(file, 'st-1', 'deploy', { target: 'staging' }, { extra: { plan_id: 'pl-1' } })).toEqual({ kind: 'recorded', state: 'queued' });
    expect(p.row('st-1')).toMatchObject({ plan_id: 'pl-1', approved_by_plan: 'pl-1', approved_by_grant: null, approved_by_actor: null, decided_by: 'plan pl-1' });
    expect(auditOf('st-1').at(-1)?.message).toBe('claimed st-1: deploy -> queued (step 1 of approved plan pl-1)');
    expect(JSON.parse(p.row('pl-1').steps_json!)).toMatchObject([{ request_id: 'st-1', state: 'queued' }]);
  });

  it('nobody yet, when it asks for a human: a plan it claims but is no step of is noted and on its card', () => {
    const { file } = p.key();
    expect(p.take(file, 'r1', 'deploy', { target: 'production' }, { extra: { plan_id: 'pl-9' } })).toEqual({ kind: 'recorded', state: 'awaiting_approval' });
    const row = p.row('r1');
    expect(row).toMatchObject({ approved_by_actor: null, approved_by_grant: null, approved_by_plan: null, decided_by: null });
    expect(JSON.parse(row.approval_json!)).toMatchObject({ plan_claim: { plan_id: 'pl-9', reason: 'no plan pl-9 of this key' } });
    expect(auditOf('r1').map((a) => a.kind)).toEqual(['plan_step_unmatched', 'approval_requested']);
  });
});

describe('in protocol order', () => {
  it('refuses a file that is no envelope before anything else: nothing is bound, the scan records it, the file is dropped', () => {
    expect(p.takeFile('r1', 'not json')).toEqual({ kind: 'refused', code: 'bad_envelope' });
    expect(p.core.requests.get('r1')).toBeNull();
    expect(p.refusals).toMatchObject([{ entry: { kind: 'rejected', request_id: 'r1', details: { code: 'bad_envelope', bound: false } }, result: { id: 'r1', state: 'rejected' } }]);
    expect(readdirSync(p.io.claimed)).toEqual([]);
  });

  it('refuses a request from the future for its clock, binding its id, before the policy is asked', () => {
    const created = new Date(Date.now() + 10 * 60_000).toISOString();
    expect(p.take(p.key().file, 'r1', 'nope', {}, { createdAt: created })).toEqual({ kind: 'refused', code: 'clock_skew' });
    expect(p.row('r1')).toMatchObject({ state: 'rejected', error_code: 'clock_skew', error_message: `created_at ${created} is more than 5 minutes in the future: check the sandbox's clock` });
  });

  it('answers a bound id as a replay or a conflict whatever the clock says, and knows its own claim again after a crash', () => {
    const { file } = p.key();
    p.core.flags.setPaused(true);
    const first = envelope(file, 'r1', 'greet', { name: 'ada' });
    expect(p.takeFile('r1', first)).toEqual({ kind: 'recorded', state: 'queued' });
    // Its own file found in claimed/ at a start: the crash came between the ledger and the unlink.
    expect(p.takeFile('r1', first, true)).toEqual({ kind: 'duplicate_claim' });
    const old = '2020-01-01T00:00:00.000Z';
    expect(p.take(file, 'r1', 'greet', { name: 'ada' }, { createdAt: old })).toEqual({ kind: 'replay' });
    expect(p.take(file, 'r1', 'greet', { name: 'bob' }, { createdAt: old })).toEqual({ kind: 'conflict' });
    expect(auditOf('r1').map((a) => a.kind)).toEqual(['claimed', 'claim_recovered', 'replay', 'conflict']);
    expect(p.row('r1')).toMatchObject({ state: 'queued', args_json: '{"name":"ada"}' });
  });
});
