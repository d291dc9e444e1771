// The request lifecycle: only the table's transitions can be made; a move is one commit with its audit
// entry and is published after; a move that lost a race changes and records nothing.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENTRY_STATES, Lifecycle, TRANSITIONS, mayMove, refusalKind } from '../../../main/core/lifecycle';
import { FINAL_STATES, STATES } from '../../../shared/protocol/types';
import type { RequestRow } from '../../../main/core/ledger/requests';
import { TestLedger } from '../../helpers/ledger';

let l: TestLedger;
let published: RequestRow[];
let lifecycle: Lifecycle;
beforeEach(() => {
  l = new TestLedger();
  published = [];
  lifecycle = new Lifecycle(l.db, l.requests, l.audit, (row) => published.push(row));
});
afterEach(() => l.close());

describe('the transition table', () => {
  it('names every state, and a final state goes nowhere', () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...STATES].sort());
    for (const s of FINAL_STATES) expect(TRANSITIONS[s]).toEqual([]);
    for (const s of ENTRY_STATES) expect(STATES).toContain(s);
  });

  it('allows a run to end uncertain and a human or reconcile to settle it, never to run again', () => {
    expect(mayMove('running', 'uncertain')).toBe(true);
    expect(mayMove('uncertain', 'succeeded')).toBe(true);
    expect(mayMove('uncertain', 'running')).toBe(false);
    expect(mayMove('uncertain', 'queued')).toBe(false);
    expect(mayMove('succeeded', 'failed')).toBe(false);
    expect(mayMove('running', 'running')).toBe(true); // recording something about it
  });

  it('picks the audit kind of a refusal', () => {
    expect(refusalKind('expired', 'expired')).toBe('expired');
    expect(refusalKind('rejected', 'spend_ceiling')).toBe('ceiling_hit');
    expect(refusalKind('rejected', 'bad_args')).toBe('rejected');
  });
});

describe('a move', () => {
  it('changes the row and records its audit entry in one commit, then publishes it', () => {
    const row = l.add('r1', { state: 'running' });
    const next = lifecycle.move(row, 'uncertain', { error_code: 'interrupted', error_message: 'stopped' }, { kind: 'uncertain', message: 'stopped' });
    expect(next).toMatchObject({ state: 'uncertain', error_code: 'interrupted', version: row.version + 1 });
    expect(published.map((r) => r.id)).toEqual(['r1']);
    expect(l.audit.search({ requestId: 'r1' })).toMatchObject([{ kind: 'uncertain', key_id: 'k_test', op: 'deploy', message: 'stopped' }]);
  });

  it('refuses a transition the table does not have, before touching anything', () => {
    const row = l.add('r1', { state: 'succeeded' });
    expect(() => lifecycle.move(row, 'running', {}, { kind: 'started', message: 'x' })).toThrow('no transition from succeeded to running');
    expect(l.requests.get('r1')!.state).toBe('succeeded');
    expect(published).toEqual([]);
  });

  it('that lost a race to another decider changes, records and publishes nothing', () => {
    const row = l.add('r1', { state: 'awaiting_approval' });
    expect(lifecycle.move(row, 'denied', { error_code: 'denied', error_message: 'no' }, { kind: 'denied', message: 'no' })).not.toBeNull();
    published = [];
    expect(lifecycle.move(row, 'queued', {}, { kind: 'approved', message: 'yes' })).toBeNull();
    expect(l.requests.get('r1')!.state).toBe('denied');
    expect(l.audit.search({ requestId: 'r1' }).map((e) => e.kind)).toEqual(['denied']);
    expect(published).toEqual([]);
  });

  it('refuse() records the refusal with its code and kind', () => {
    const row = l.add('r1', { state: 'queued' });
    expect(lifecycle.refuse(row, 'expired', 'expired', 'too old')).toMatchObject({ state: 'expired', error_code: 'expired', error_message: 'too old' });
    expect(l.audit.search({ requestId: 'r1' })).toMatchObject([{ kind: 'expired', message: 'expired: too old' }]);
  });
});

describe('a step of a plan', () => {
  const step = { op: 'deploy', args: {}, argv: ['deploy'], cwd: '/', scope: 'write', env: {}, leaves_processes: false };
  const planWith = (requestId: string | null) =>
    l.add('plan-1', { op: 'dumbwaiter.plan', state: 'succeeded', steps_json: JSON.stringify([{ ...step, request_id: requestId, state: requestId ? 'queued' : null }]) });
  const stepOf = () => (JSON.parse(l.requests.get('plan-1')!.steps_json!) as { request_id: string; state: string }[])[0];

  it("moves the plan's step with it in the same commit, and publishes the plan's result too", () => {
    const plan = planWith('r1');
    const key = l.keys.create('agent', 'write'); // a run starts only for a key that is not revoked
    const row = l.add('r1', { key_id: key.key_id, state: 'queued', plan_id: 'plan-1', decided_by: 'plan plan-1' });
    const running = lifecycle.start(row, { started_at: new Date().toISOString() })!;
    expect(stepOf()).toMatchObject({ request_id: 'r1', state: 'running' });
    lifecycle.move(running, 'succeeded', { exit_code: 0 }, { kind: 'finished', message: 'done' });
    expect(stepOf()).toMatchObject({ request_id: 'r1', state: 'succeeded' });
    expect(published.map((r) => r.id)).toEqual(['r1', 'plan-1', 'r1', 'plan-1']);
    expect(l.requests.get('plan-1')).toMatchObject({ state: 'succeeded', version: plan.version + 2 });
  });

  it('leaves the plan alone for a request that names it but took no step of it', () => {
    const plan = planWith(null);
    const row = l.add('r2', { state: 'queued', plan_id: 'plan-1' });
    lifecycle.move(row, 'cancelled', {}, { kind: 'cancelled', message: 'no' });
    expect(published.map((r) => r.id)).toEqual(['r2']);
    expect(l.requests.get('plan-1')).toEqual(plan);
  });
});

describe('docs/PROTOCOL.md', () => {
  it('shows the same transitions as the table in lifecycle.ts', () => {
    const doc = readFileSync(path.join(import.meta.dirname, '../../../docs/PROTOCOL.md'), 'utf8');
    const section = doc.slice(doc.indexOf('**How a request moves between states.**'));
    const rows = [...section.matchAll(/^\| `(\w+)` \| (.+) \|$/gm)].map((m) => [m[1], [...m[2]!.matchAll(/`(\w+)`/g)].map((x) => x[1])] as const);
    const expected = Object.entries(TRANSITIONS).filter(([, to]) => to.length > 0).map(([from, to]) => [from, [...to]] as const);
    expect(rows).toEqual(expected);
  });
});
