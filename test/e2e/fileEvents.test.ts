// A file event costs one file, not a scan: the request file an event names is taken by itself (no
// listing of queue/), while what cannot be a request waits for the rescan; a hostile entry named like a
// request and taken that way (a FIFO, a symlink) is refused without blocking or being followed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runningHost, type TestHost } from '../helpers/host';
import { allowlistYaml } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
const queue = () => path.join(host.spool, 'queue');

beforeAll(async () => {
  // A rescan a minute apart: anything taken sooner was taken because an event named it.
  ({ host, key } = await runningHost(allowlistYaml({ name: 'hello', command: ['/bin/echo', 'hello'] }), { name: 'events', scope: 'read' }, { rescan_interval_ms: 60_000 }));
});

afterAll(async () => {
  await host.cleanup();
});

describe('a file event', () => {
  it('takes the request file it names by itself: junk written before it stays in queue/ until the rescan', async () => {
    writeFileSync(path.join(queue(), 'not a request'), 'junk');
    host.submit(key, 'named-1', 'hello');
    expect((await host.waitResult('named-1')).state).toBe('succeeded');
    expect(existsSync(path.join(queue(), 'not a request'))).toBe(true); // no listing ran
    host.submit(key, 'named-2', 'hello');
    expect((await host.waitResult('named-2')).stdout).toBe('hello\n');
  });

  it('refuses a FIFO named like a request without blocking, and never follows a symlink named like one', async () => {
    const stage = path.join(host.spool, 'tmp');
    const fifo = path.join(stage, 'ev-fifo.json');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    renameSync(fifo, path.join(queue(), 'ev-fifo.json'));
    const secret = path.join(host.root, 'secret.txt');
    writeFileSync(secret, 'not for the sandbox');
    symlinkSync(secret, path.join(stage, 'ev-link.json'));
    renameSync(path.join(stage, 'ev-link.json'), path.join(queue(), 'ev-link.json'));

    const fifoResult = await host.waitResult('ev-fifo');
    const linkResult = await host.waitResult('ev-link');
    expect(fifoResult).toMatchObject({ state: 'rejected', error: { code: 'bad_envelope' } });
    expect(linkResult).toMatchObject({ state: 'rejected', error: { code: 'bad_envelope' } });
    expect(existsSync(path.join(queue(), 'ev-fifo.json'))).toBe(false);
    expect(readFileSync(secret, 'utf8')).toBe('not for the sandbox');
    // Alive, and a valid request right after is answered.
    host.submit(key, 'after-hostile', 'hello');
    expect((await host.waitResult('after-hostile')).state).toBe('succeeded');
  });
});
