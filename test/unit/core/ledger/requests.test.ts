// Requests by spool: what a spool's writer and the runner take, and what `spools remove` counts; what
// retention, spend ceilings and the status feed ask of the ledger about requests; and the list's
// filters by key and age (`dumbwaiter requests --key NAME --since DURATION`).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TestLedger } from '../../../helpers/ledger';
import { FINAL_STATES, STATES, type RequestState } from '../../../../shared/protocol/types';

let l: TestLedger;
beforeEach(() => (l = new TestLedger()));
afterEach(() => l.close());

describe('requests of a spool', () => {
  it("the next queued request of a spool is that spool's oldest with a free slot", () => {
    l.add('r-work', { spool: 'work' });
    l.add('r-default');
    l.add('r-default-2');
    expect(l.requests.nextQueued([], 'default')?.id).toBe('r-default');
    expect(l.requests.nextQueued([], 'work')?.id).toBe('r-work');
    expect(l.requests.nextQueued([], 'lab')).toBeNull();
    expect(l.requests.nextQueued(['deploy'], 'default')).toBeNull();
  });

  it("each spool's unsynced rows and counts are its own", () => {
    l.add('r-work', { spool: 'work' });
    l.add('r-default');
    expect(l.requests.unsynced('work').map((r) => r.id)).toEqual(['r-work']);
    expect(l.requests.countInState('queued', 'work')).toBe(1);
    expect(l.requests.countInState('queued')).toBe(2);
    expect(l.requests.list({ spool: 'work' }).map((r) => [r.id, r.spool])).toEqual([['r-work', 'work']]);
  });

  it('open requests count those not finished, uncertain ones included', () => {
    l.add('q', { spool: 'work' });
    l.add('u', { spool: 'work', state: 'uncertain' });
    l.add('s', { spool: 'work', state: 'succeeded' });
    l.add('other', { spool: 'default' });
    expect(l.requests.openInSpool('work')).toBe(2);
    expect(l.requests.openInSpool('lab')).toBe(0);
  });
});

describe('request ids bound within their spool', () => {
  it("a sandbox's id is found in its own spool only", () => {
    l.add('run-1', { spool: 'default' });
    expect(l.requests.bound('default', 'run-1')?.id).toBe('run-1');
    expect(l.requests.bound('work', 'run-1')).toBeNull();
  });

  it("the host's handle is the id in default and the id and its spool in every other, whatever the other spools hold", () => {
    // Nothing recorded: another spool's handle is suffixed all the same.
    expect(l.requests.handleFor('default', 'run-1')).toBe('run-1');
    expect(l.requests.handleFor('work', 'run-1')).toBe('run-1@work');
    const b = l.add('run-1@work', { spool: 'work', wire_id: 'run-1' });
    expect([b.id, b.wire_id]).toEqual(['run-1@work', 'run-1']);
    // Default's request of that id, recorded after work's: its plain handle, not told of work's.
    expect(l.requests.handleFor('default', 'run-1')).toBe('run-1');
    l.add('run-1', { spool: 'default' });
    expect(l.requests.bound('work', 'run-1')?.id).toBe('run-1@work');
    expect(l.requests.bound('default', 'run-1')?.id).toBe('run-1');
    // And with default's recorded first: the same handle for a third spool's as before.
    expect(l.requests.handleFor('lab', 'run-1')).toBe('run-1@lab');
  });

  it("a default request whose id a row of another spool holds as its handle (recorded before ids were per spool) gets `@default`", () => {
    l.add('run-2', { spool: 'work' });
    expect(l.requests.handleFor('default', 'run-2')).toBe('run-2@default');
    expect(l.requests.handleFor('default', 'run-3')).toBe('run-3');
  });

  it("the result sweep pages through a spool's results by the names of their files", () => {
    l.add('run-1', { spool: 'default' });
    l.add('run-1@work', { spool: 'work', wire_id: 'run-1' });
    expect(l.requests.resultIdsAfter('work', 0, '1970-01-01', 10).map((r) => r.wire_id)).toEqual(['run-1']);
  });

  it('a second request of an id in its spool cannot be recorded', () => {
    l.add('run-1', { spool: 'work' });
    expect(() => l.add('other-handle', { spool: 'work', wire_id: 'run-1' })).toThrow(/UNIQUE/);
  });
});

