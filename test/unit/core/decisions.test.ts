// Human decisions on a real ledger: each one is a guarded state change plus its audit entry, refused
// (with a message for the user) when the request is not in a state it applies to.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Decisions } from '../../../main/core/decisions';
import { Lifecycle } from '../../../main/core/lifecycle';
import { openLedger } from '../../../main/core/ledger/db';
import { AuditLog } from '../../../main/core/ledger/audit';
import { Grants } from '../../../main/core/ledger/grants';
import { Requests } from '../../../main/core/ledger/requests';
import { UserError } from '../../../main/core/errors';
import { TestLedger } from '../../helpers/ledger';
import { PLAN_OP } from '../../../main/core/policy/plans';
import type { RunPlan } from '../../../main/core/allowlist/plan';

let l: TestLedger;
beforeEach(() => {
  l = new TestLedger();
});
afterEach(() => l.close());

/** The run a card shows for `deploy` with these checked arguments, as intake records it. */
const runOf = (op: string, args: Record<string, unknown>): RunPlan => ({
  op,
  argv: ['/usr/bin/deploy', ...Object.values(args).map(String)],
  cwd: '/srv',
  env: { DEPLOY_ENV: 'test' },
  timeout_s: 60,
  max_output_bytes: 1024,
  concurrency: 1,
  cost: 1,
  scope: 'write',
  approval: 'always',
  args,
});
const waiting = (id: string, keyId = 'k_test', op = 'deploy', ceiling: string | null = null, args: Record<string, unknown> = { target: 'staging' }) =>
  l.add(id, { key_id: keyId, op, state: 'awaiting_approval', approval: l.approval(keyId, ceiling), plan: runOf(op, args) });
const state = (id: string) => l.requests.get(id)?.state;
const auditOf = (id: string) => l.audit.search({ requestId: id }).reverse();

