// The built-in operations on a real ledger: dumbwaiter.ping answers who the host is and who asks;
// dumbwaiter.cancel lets a key cancel its own requests only, through the same decisions as a human.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUILTIN_OPS, runBuiltin, type BuiltinDeps } from '../../../../main/core/daemon/builtins';
import type { KeyInfo } from '../../../../main/core/keys/keyStore';
import { APP_VERSION } from '../../../../main/core/version';
import { TestLedger } from '../../../helpers/ledger';

let l: TestLedger;
let deps: BuiltinDeps;
let key: KeyInfo;
let other: KeyInfo;

beforeEach(() => {
  l = new TestLedger();
  deps = { requests: l.requests, decisions: l.decisions, hostId: 'host-1' };
  key = l.keys.create('agent', 'read');
  other = l.keys.create('someone else', 'write');
});
afterEach(() => l.close());

describe('dumbwaiter.ping', () => {
  it('answers one JSON line: the host, its version, the protocol, the time and the asking key', () => {
    const r = runBuiltin(deps, key, 'dumbwaiter.ping', {});
    if (!r.ok) throw new Error(r.message);
    expect(r.stdout.endsWith('\n')).toBe(true);
    expect(r.stdout.trimEnd()).not.toContain('\n');
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(doc).toEqual({ host_id: 'host-1', app_version: APP_VERSION, protocol: 1, time: expect.any(String), key_id: key.key_id, scope: 'read' });
    expect(new Date(doc.time as string).toISOString()).toBe(doc.time);
  });

  it('takes no arguments', () => {
    expect(runBuiltin(deps, key, 'dumbwaiter.ping', { verbose: true })).toEqual({ ok: false, code: 'bad_args', message: 'dumbwaiter.ping takes no arguments' });
  });
});

describe('dumbwaiter.cancel', () => {
  it("cancels the key's own queued request", () => {
    l.add('target', { key_id: key.key_id, state: 'queued' });
    const r = runBuiltin(deps, key, 'dumbwaiter.cancel', { target: 'target' });
    if (!r.ok) throw new Error(r.message);
    expect(r.stdout).toBe('target cancelled (it was queued)\n');
    expect(l.requests.get('target')).toMatchObject({ state: 'cancelled', cancel_requested_by: `key ${key.key_id} (dumbwaiter.cancel)` });
    expect(l.audit.search({ requestId: 'target' })).toMatchObject([{ kind: 'cancelled', actor: `key ${key.key_id} (dumbwaiter.cancel)` }]);
  });

  it('marks its own running request for termination', () => {
    l.add('target', { key_id: key.key_id, state: 'running' });
    const r = runBuiltin(deps, key, 'dumbwaiter.cancel', { target: 'target' });
    expect(r).toMatchObject({ ok: true, stdout: 'target is running: its process group is being terminated\n' });
    expect(l.requests.cancelRequested().map((x) => x.id)).toEqual(['target']);
  });

  it('succeeds without changing anything for a request that already finished', () => {
    l.add('target', { key_id: key.key_id, state: 'succeeded' });
    const r = runBuiltin(deps, key, 'dumbwaiter.cancel', { target: 'target' });
    expect(r).toEqual({ ok: true, stdout: 'target is already finished (succeeded): nothing changed\n' });
    expect(l.requests.get('target')?.state).toBe('succeeded');
  });

  it("may not cancel another key's request", () => {
    l.add('theirs', { key_id: other.key_id, state: 'awaiting_approval' });
    expect(runBuiltin(deps, key, 'dumbwaiter.cancel', { target: 'theirs' })).toEqual({
      ok: false,
      code: 'scope_denied',
      message: `key ${key.key_id} may only cancel its own requests`,
    });
    expect(l.requests.get('theirs')?.state).toBe('awaiting_approval');
    expect(l.audit.search({})).toEqual([]);
  });

  it('refuses a target that is not on this host', () => {
    expect(runBuiltin(deps, key, 'dumbwaiter.cancel', { target: 'unknown-1' })).toEqual({ ok: false, code: 'bad_args', message: 'no request unknown-1 on this host' });
  });

  it("answers a request of another spool as no request at all: a sandbox learns nothing of another's", () => {
    const theirs = l.keys.create('their agent', 'write', null, 'work');
    l.add('theirs-1', { key_id: theirs.key_id, spool: 'work' });
    expect(runBuiltin(deps, key, 'dumbwaiter.cancel', { target: 'theirs-1' })).toEqual({ ok: false, code: 'bad_args', message: 'no request theirs-1 on this host' });
    expect(l.requests.get('theirs-1')!.state).toBe('queued');
  });

  it.each([[undefined], [42], [['a']], [''], ['../escape'], ['x.tmp'], ['-dash'], ['a'.repeat(129)]])('refuses a target that is not a request id: %j', (target) => {
    const args = target === undefined ? {} : { target };
    expect(runBuiltin(deps, key, 'dumbwaiter.cancel', args)).toEqual({ ok: false, code: 'bad_args', message: 'argument "target" must be a request id' });
  });

  it('refuses an unknown argument, naming it', () => {
    l.add('target', { key_id: key.key_id, state: 'queued' });
    expect(runBuiltin(deps, key, 'dumbwaiter.cancel', { target: 'target', force: true })).toEqual({
      ok: false,
      code: 'bad_args',
      message: 'unknown argument "force" (expected: target)',
    });
    expect(l.requests.get('target')?.state).toBe('queued');
  });
});

it('answers an unknown built-in with unknown_op, listing the built-ins', () => {
  expect(runBuiltin(deps, key, 'dumbwaiter.shutdown', {})).toEqual({
    ok: false,
    code: 'unknown_op',
    message: `no built-in operation "dumbwaiter.shutdown" (built-ins: ${BUILTIN_OPS.join(', ')})`,
  });
  expect(BUILTIN_OPS).toEqual(['dumbwaiter.cancel', 'dumbwaiter.ping', 'dumbwaiter.plan']); // a plan is decided by a human (policy/plans.ts)
});
