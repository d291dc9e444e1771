// Argument checks against the real daemon that a hostile request aims at the daemon itself or at the
// program's option parser: a pattern that backtracks exponentially in a backtracking engine (it froze
// the daemon for 95 s), and a negative integer or a dash that reads as an option (in the command, or in
// the reconcile command the same arguments fill).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningHost, type TestHost } from '../helpers/host';
import { allowlistYaml } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

const ALLOWLIST = allowlistYaml(
  { name: 'name', command: ['/bin/echo', '{name}'], args: { name: { type: 'string', pattern: '([A-Za-z0-9]+[ _.-]?)*', max_length: 200 } } },
  { name: 'lines', command: ['/usr/bin/head', '-n', '{n}', '/etc/hostname'], args: { n: { type: 'integer', max: 100 } } },
  { name: 'offset', command: ['/bin/echo', '{n}'], args: { n: { type: 'integer', min: -10, max: 10 } } },
  { name: 'tagged', command: ['/bin/echo', 'tag={tag}'], args: { tag: { type: 'string', max_length: 40 } }, reconcile: { command: ['/bin/echo', '{tag}'] } },
);

let host: TestHost;
let key: KeyFile;

beforeAll(async () => {
  ({ host, key } = await runningHost(ALLOWLIST, { name: 'agent', scope: 'read' }));
});

afterAll(async () => {
  await host?.cleanup();
});

describe('a pattern written for a backtracking engine', () => {
  it('30 letters and a "!" are refused as bad_args at once (a freeze would time this test out), and the daemon answers a ping after', async () => {
    host.submit(key, 'redos-1', 'name', { name: 'a'.repeat(30) + '!' });
    expect(await host.waitResult('redos-1')).toMatchObject({ state: 'rejected', error: { code: 'bad_args', message: expect.stringContaining('does not match the pattern') } });
    expect((await host.sentinel(key)).state).toBe('succeeded');
    host.submit(key, 'redos-2', 'name', { name: 'Ada Lovelace_1815' });
    expect(await host.waitResult('redos-2')).toMatchObject({ state: 'succeeded', stdout: 'Ada Lovelace_1815\n' });
  });
});

describe('a negative integer as a whole argv element', () => {
  it('is refused unless the argument allows negatives (min below 0); the daemon answers after', async () => {
    host.submit(key, 'neg-1', 'lines', { n: -5 });
    expect(await host.waitResult('neg-1')).toMatchObject({ state: 'rejected', error: { code: 'bad_args', message: expect.stringContaining('would be read as an option') } });
    host.submit(key, 'neg-2', 'offset', { n: -5 });
    expect(await host.waitResult('neg-2')).toMatchObject({ state: 'succeeded', stdout: '-5\n' });
    host.submit(key, 'neg-3', 'lines', { n: 1 });
    expect((await host.waitResult('neg-3')).state).toBe('succeeded');
  });
});

describe('a value that would be an option in the reconcile command', () => {
  it('is refused for the run itself, before anything runs (the lookup would get it as an option later); the daemon answers after', async () => {
    // "tag={tag}" would take "-rf" as text, but reconcile's "{tag}" would hand it to the lookup as an option.
    host.submit(key, 'rec-dash-1', 'tagged', { tag: '-rf' });
    expect(await host.waitResult('rec-dash-1')).toMatchObject({ state: 'rejected', started_at: null, error: { code: 'bad_args', message: expect.stringContaining('must not start with "-"') } });
    host.submit(key, 'rec-dash-2', 'tagged', { tag: 'rf' });
    expect(await host.waitResult('rec-dash-2')).toMatchObject({ state: 'succeeded', stdout: 'tag=rf\n' });
  });
});