describe('approve', () => {
  it('queues a waiting request and records who approved it', () => {
    waiting('r1');
    const { row, grant, alsoApproved } = l.decisions.approve('r1', 'cli:alice');
    expect(row).toMatchObject({ id: 'r1', state: 'queued', decided_by: 'cli:alice', approved_by_actor: 'cli:alice', approved_by_grant: null, approved_by_plan: null, ceiling_override: 0 });
    expect(Date.parse(row.decided_at!)).not.toBeNaN();
    expect(grant).toBeNull();
    expect(alsoApproved).toEqual([]);
    expect(auditOf('r1')).toMatchObject([{ kind: 'approved', actor: 'cli:alice', key_id: 'k_test', op: 'deploy', message: 'approved by cli:alice' }]);
  });

  it('lets a request waiting because of a spend ceiling run past it, and says so', () => {
    waiting('r1', 'k_test', 'deploy', 'hourly');
    expect(l.decisions.approve('r1', 'cli:alice').row.ceiling_override).toBe(1);
    expect(auditOf('r1')[0]?.message).toBe('approved by cli:alice (allowed past hourly)');
  });

  it('refuses an unknown request and one that is not waiting, changing nothing', () => {
    expect(() => l.decisions.approve('nope', 'cli:alice')).toThrow(new UserError('no request nope'));
    l.add('r2', { state: 'running' });
    expect(() => l.decisions.approve('r2', 'cli:alice')).toThrow(new UserError('request r2 is running, not awaiting approval'));
    expect(state('r2')).toBe('running');
    expect(l.audit.search({})).toEqual([]);
  });

  it('lets only the first of two deciders on two connections win', () => {
    waiting('r1');
    const db2 = openLedger(l.file); // the app and the command line each have their own
    try {
      const other = new Decisions(new Requests(db2), new Lifecycle(db2, new Requests(db2), new AuditLog(db2), () => {}), new AuditLog(db2), new Grants(db2));
      l.decisions.approve('r1', 'cli:alice');
      expect(() => other.deny('r1', 'app', 'too late')).toThrow(/is queued, not awaiting approval/);
    } finally {
      db2.close();
    }
    expect(l.requests.get('r1')).toMatchObject({ state: 'queued', decided_by: 'cli:alice' });
    expect(l.audit.search({}).map((a) => a.kind)).toEqual(['approved']);
  });

  describe('for a while (a grant)', () => {
    it("creates a grant for the key's operation with this card's arguments, and approves the other cards that would run exactly this", () => {
      waiting('r1');
      waiting('r2');
      waiting('r3');
      const { grant, alsoApproved } = l.decisions.approve('r1', 'cli:alice', 1800);
      expect(grant).toMatchObject({ key_id: 'k_test', op: 'deploy', args: { target: { equals: 'staging' } }, created_by: 'cli:alice', revoked_at: null });
      expect(Date.parse(grant!.expires_at) - Date.parse(grant!.created_at)).toBe(1800_000);
      expect(alsoApproved.map((r) => r.id)).toEqual(['r2', 'r3']);
      for (const id of ['r2', 'r3']) {
        expect(l.requests.get(id)).toMatchObject({ state: 'queued', decided_by: `grant ${grant!.id}`, approved_by_grant: grant!.id, approved_by_actor: null });
        expect(auditOf(id)[0]?.message).toBe(`approved by grant ${grant!.id} (time-boxed approval by cli:alice)`);
      }
      expect(l.grants.get(grant!.id)?.uses).toBe(2); // the other calls it approved, not the one a human did
      const created = l.audit.search({ kind: 'grant_created' });
      expect(created).toMatchObject([{ actor: 'cli:alice', key_id: 'k_test', op: 'deploy', details: { grant: grant!.id, args: { target: { equals: 'staging' } } } }]);
      expect(created[0]!.message).toContain('for 30 min, arguments target: "staging"');
    });

    it('leaves waiting every other card whose arguments or run were not the ones shown, even ones the widened grant covers', () => {
      waiting('r1', 'k_test', 'deploy', null, { target: 'canary' });
      waiting('other-args', 'k_test', 'deploy', null, { target: 'production' });
      waiting('matching', 'k_test', 'deploy', null, { target: 'canary-2' }); // the widened grant covers it, but it was never shown
      l.add('other-run', { state: 'awaiting_approval', approval: l.approval('k_test'), plan: { ...runOf('deploy', { target: 'canary' }), env: { DEPLOY_ENV: 'prod' } } });
      l.add('recorded-before', { state: 'awaiting_approval', approval: l.approval('k_test'), plan: null });
      const { grant, alsoApproved } = l.decisions.approve('r1', 'cli:alice', 600, { target: { match: '^canary(-[0-9]+)?$' } });
      expect(grant?.args).toEqual({ target: { match: '^canary(-[0-9]+)?$' } });
      expect(alsoApproved).toEqual([]);
      for (const id of ['other-args', 'matching', 'other-run', 'recorded-before']) expect(state(id)).toBe('awaiting_approval');
      expect(l.grants.get(grant!.id)?.uses).toBe(0);
    });

    it("leaves other keys' and other operations' requests, and those held by a spend ceiling, waiting", () => {
      waiting('r1');
      waiting('other-key', 'k_other');
      waiting('other-op', 'k_test', 'backup');
      waiting('ceiling', 'k_test', 'deploy', 'hourly');
      const { alsoApproved } = l.decisions.approve('r1', 'cli:alice', 600);
      expect(alsoApproved).toEqual([]);
      for (const id of ['other-key', 'other-op', 'ceiling']) expect(state(id)).toBe('awaiting_approval');
    });

    it('widens the named arguments only: any value, or a pattern; the others stay equal to the card', () => {
      waiting('r1', 'k_test', 'deploy', null, { target: 'canary', tag: 'v1', dry: true });
      expect(l.decisions.grantRules('r1', { target: { match: '^canary$' }, tag: { any: true } })).toEqual({
        target: { match: '^canary$' },
        tag: { any: true },
        dry: { equals: true },
      });
      expect(state('r1')).toBe('awaiting_approval'); // grantRules only says what a grant would be
    });

    it('refuses, changing nothing, a widen without a time box, naming an argument the request lacks, or with a bad pattern', () => {
      waiting('r1');
      expect(() => l.decisions.approve('r1', 'cli:alice', undefined, { target: { any: true } })).toThrow(/only a time-boxed approval \(--for\)/);
      expect(() => l.decisions.approve('r1', 'cli:alice', 600, { path: { any: true } })).toThrow(new UserError('the request has no argument "path" to widen (its arguments: target)'));
      expect(() => l.decisions.approve('r1', 'cli:alice', 600, { target: { match: '(a' } })).toThrow(/pattern for argument "target" is not a regular expression in RE2 syntax/);
      expect(() => l.decisions.approve('r1', 'cli:alice', 600, { target: { match: '(a)\\1' } })).toThrow(/RE2 syntax/); // a backreference
      expect(state('r1')).toBe('awaiting_approval');
      expect(l.grants.list(true)).toEqual([]);
      expect(l.audit.search({})).toEqual([]);
    });

    it('refuses a time box for a card recorded before grants named their arguments (it can be approved once)', () => {
      l.add('old', { state: 'awaiting_approval', approval: l.approval('k_test'), plan: null });
      expect(() => l.decisions.approve('old', 'cli:alice', 600)).toThrow(/old was recorded before grants named their arguments: approve it once/);
      expect(state('old')).toBe('awaiting_approval');
      expect(l.decisions.approve('old', 'cli:alice').row.state).toBe('queued');
    });
  });
});

