// The request lifecycle: a new request enters only in an entry state; only the table's transitions can
// be made; an entry or a move is one commit with its audit entries (and a plan's step) and is published
// after; a move that lost a race changes and records nothing. A request with a slot free enters running
// in its insert's commit; a group of entries is one commit, and what follows each waits for it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENTRY_STATES, Lifecycle, TRANSITIONS, mayMove, refusalKind, type EntryState } from '../../../main/core/lifecycle';
import { FINAL_STATES, STATES, type RequestState } from '../../../shared/protocol/types';
import type { NewRequest, RequestRow } from '../../../main/core/ledger/requests';
import { TestLedger } from '../../helpers/ledger';
import Database from 'better-sqlite3';
import { HostFlags } from '../../../main/core/ledger/meta';

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

/** A new request as intake would record it, in `state`. */
const fresh = <S extends RequestState>(id: string, state: S, fields: Partial<NewRequest> = {}): NewRequest & { state: S } => ({ ...l.newRequest(id, fields), state });

describe('a new request', () => {
  it('is inserted with its audit entries, in the order given, in one commit, then published', () => {
    const row = lifecycle.enter(fresh('r1', 'queued'), [
      { kind: 'plan_step_unmatched', message: 'not a step' },
      { kind: 'claimed', message: 'claimed r1' },
    ]);
    expect(row).toMatchObject({ id: 'r1', state: 'queued', version: 1 });
    expect(l.requests.get('r1')).toEqual(row);
    expect(l.audit.search({ requestId: 'r1' }).reverse()).toMatchObject([
      { kind: 'plan_step_unmatched', key_id: 'k_test', op: 'deploy' },
      { kind: 'claimed', key_id: 'k_test', op: 'deploy', message: 'claimed r1' },
    ]);
    expect(published).toEqual([row]);
  });

  it.each(STATES.filter((s) => !(ENTRY_STATES as readonly string[]).includes(s)))('never enters as %s: nothing is recorded', (state) => {
    expect(() => lifecycle.enter(fresh('r1', state as EntryState), { kind: 'claimed', message: 'x' })).toThrow(`a request cannot enter as ${state}`);
    expect(l.requests.get('r1')).toBeNull();
    expect(l.audit.search({})).toEqual([]);
    expect(published).toEqual([]);
  });

  it('commits what else it was given with the insert: when that fails, neither the request nor its entry is recorded', () => {
    const key = l.keys.create('agent', 'read');
    const touched = () => l.keys.get(key.key_id)!.last_used_at;
    lifecycle.enter(fresh('r1', 'queued', { key_id: key.key_id }), { kind: 'claimed', message: 'r1' }, { alsoInCommit: () => l.keys.touch(key.key_id, '2030-01-01T00:00:00.000Z') });
    expect(touched()).toBe('2030-01-01T00:00:00.000Z');
    expect(() =>
      lifecycle.enter(fresh('r2', 'queued'), { kind: 'claimed', message: 'r2' }, {
        alsoInCommit: () => {
          throw new Error('the grant is gone');
        },
      }),
    ).toThrow('the grant is gone');
    expect(l.requests.get('r2')).toBeNull();
    expect(l.audit.search({ requestId: 'r2' })).toEqual([]);
    expect(published.map((r) => r.id)).toEqual(['r1']);
  });

  it("of a built-in enters finished, with its output, in the one insert", () => {
    const at = new Date().toISOString();
    const row = lifecycle.enter(fresh('p1', 'succeeded', { op: 'dumbwaiter.ping', stdout: 'pong\n', exit_code: 0, started_at: at, finished_at: at, duration_ms: 0 }), { kind: 'claimed', message: 'p1' });
    expect(row).toMatchObject({ state: 'succeeded', stdout: 'pong\n', exit_code: 0, started_at: at, finished_at: at, duration_ms: 0, version: 1 });
    expect(published).toEqual([row]);
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

  it('records several entries in the order given, in its commit', () => {
    const row = l.add('r1', { state: 'uncertain' });
    lifecycle.move(row, 'succeeded', { resolved_by: 'reconcile' }, [
      { kind: 'reconcile', message: 'exit 0' },
      { kind: 'reconciled', message: 'it took effect' },
    ]);
    expect(l.audit.search({ requestId: 'r1' }).reverse().map((e) => e.kind)).toEqual(['reconcile', 'reconciled']);
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
    const row = l.add('r1', { key_id: key.key_id, state: 'queued', plan_id: 'plan-1', approved_by: { plan: 'plan-1' } });
    const running = lifecycle.start(row, { started_at: new Date().toISOString() })!;
    expect(stepOf()).toMatchObject({ request_id: 'r1', state: 'running' });
    lifecycle.move(running, 'succeeded', { exit_code: 0 }, { kind: 'finished', message: 'done' });
    expect(stepOf()).toMatchObject({ request_id: 'r1', state: 'succeeded' });
    expect(published.map((r) => r.id)).toEqual(['r1', 'plan-1', 'r1', 'plan-1']);
    expect(l.requests.get('plan-1')).toMatchObject({ state: 'succeeded', version: plan.version + 2 });
  });

  it('is taken by a new request in the commit that records it, said on both, and both results are published', () => {
    const plan = planWith(null);
    const row = lifecycle.enter(fresh('r1', 'queued', { plan_id: 'plan-1', approved_by: { plan: 'plan-1' } }), { kind: 'claimed', message: 'r1' }, { takesStep: 0 });
    expect(stepOf()).toMatchObject({ request_id: 'r1', state: 'queued' });
    expect(l.requests.get('plan-1')).toMatchObject({ state: 'succeeded', version: plan.version + 1 });
    const used = { kind: 'plan_step_used', message: 'r1 took step 1 of plan plan-1 (deploy): it runs without asking again', details: { plan_id: 'plan-1', step: 1, step_request_id: 'r1' } };
    expect(l.audit.search({ requestId: 'r1' }).reverse()).toMatchObject([used, { kind: 'claimed' }]);
    expect(l.audit.search({ requestId: 'plan-1' })).toMatchObject([{ ...used, op: 'dumbwaiter.plan' }]);
    expect(published.map((r) => r.id)).toEqual([row.id, 'plan-1']);
  });

  it('already used is never taken again: the request that tried is not recorded either', () => {
    const plan = planWith('r0');
    expect(() => lifecycle.enter(fresh('r1', 'queued', { plan_id: 'plan-1' }), { kind: 'claimed', message: 'r1' }, { takesStep: 0 })).toThrow('step 1 of plan plan-1 was already used by r0');
    expect(l.requests.get('r1')).toBeNull();
    expect(l.requests.get('plan-1')).toEqual(plan);
    expect(l.audit.search({})).toEqual([]);
    expect(published).toEqual([]);
  });

  it('leaves the plan alone for a request that names it but took no step of it', () => {
    const plan = planWith(null);
    const row = l.add('r2', { state: 'queued', plan_id: 'plan-1' });
    lifecycle.move(row, 'cancelled', {}, { kind: 'cancelled', message: 'no' });
    expect(published.map((r) => r.id)).toEqual(['r2']);
    expect(l.requests.get('plan-1')).toEqual(plan);
  });
});

describe("the writer of a request's state", () => {
  it('is reached through no property of a lifecycle: what holds one can change a state only by its table', () => {
    const writes = (v: unknown) => typeof v === 'object' && v !== null && ['insert', 'transition', 'start'].some((m) => typeof (v as Record<string, unknown>)[m] === 'function');
    const held = Reflect.ownKeys(lifecycle).map((k) => (lifecycle as unknown as Record<string | symbol, unknown>)[k]);
    expect(held.length).toBeGreaterThan(0);
    expect(held.filter(writes)).toEqual([]);
  });

  it('is not the read side the other modules hold', () => {
    for (const m of ['insert', 'transition', 'start']) expect(m in l.requests).toBe(false);
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

describe('a request that starts at once (a slot was free at intake)', () => {
  beforeEach(() => {
    l.db.prepare("INSERT INTO keys (key_id, name, scope, secret, created_at) VALUES ('k_test', 'test', 'read', 'secret', ?)").run(new Date().toISOString());
  });
  const startNow = () => ({ started_at: new Date().toISOString(), cost: 0 });

  it('is queued and moved to running in its insert, and only its running result is published', () => {
    const row = lifecycle.enter(fresh('r1', 'queued'), { kind: 'claimed', message: 'claimed r1' }, { startNow: startNow() });
    expect(row).toMatchObject({ id: 'r1', state: 'running' });
    expect(l.requests.get('r1')).toEqual(row);
    expect(published.map((r) => r.state)).toEqual(['running']);
  });

  it('stays queued, published so, when the host was paused by the time of its commit', () => {
    new HostFlags(l.db).setPaused(true);
    const row = lifecycle.enter(fresh('r1', 'queued'), { kind: 'claimed', message: 'claimed r1' }, { startNow: startNow() });
    expect(row.state).toBe('queued');
    expect(published.map((r) => r.state)).toEqual(['queued']);
  });

  it('cannot be one that enters in another state', () => {
    expect(() => lifecycle.enter(fresh('r1', 'awaiting_approval'), { kind: 'approval_requested', message: 'asks' }, { startNow: startNow() })).toThrow(/cannot start at once/);
    expect(l.requests.get('r1')).toBeNull();
  });
});

describe('a group', () => {
  it('is one commit, seen by no other connection before it ends, and publishes and runs what follows only after it', () => {
    const other = new Database(l.file, { readonly: true });
    const order: string[] = [];
    const pub = new Lifecycle(l.db, l.requests, l.audit, (row) => order.push(`published ${row.id}`));
    let seenInside = -1;
    pub.group(() => {
      pub.enter(fresh('r1', 'queued'), { kind: 'claimed', message: 'claimed r1' });
      pub.afterCommit('r1', () => order.push('after r1'));
      pub.enter(fresh('r2', 'queued'), { kind: 'claimed', message: 'claimed r2' });
      seenInside = (other.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n;
      expect(order).toEqual([]);
    });
    expect(seenInside).toBe(0);
    expect((other.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n).toBe(2);
    expect(order).toEqual(['published r1', 'after r1', 'published r2']);
    other.close();
  });

  it('when it fails, records and publishes nothing, and undoes what waited for its commit', () => {
    const done: string[] = [];
    expect(() =>
      lifecycle.group(() => {
        lifecycle.enter(fresh('r1', 'queued'), { kind: 'claimed', message: 'claimed r1' });
        lifecycle.afterCommit('r1', () => done.push('then'), () => done.push('undone'));
        throw new Error('the commit failed');
      }),
    ).toThrow('the commit failed');
    expect(l.requests.get('r1')).toBeNull();
    expect(l.audit.search({ requestId: 'r1' })).toEqual([]);
    expect(published).toEqual([]);
    expect(done).toEqual(['undone']);
  });

  it('runs each thing that follows it even when one throws', () => {
    const errors: string[] = [];
    const safe = new Lifecycle(l.db, l.requests, l.audit, (row) => published.push(row), (name, fn) => {
      try {
        fn();
      } catch (e) {
        errors.push(`${name}: ${(e as Error).message}`);
      }
    });
    safe.group(() => {
      safe.enter(fresh('r1', 'queued'), { kind: 'claimed', message: 'claimed r1' });
      safe.afterCommit('r1', () => {
        throw new Error('its claimed file could not be removed');
      });
      safe.enter(fresh('r2', 'queued'), { kind: 'claimed', message: 'claimed r2' });
    });
    expect(errors).toEqual(['r1: its claimed file could not be removed']);
    expect(published.map((r) => r.id)).toEqual(['r1', 'r2']);
  });
});