describe('audit entries of a spool', () => {
  it('take the spool given, else that of their request, else that of their key, else none', () => {
    const key = l.keys.create('agent', 'read', null, 'work');
    l.add('r-lab', { spool: 'lab', key_id: key.key_id });
    l.audit.record({ kind: 'claimed', request_id: 'r-lab', key_id: key.key_id, message: 'of the request' });
    l.audit.record({ kind: 'key_created', key_id: key.key_id, message: 'of the key' });
    l.audit.record({ kind: 'rejected', key_id: key.key_id, spool: 'default', message: 'said' });
    l.audit.record({ kind: 'daemon_started', message: 'of none' });
    expect(l.audit.search({}).map((a) => [a.message, a.spool]).reverse()).toEqual([
      ['of the request', 'lab'],
      ['of the key', 'work'],
      ['said', 'default'],
      ['of none', null],
    ]);
    expect(l.audit.search({ spool: 'work' }).map((a) => a.message)).toEqual(['of the key']);
  });
});

describe('what retention asks', () => {
  /** One request in each state, in two spools (named by the state, the `work` one's handle `<state>@work`). */
  function everyState(): void {
    for (const state of STATES) {
      l.add(state, { state });
      l.add(`${state}@work`, { state, spool: 'work', wire_id: state });
    }
  }
  const unfinished = STATES.filter((s) => !(FINAL_STATES as readonly RequestState[]).includes(s));

  it('the result files that stay are those of unfinished requests, uncertain ones included, named by their wire id', () => {
    everyState();
    expect([...l.requests.unfinishedWireIds()].sort()).toEqual([...unfinished].sort());
    expect(unfinished).toContain('uncertain');
  });

  it('removes finished requests last changed before the cutoff, never an unfinished or uncertain one', () => {
    everyState();
    expect(l.requests.deleteFinishedBefore(new Date(Date.now() - 60_000).toISOString())).toBe(0);
    expect(l.requests.deleteFinishedBefore(new Date(Date.now() + 60_000).toISOString())).toBe(2 * FINAL_STATES.length);
    expect(l.requests.list().map((r) => r.state).sort()).toEqual([...unfinished, ...unfinished].sort());
  });
});

describe('what spend ceilings ask', () => {
  const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
  /** A run by `keyId` started `msAgo`, of `cost`, that ended `end` after `ms` (running: still runs). */
  function ran(id: string, keyId: string, msAgo: number, cost: number, end: RequestState, ms: number | null = null): void {
    l.add(id, { key_id: keyId });
    l.move(id, 'running', { started_at: at(msAgo), cost });
    if (end !== 'running') l.move(id, end, { duration_ms: ms });
  }

  it('counts the runs started since, their cost and their known run time: a running one so far, an uncertain one none', () => {
    ran('done', 'k_a', 10_000, 2, 'succeeded', 4_000);
    ran('runs', 'k_a', 30_000, 1, 'running');
    ran('cut', 'k_a', 20_000, 5, 'uncertain');
    ran('old', 'k_a', 3_600_000, 7, 'failed', 1_000);
    l.add('never', { key_id: 'k_a', state: 'rejected' });
    const spent = l.requests.spentSince(at(60_000), new Date().toISOString(), 'k_a');
    expect([spent.runs, spent.cost]).toEqual([3, 8]);
    expect(spent.ms).toBeGreaterThanOrEqual(4_000 + 30_000 - 50);
    expect(spent.ms).toBeLessThan(4_000 + 30_000 + 10_000);
  });

  it("counts a key's runs with those of the keys it replaced, and every key's without one", () => {
    const first = l.keys.create('agent', 'write');
    const second = l.keys.rotate(first.key_id);
    const third = l.keys.rotate(second.key_id);
    const other = l.keys.create('other', 'write');
    expect(l.requests.keyLineage(third.key_id).sort()).toEqual([first.key_id, second.key_id, third.key_id].sort());
    expect(l.requests.keyLineage(first.key_id)).toEqual([first.key_id]);
    ran('a', first.key_id, 1_000, 1, 'succeeded', 10);
    ran('b', third.key_id, 1_000, 1, 'succeeded', 10);
    ran('c', other.key_id, 1_000, 1, 'succeeded', 10);
    const since = at(60_000);
    const now = new Date().toISOString();
    expect(l.requests.spentSince(since, now, third.key_id).runs).toBe(2);
    expect(l.requests.spentSince(since, now, first.key_id).runs).toBe(1);
    expect(l.requests.spentSince(since, now, null).runs).toBe(3);
  });
});