describe('approving a plan', () => {
  const plan = (id: string, expiresAt = new Date(Date.now() + 3600_000).toISOString()) =>
    l.add(id, { op: PLAN_OP, state: 'awaiting_approval', expires_at: expiresAt, approval: l.approval('k_test'), steps_json: '[]' });

  it('is its whole effect: the plan succeeds at once, with who approved it', () => {
    plan('p1');
    const { row, grant, alsoApproved } = l.decisions.approve('p1', 'cli:alice');
    expect(row).toMatchObject({ state: 'succeeded', decided_by: 'cli:alice' });
    expect(Date.parse(row.decided_at!)).not.toBeNaN();
    expect([grant, alsoApproved]).toEqual([null, []]);
    expect(auditOf('p1')).toMatchObject([{ kind: 'approved', actor: 'cli:alice', message: expect.stringContaining('approved by cli:alice: plan of 0 step(s), usable until') }]);
  });

  it('is never approved for a while: --for is refused and nothing changes', () => {
    plan('p1');
    expect(() => l.decisions.approve('p1', 'cli:alice', 600)).toThrow(/p1 is a plan: it is approved once, as a whole/);
    expect(state('p1')).toBe('awaiting_approval');
    expect(l.grants.list(true)).toEqual([]);
  });

  it('is refused once the plan has expired, since nothing could run', () => {
    plan('p1', new Date(Date.now() - 1000).toISOString());
    expect(() => l.decisions.approve('p1', 'cli:alice')).toThrow(/plan p1 expired at .*: approving it would let nothing run/);
    expect(state('p1')).toBe('awaiting_approval');
  });

  it('is denied like any request', () => {
    plan('p1');
    expect(l.decisions.deny('p1', 'app', 'too broad')).toMatchObject({ state: 'denied', error_code: 'denied' });
  });
});

describe('deny', () => {
  it('denies a waiting request with the reason, and records it', () => {
    waiting('r1');
    const row = l.decisions.deny('r1', 'app', 'not today');
    // Decided, not approved: nobody let it run.
    expect(row).toMatchObject({ state: 'denied', decided_by: 'app', approved_by_actor: null, error_code: 'denied', error_message: 'denied by app: not today' });
    expect(auditOf('r1')).toMatchObject([{ kind: 'denied', actor: 'app', message: 'denied by app: not today' }]);
  });

  it('says only who denied it when no reason is given', () => {
    waiting('r1');
    expect(l.decisions.deny('r1', 'app', '').error_message).toBe('denied by app');
  });

  it('refuses a request that is not waiting', () => {
    l.add('r1', { state: 'succeeded' });
    expect(() => l.decisions.deny('r1', 'app', '')).toThrow(new UserError('request r1 is succeeded, not awaiting approval'));
    expect(state('r1')).toBe('succeeded');
  });
});

describe('timeOut', () => {
  it('denies requests that waited the whole timeout (to the millisecond), on the host\'s behalf', () => {
    const row = waiting('r1');
    const at = new Date(Date.parse(row.updated_at) + 60_000);
    expect(l.decisions.timeOut(60, new Date(at.getTime() - 1))).toEqual([]);
    expect(state('r1')).toBe('awaiting_approval');
    const [denied] = l.decisions.timeOut(60, at);
    expect(denied).toMatchObject({
      id: 'r1',
      state: 'denied',
      decided_by: 'host (approval timeout)',
      decided_at: at.toISOString(),
      error_code: 'approval_timeout',
      error_message: 'no decision within the approval timeout of 60 s',
    });
    expect(auditOf('r1')).toMatchObject([{ kind: 'approval_timeout', actor: 'daemon', message: 'denied: no decision within the approval timeout of 60 s' }]);
  });

  it("denies a plan still waiting once its own expiry has passed, before the approval timeout", () => {
    const expiresAt = new Date(Date.now() + 60_000);
    l.add('p1', { op: PLAN_OP, state: 'awaiting_approval', expires_at: expiresAt.toISOString(), approval: l.approval('k_test'), steps_json: '[]' });
    waiting('r1'); // an ordinary request waits on: it has the whole approval timeout
    expect(l.decisions.timeOut(3600, new Date(expiresAt.getTime() - 1))).toEqual([]);
    const [denied, ...others] = l.decisions.timeOut(3600, expiresAt);
    expect(others).toEqual([]);
    const message = `the plan expired at ${expiresAt.toISOString()} before anyone approved it`;
    expect(denied).toMatchObject({ id: 'p1', state: 'denied', decided_by: 'host (plan expired)', error_code: 'approval_timeout', error_message: message });
    expect(auditOf('p1')).toMatchObject([{ kind: 'approval_timeout', actor: 'daemon', message: `denied: ${message}` }]);
    expect(state('r1')).toBe('awaiting_approval');
    expect(() => l.decisions.approve('p1', 'cli:alice')).toThrow(/p1 is denied, not awaiting approval/);
  });

  it('touches only waiting requests', () => {
    l.add('q', { state: 'queued' });
    l.add('run', { state: 'running' });
    waiting('w');
    const later = new Date(Date.now() + 3600_000);
    expect(l.decisions.timeOut(60, later).map((r) => r.id)).toEqual(['w']);
    expect([state('q'), state('run')]).toEqual(['queued', 'running']);
  });
});

