// Requests by spool: what a spool's writer and the runner take, and what `spools remove` counts; and the
// list's filters by key and age (`dumbwaiter requests --key NAME --since DURATION`).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TestLedger } from '../../../helpers/ledger';

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

  it("the host's handle is the id while no other spool's request holds it, else the id and its spool", () => {
    expect(l.requests.handleFor('default', 'run-1')).toBe('run-1');
    l.add('run-1', { spool: 'default' });
    expect(l.requests.handleFor('work', 'run-1')).toBe('run-1@work');
    const b = l.requests.insert(l.newRequest('run-1@work', { spool: 'work', wire_id: 'run-1' }));
    expect([b.id, b.wire_id]).toEqual(['run-1@work', 'run-1']);
    expect(l.requests.bound('work', 'run-1')?.id).toBe('run-1@work');
    expect(l.requests.bound('default', 'run-1')?.id).toBe('run-1');
    // A third spool's request of that id: the plain handle is taken too, its own is free.
    expect(l.requests.handleFor('lab', 'run-1')).toBe('run-1@lab');
  });

  it("the result sweep pages through a spool's results by the names of their files", () => {
    l.add('run-1', { spool: 'default' });
    l.requests.insert(l.newRequest('run-1@work', { spool: 'work', wire_id: 'run-1' }));
    expect(l.requests.resultIdsAfter('work', 0, '1970-01-01', 10).map((r) => r.wire_id)).toEqual(['run-1']);
  });

  it('a second request of an id in its spool cannot be recorded', () => {
    l.add('run-1', { spool: 'work' });
    expect(() => l.requests.insert(l.newRequest('other-handle', { spool: 'work', wire_id: 'run-1' }))).toThrow(/UNIQUE/);
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
