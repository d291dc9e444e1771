// Admission on a real ledger: each outcome (refused, waits for a human, runs by a grant, runs as a plan
// step, runs with no approval needed, a built-in), in protocol-v1's order (the clock before the policy,
// a plan proposal and a built-in apart from the gate); and the same function before a start, where what
// held at intake may not any more: the request's expiry, its key, its grant, its plan, the spend, the
// allowlist. Who approved it comes from the typed columns, never from decided_by's text.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAllowlist } from '../../../../main/core/allowlist/load';
import { admissionOf, admit, type AdmissionRequest, type HostNow } from '../../../../main/core/policy/admission';
import { PLAN_OP, proposePlan } from '../../../../main/core/policy/plans';
import { settingsSchema, type Settings } from '../../../../main/core/settings';
import { grantRules } from '../../../../main/core/policy/grantRules';
import { approvedByFields } from '../../../../main/core/ledger/approvedBy';
import type { KeyInfo } from '../../../../main/core/keys/keyStore';
import type { NewRequest } from '../../../../main/core/ledger/requests';
import type { Allowlist } from '../../../../main/core/allowlist/types';
import { TestLedger } from '../../../helpers/ledger';
import { GREET_AND_DEPLOY } from '../../../helpers/allowlists';

const allowlist = parseAllowlist(GREET_AND_DEPLOY);
const HOUR = 3600_000;
/** What a ceiling of no runs at all says. */
const NO_RUNS = 'ceiling "none" (all keys, per 3600 s): 0 of 0 runs used';

let l: TestLedger;
let key: KeyInfo;
beforeEach(() => {
  l = new TestLedger();
  key = l.keys.get(l.keys.create('agent', 'write').key_id)!;
});
afterEach(() => l.close());

const now = () => new Date();
function host(extra: { allowlist?: Allowlist; settings?: Partial<Settings>; at?: Date } = {}): HostNow {
  return { allowlist: extra.allowlist ?? allowlist, settings: settingsSchema.parse(extra.settings ?? {}), grants: l.grants, requests: l.requests, maxRequestAgeMs: 24 * HOUR, now: extra.at ?? now() };
}
function asked(op: string, args: Record<string, unknown>, extra: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return { spool: 'default', key, op, args, limits: null, intent: null, created_at: now().toISOString(), expires_at: null, plan_id: null, ...extra };
}
const deployStaging = () => asked('deploy', { target: 'staging' });

/** An approved plan of `key` whose one step is deploy to staging, until `expiresAt`. */
function approvedPlan(id: string, expiresAt = new Date(Date.now() + HOUR).toISOString()): void {
  const p = proposePlan({ allowlist, key, args: { steps: [{ op: 'deploy', args: { target: 'staging' } }] }, expiresAt, intent: null, approvalTimeoutS: 600, now: now() });
  if (!p.ok) throw new Error(p.message);
  l.add(id, { key_id: key.key_id, op: PLAN_OP, state: 'succeeded', steps_json: JSON.stringify(p.steps), expires_at: expiresAt });
}