describe('what the status feed asks', () => {
  it("gives the runs of allowlisted operations that ended or were settled after an audit entry, in the log's order", () => {
    l.add('run-a', { state: 'succeeded' });
    l.add('run-b', { state: 'uncertain', spool: 'work' });
    l.add('ping', { state: 'succeeded', op: 'dumbwaiter.ping' });
    const start = l.audit.lastSeq();
    l.audit.record({ kind: 'started', request_id: 'run-a', op: 'deploy', message: 'not an end' });
    l.audit.record({ kind: 'finished', request_id: 'run-a', op: 'deploy', message: 'ended' });
    l.audit.record({ kind: 'finished', request_id: 'ping', op: 'dumbwaiter.ping', message: 'a built-in' });
    l.audit.record({ kind: 'uncertain', request_id: 'run-b', op: 'deploy', message: 'cut short' });
    const ended = l.requests.endedRunsAfter(start);
    expect(ended.map((r) => [r.id, r.spool, r.state])).toEqual([['run-a', 'default', 'succeeded'], ['run-b', 'work', 'uncertain']]);
    expect(l.requests.endedRunsAfter(ended[0]!.seq).map((r) => r.id)).toEqual(['run-b']);
    expect(l.requests.endedRunsAfter(start, 1).map((r) => r.id)).toEqual(['run-a']);
  });
});

describe("the audit log's statements on requests", () => {
  it('searches entries by the state their request is in now', () => {
    l.add('waits', { state: 'awaiting_approval' });
    l.add('done', { state: 'succeeded' });
    l.audit.record({ kind: 'claimed', request_id: 'waits', message: 'of the waiting one' });
    l.audit.record({ kind: 'claimed', request_id: 'done', message: 'of the finished one' });
    expect(l.audit.search({ state: 'awaiting_approval' }).map((a) => a.message)).toEqual(['of the waiting one']);
  });

  it("removes old entries but those of a request still in the ledger (an old uncertain one keeps its history)", () => {
    l.add('kept', { state: 'uncertain' });
    l.add('gone', { state: 'succeeded' });
    l.audit.record({ kind: 'claimed', request_id: 'kept', message: 'of the kept one' });
    l.audit.record({ kind: 'claimed', request_id: 'gone', message: 'of the removed one' });
    l.audit.record({ kind: 'daemon_started', message: 'of no request' });
    const later = new Date(Date.now() + 60_000).toISOString();
    expect(l.requests.deleteFinishedBefore(later)).toBe(1);
    expect(l.audit.deleteBefore(later)).toBe(2);
    expect(l.audit.search({}).map((a) => a.message)).toEqual(['of the kept one']);
  });
});

describe('the list of requests', () => {
  it('filters by any of several keys (an empty list matching none) and by when each was claimed, newest first', () => {
    l.add('r-a', { key_id: 'k_a' });
    l.add('r-b', { key_id: 'k_b' });
    l.add('r-c', { key_id: 'k_c' });
    const ids = (f: Parameters<typeof l.requests.list>[0]) => l.requests.list(f).map((r) => r.id);
    expect(ids({ keyIds: ['k_a', 'k_c'] })).toEqual(['r-c', 'r-a']);
    expect(ids({ keyIds: [] })).toEqual([]);
    expect(ids({ since: new Date(Date.now() - 60_000).toISOString() })).toEqual(['r-c', 'r-b', 'r-a']);
    expect(ids({ since: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
  });
});
