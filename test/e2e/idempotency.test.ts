// Idempotency as protocol-v1 section 3 says: a replay runs nothing again, a conflict changes nothing
// and tells the sandbox; a bound id is never run twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost } from '../helpers/host';
import { allowlistYaml } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let other: KeyFile;
let counter: string;

beforeAll(async () => {
  host = new TestHost();
  counter = path.join(host.root, 'runs.txt');
  host.writeAllowlist(allowlistYaml({ name: 'record', command: ['/bin/sh', '-c', 'echo "$DUMBWAITER_REQUEST_ID $1" >> "$0"', counter, '{tag}'], args: { tag: { type: 'string', pattern: '[a-z0-9]*' } } }));
  key = host.createKey('a', 'read');
  other = host.createKey('b', 'read');
  await host.startDaemon();
});

afterAll(async () => {
  await host.cleanup();
});

function runsOf(id: string): number {
  if (!existsSync(counter)) return 0;
  return readFileSync(counter, 'utf8').split('\n').filter((l) => l.startsWith(id + ' ')).length;
}

/** Waits until the daemon has taken the file and anything it could have led to has run: a later request
 *  of the same operation (one run at a time, in claim order) has run. */
async function drained(): Promise<void> {
  expect((await host.sentinel(key, 'record', { tag: 'sentinel' })).state).toBe('succeeded');
}

describe('idempotency', () => {
  it('a replay (same op and args, rebuilt later) runs nothing and leaves the result as it was', async () => {
    host.submit(key, 'idem-1', 'record', { tag: 'one' }, { intent: 'first try' });
    const first = await host.waitResult('idem-1');
    expect(first.state).toBe('succeeded');
    // A caller that rebuilt the request after a restart: new created_at and intent, same op and args.
    host.submit(key, 'idem-1', 'record', { tag: 'one' }, { createdAt: new Date(Date.now() + 1000).toISOString(), intent: 'retry' });
    await drained();
    expect(host.result('idem-1')).toEqual(first);
    expect(runsOf('idem-1')).toBe(1);
    expect(host.audit('idem-1', 'replay')).toHaveLength(1);
  });

  it('a replay of a rejected request stays rejected', async () => {
    host.submit(key, 'idem-bad', 'record', { tag: 'NOT VALID' });
    const first = await host.waitResult('idem-bad');
    expect(first.error?.code).toBe('bad_args');
    host.submit(key, 'idem-bad', 'record', { tag: 'NOT VALID' });
    await drained();
    expect(host.result('idem-bad')).toEqual(first);
    expect(host.audit('idem-bad', 'replay')).toHaveLength(1);
  });

  it('the same id with other args is a conflict: nothing runs, the result is unchanged, the inbox says so', async () => {
    host.submit(key, 'idem-2', 'record', { tag: 'two' });
    const first = await host.waitResult('idem-2');
    host.submit(key, 'idem-2', 'record', { tag: 'different' });
    await drained();
    expect(host.result('idem-2')).toEqual(first);
    expect(runsOf('idem-2')).toBe(1);
    expect(host.audit('idem-2', 'conflict')).toHaveLength(1);
    const msg = host.inbox().find((m) => m.kind === 'conflict' && m.ref === 'idem-2');
    expect(msg).toMatchObject({ v: 1, kind: 'conflict', ref: 'idem-2' });
    expect(String(msg?.text)).toContain('idem-2');
  });

  it('the same id and args from another key is a conflict too (the id is bound to its key)', async () => {
    host.submit(key, 'idem-3', 'record', { tag: 'three' });
    const first = await host.waitResult('idem-3');
    host.submit(other, 'idem-3', 'record', { tag: 'three' });
    await drained();
    expect(host.result('idem-3')).toEqual(first);
    expect(runsOf('idem-3')).toBe(1);
    expect(host.audit('idem-3', 'conflict')).toHaveLength(1);
  });

  it('key order in args does not matter to the binding', async () => {
    host.submit(key, 'idem-4', 'record', { tag: 'four' });
    await host.waitResult('idem-4');
    const payload = '{"args":{"tag":"four"},"created_at":"' + new Date().toISOString() + '","op":"record","id":"idem-4"}';
    host.submit(key, 'idem-4', 'record', {}, { payload });
    await drained();
    expect(host.audit('idem-4', 'replay')).toHaveLength(1);
    expect(runsOf('idem-4')).toBe(1);
  });

  it('inbox message ids sort by time', () => {
    const dir = path.join(host.spool, 'inbox');
    const names = host.inbox().map((m) => String(m.id));
    expect([...names].sort()).toEqual(names);
    expect(existsSync(dir)).toBe(true);
  });
});