describe('cancel', () => {
  it.each(['queued', 'awaiting_approval'] as const)('cancels a %s request at once', (from) => {
    l.add('r1', { state: from });
    const out = l.decisions.cancel('r1', 'cli:bob');
    expect(out).toMatchObject({ changed: true, state: 'cancelled', message: `r1 cancelled (it was ${from.replace('_', ' ')})` });
    expect(out.row).toMatchObject({ state: 'cancelled', cancel_requested_by: 'cli:bob' });
    expect(auditOf('r1')).toMatchObject([{ kind: 'cancelled', actor: 'cli:bob', message: `cancelled by cli:bob while ${from}` }]);
  });

  it('marks a running request for the daemon to terminate; it stays running until then', () => {
    l.add('r1', { state: 'running' });
    const out = l.decisions.cancel('r1', 'cli:bob');
    expect(out).toMatchObject({ changed: true, state: 'running', message: 'r1 is running: its process group is being terminated' });
    expect(l.requests.get('r1')).toMatchObject({ state: 'running', cancel_requested_by: 'cli:bob' });
    expect(l.requests.cancelRequested().map((r) => r.id)).toEqual(['r1']);
    expect(auditOf('r1')).toMatchObject([{ kind: 'cancel_requested', actor: 'cli:bob' }]);
  });

  it('a second cancel of a running request changes nothing and names the first canceller', () => {
    l.add('r1', { state: 'running' });
    l.decisions.cancel('r1', 'cli:bob');
    const out = l.decisions.cancel('r1', 'app');
    expect(out).toMatchObject({ changed: false, state: 'running', message: 'r1 is already being cancelled (by cli:bob)' });
    expect(l.requests.get('r1')?.cancel_requested_by).toBe('cli:bob');
    expect(auditOf('r1').length).toBe(1);
  });

  it.each(['succeeded', 'failed', 'rejected', 'denied', 'expired', 'cancelled'] as const)('leaves a %s request alone, and says it already finished', (s) => {
    const before = l.add('r1', { state: s });
    const out = l.decisions.cancel('r1', 'cli:bob');
    expect(out).toMatchObject({ changed: false, state: s, message: `r1 is already finished (${s}): nothing changed` });
    expect(l.requests.get('r1')).toEqual(before);
    expect(auditOf('r1')).toEqual([]);
  });

  it('leaves an uncertain request alone (a human settles it), and says it is not cancellable', () => {
    l.add('r1', { state: 'uncertain' });
    expect(l.decisions.cancel('r1', 'cli:bob')).toMatchObject({ changed: false, message: 'r1 is not cancellable (uncertain): nothing changed' });
  });

  it('refuses an unknown request', () => {
    expect(() => l.decisions.cancel('nope', 'cli:bob')).toThrow(new UserError('no request nope'));
  });
});

describe('rejectPendingOfKey', () => {
  it("rejects a revoked key's queued and waiting requests, and nothing else", () => {
    l.add('q', { key_id: 'k_gone', state: 'queued' });
    waiting('w', 'k_gone');
    l.add('run', { key_id: 'k_gone', state: 'running' });
    l.add('done', { key_id: 'k_gone', state: 'succeeded' });
    l.add('other', { key_id: 'k_kept', state: 'queued' });
    const out = l.decisions.rejectPendingOfKey('k_gone', 'cli:alice');
    expect(out.map((r) => r.id).sort()).toEqual(['q', 'w']);
    for (const id of ['q', 'w']) {
      expect(l.requests.get(id)).toMatchObject({ state: 'rejected', error_code: 'revoked_key', error_message: 'key k_gone was revoked by cli:alice before this request started' });
      expect(auditOf(id)).toMatchObject([{ kind: 'rejected', actor: 'cli:alice', key_id: 'k_gone' }]);
    }
    expect([state('run'), state('done'), state('other')]).toEqual(['running', 'succeeded', 'queued']);
  });
});