describe('a new request', () => {
  it('runs at once when its operation needs no approval', () => {
    expect(admit(asked('greet', { name: 'ada' }), host())).toMatchObject({ kind: 'runs', by: null, grant: null, plan: { argv: ['/bin/echo', 'hello', 'ada'] } });
  });

  it('waits for a human when its operation asks for approval, with the card of what would run', () => {
    expect(admit(deployStaging(), host())).toMatchObject({ kind: 'waits', plan: { argv: ['/bin/echo', 'deploy', 'staging'] }, approval: { operation: 'deploy', key_id: key.key_id, ceiling: null } });
  });

  it('runs approved by a grant that covers it, naming the grant', () => {
    const g = l.grants.create(key.key_id, 'deploy', grantRules({ target: 'staging' }), 600, 'cli:alice');
    expect(admit(deployStaging(), host())).toMatchObject({ kind: 'runs', by: { grant: g.id }, grant: { id: g.id } });
  });

  it('runs approved as a step of its approved plan, naming the plan and the step', () => {
    approvedPlan('plan-1');
    expect(admit(asked('deploy', { target: 'staging' }, { plan_id: 'plan-1' }), host())).toMatchObject({ kind: 'runs', by: { plan: 'plan-1' }, grant: null, step: 0 });
  });

  it('waits, saying why on its card, when it claims a plan it is no step of', () => {
    approvedPlan('plan-1');
    const a = admit(asked('deploy', { target: 'production' }, { plan_id: 'plan-1' }), host());
    expect(a).toMatchObject({ kind: 'waits', unmatched: { plan_id: 'plan-1' }, approval: { plan_claim: { plan_id: 'plan-1', reason: expect.stringContaining('differs in target') } } });
  });

  it('is refused with the gate\'s code and message: an unknown operation, bad arguments, a scope its key lacks', () => {
    expect(admit(asked('nope', {}), host())).toMatchObject({ kind: 'refused', state: 'rejected', code: 'unknown_op' });
    expect(admit(asked('deploy', { target: 'moon' }), host())).toMatchObject({ kind: 'refused', state: 'rejected', code: 'bad_args' });
    const reader = l.keys.get(l.keys.create('reader', 'read').key_id)!;
    expect(admit(asked('deploy', { target: 'staging' }, { key: reader }), host())).toEqual({
      kind: 'refused', state: 'rejected', code: 'scope_denied', message: `key ${reader.key_id} has read scope; "deploy" is a write operation`, unmatched: null,
    });
  });

  it('is refused at a reject ceiling and waits at an ask ceiling, even as a step of its plan', () => {
    const ceiling = (action: 'reject' | 'ask') => ({ ceilings: [{ name: 'none', window_s: 3600, max_runs: 0, action }] }) as Partial<Settings>;
    expect(admit(asked('greet', { name: 'ada' }), host({ settings: ceiling('reject') }))).toMatchObject({ kind: 'refused', code: 'spend_ceiling', message: NO_RUNS });
    approvedPlan('plan-1');
    expect(admit(asked('deploy', { target: 'staging' }, { plan_id: 'plan-1' }), host({ settings: ceiling('ask') }))).toMatchObject({ kind: 'waits', step: 0, approval: { ceiling: NO_RUNS } });
  });

  it('checks the clock first: a request from the future or past its expiry is refused whatever it asks', () => {
    const future = new Date(Date.now() + 10 * 60_000).toISOString();
    expect(admit(asked('nope', {}, { created_at: future }), host())).toMatchObject({ kind: 'refused', state: 'rejected', code: 'clock_skew', message: `created_at ${future} is more than 5 minutes in the future: check the sandbox's clock` });
    const past = new Date(Date.now() - 1000).toISOString();
    expect(admit(asked('nope', {}, { expires_at: past }), host())).toEqual({ kind: 'refused', state: 'expired', code: 'expired', message: `the request expired at ${past}` });
    expect(admit(asked(PLAN_OP, {}, { expires_at: past }), host())).toMatchObject({ kind: 'refused', code: 'expired' });
  });

  it('leaves a built-in to the host and puts a proposed plan before a human, apart from the gate', () => {
    expect(admit(asked('dumbwaiter.ping', {}), host())).toEqual({ kind: 'builtin' });
    const expires = new Date(Date.now() + HOUR).toISOString();
    const plan = admit(asked(PLAN_OP, { steps: [{ op: 'deploy', args: { target: 'staging' } }] }, { expires_at: expires }), host());
    expect(plan).toMatchObject({ kind: 'waits', plan: null, steps: [{ op: 'deploy', argv: ['/bin/echo', 'deploy', 'staging'] }], approval: { operation: PLAN_OP } });
    expect(admit(asked(PLAN_OP, { steps: [] }, { expires_at: expires }), host())).toMatchObject({ kind: 'refused', state: 'rejected', code: 'bad_args' });
  });
});

describe('a queued request, just before its start', () => {
  /** Recorded as intake leaves a request that may run: queued, with the run checked, and who approved it. */
  function queued(id: string, fields: Partial<NewRequest> = {}) {
    const g = admit(deployStaging(), host());
    if (g.kind !== 'waits' && g.kind !== 'runs') throw new Error(`deploy to staging is ${g.kind}`);
    return l.add(id, { key_id: key.key_id, args_json: JSON.stringify({ target: 'staging' }), plan: g.plan, ...fields });
  }
  const again = (row: ReturnType<typeof queued>, extra: Parameters<typeof host>[0] = {}) => admit(admissionOf(row, l.keys.get(row.key_id)), host(extra));

  it('runs while a person\'s approval holds, keeping who approved it', () => {
    expect(again(queued('r1', { approved_by: { actor: 'cli:alice' } }))).toMatchObject({ kind: 'runs', by: { actor: 'cli:alice' }, grant: null });
  });

  it('goes back to a human once its grant is revoked, saying whose approval no longer holds', () => {
    const g = l.grants.create(key.key_id, 'deploy', grantRules({ target: 'staging' }), 600, 'cli:alice');
    const row = queued('r1', { approved_by: { grant: g.id } });
    expect(again(row)).toMatchObject({ kind: 'runs', by: { grant: g.id } });
    l.grants.revoke(g.id, 'cli:alice');
    expect(again(row)).toMatchObject({ kind: 'waits', why: `its approval (grant ${g.id}) no longer holds` });
  });

  it('goes back to a human once its plan expired or was withdrawn, with the plan claim on its card', () => {
    approvedPlan('plan-1');
    const row = queued('r1', { plan_id: 'plan-1', approved_by: { plan: 'plan-1' } });
    expect(again(row)).toMatchObject({ kind: 'runs', by: { plan: 'plan-1' } });
    const later = new Date(Date.now() + 2 * HOUR);
    expect(again(row, { at: later })).toMatchObject({
      kind: 'waits',
      why: 'its approval (plan plan-1) no longer holds',
      approval: { plan_claim: { plan_id: 'plan-1', reason: expect.stringContaining('plan plan-1 expired or was withdrawn at') } },
    });
  });

  it('reads who approved it from its columns, not from the text shown for it', () => {
    const g = l.grants.create(key.key_id, 'deploy', grantRules({ target: 'staging' }), 600, 'cli:alice');
    l.grants.revoke(g.id, 'cli:alice');
    const row = queued('r1', { approved_by: { actor: 'cli:alice' } });
    // A display text that reads like a grant's changes nothing: a person approved it.
    l.db.prepare('UPDATE requests SET decided_by = ? WHERE id = ?').run(`grant ${g.id}`, row.id);
    expect(again(l.requests.get(row.id)!)).toMatchObject({ kind: 'runs', by: { actor: 'cli:alice' } });
    expect(approvedByFields({ grant: g.id })).toEqual({ approved_by_actor: null, approved_by_grant: g.id, approved_by_plan: null, decided_by: `grant ${g.id}` });
  });

  it('takes a grant that covers it when nobody approved it yet', () => {
    const g = l.grants.create(key.key_id, 'deploy', grantRules({ target: 'staging' }), 600, 'cli:alice');
    expect(again(queued('r1'))).toMatchObject({ kind: 'runs', by: { grant: g.id }, grant: { id: g.id } });
  });

  it('goes back to a human when it would cross an ask ceiling, and is refused at a reject ceiling, said as checked again', () => {
    const row = queued('r1', { approved_by: { actor: 'cli:alice' } });
    const ceiling = (action: 'reject' | 'ask') => ({ settings: { ceilings: [{ name: 'none', window_s: 3600, max_runs: 0, action }] } as Partial<Settings> });
    expect(again(row, ceiling('ask'))).toMatchObject({ kind: 'waits', why: `it would cross ${NO_RUNS}` });
    expect(again(row, ceiling('reject'))).toEqual({ kind: 'refused', state: 'rejected', code: 'spend_ceiling', message: `${NO_RUNS} (checked again before starting)` });
  });

  it('is refused when the allowlist no longer has its operation, said as checked again', () => {
    const row = queued('r1', { approved_by: { actor: 'cli:alice' } });
    expect(again(row, { allowlist: parseAllowlist('version: 1\noperations: []\n') })).toMatchObject({ kind: 'refused', state: 'rejected', code: 'unknown_op', message: expect.stringMatching(/ \(checked again before starting\)$/) });
  });

  it('checks its expiry first, then its key, then the policy; a clock skew was intake\'s to refuse', () => {
    const past = new Date(Date.now() - 1000).toISOString();
    const expired = queued('r1', { expires_at: past, op: 'nope' });
    l.keys.revoke(key.key_id);
    expect(again(expired)).toEqual({ kind: 'refused', state: 'expired', code: 'expired', message: `the request expired at ${past}, before it could start` });
    const revoked = queued('r2', { op: 'nope', created_at: new Date(Date.now() + 10 * 60_000).toISOString() });
    expect(again(revoked)).toEqual({ kind: 'refused', state: 'rejected', code: 'revoked_key', message: `key ${key.key_id} was revoked before this request started` });
  });
});
