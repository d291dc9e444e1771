// A hostile sandbox that swaps things in the spool under the host: files planted where the host will
// write, folders replaced by symlinks to the user's files. Nothing outside the spool may be touched,
// and the daemon must keep going.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, runningHost, type DaemonProcess } from '../helpers/host';
import { allowlistYaml, echoOp } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let daemon: DaemonProcess;
let victim: string;

const ALLOWLIST = allowlistYaml(echoOp(), { name: 'deploy', command: ['echo', 'deployed'], scope: 'write', approval: 'always' });

beforeEach(async () => {
  ({ host, key, daemon } = await runningHost(ALLOWLIST, { name: 'hostile', scope: 'write' }));
  victim = path.join(host.root, 'victim');
  mkdirSync(victim);
  writeFileSync(path.join(victim, 'precious.txt'), 'do not touch\n');
});

afterEach(async () => {
  await host.cleanup();
});

const precious = () => readFileSync(path.join(victim, 'precious.txt'), 'utf8');

describe('entries planted where the host will write', () => {
  it('a symlink planted as the live log is replaced, never written through', async () => {
    symlinkSync(path.join(victim, 'precious.txt'), path.join(host.spool, 'results', 'plant-1.log'));
    host.submit(key, 'plant-1', 'echo', { msg: 'PWNED' });
    expect((await host.waitResult('plant-1')).stdout).toBe('PWNED\n');
    expect(precious()).toBe('do not touch\n');
    expect(host.logOf('plant-1')).toBe('PWNED\n');
  });

  it('a FIFO planted as the live log neither hangs nor crashes the daemon', async () => {
    expect(spawnSync('mkfifo', [path.join(host.spool, 'results', 'plant-2.log')]).status).toBe(0);
    host.submit(key, 'plant-2', 'echo', { msg: 'fifo' });
    expect((await host.waitResult('plant-2')).state).toBe('succeeded');
    host.submit(key, 'plant-2b', 'echo', { msg: 'still alive' });
    expect((await host.waitResult('plant-2b')).stdout).toBe('still alive\n');
  });

  it('a folder planted as the result file goes to quarantine; the request still ends with its result', async () => {
    mkdirSync(path.join(host.spool, 'results', 'plant-3.json'));
    host.submit(key, 'plant-3', 'echo', { msg: 'blocked?' });
    expect((await host.waitResult('plant-3')).state).toBe('succeeded');
    // And a restart is not blocked by anything like it.
    await daemon.stop();
    daemon = await host.startDaemon();
    host.submit(key, 'plant-3b', 'echo', { msg: 'after restart' });
    expect((await host.waitResult('plant-3b')).state).toBe('succeeded');
  });
});

describe('spool folders swapped for symlinks', () => {
  it('results/ swapped for a link to a user folder: nothing is written there, and the host says so', async () => {
    renameSync(path.join(host.spool, 'results'), path.join(host.spool, 'results-old'));
    symlinkSync(victim, path.join(host.spool, 'results'));
    host.submit(key, 'swap-1', 'echo', { msg: 'where does this go' });
    await eventually('the unsafe spool in the audit log', () => host.audit('', 'spool_unsafe')[0]);
    expect(existsSync(path.join(victim, 'swap-1.json'))).toBe(false);
    expect(precious()).toBe('do not touch\n');
    // Put back: the host goes on, and the request is answered in the real folder.
    spawnSync('rm', [path.join(host.spool, 'results')]);
    renameSync(path.join(host.spool, 'results-old'), path.join(host.spool, 'results'));
    expect((await host.waitResult('swap-1')).stdout).toBe('where does this go\n');
  });

  it('a folder replaced by another real folder is used from then on', async () => {
    renameSync(path.join(host.spool, 'results'), path.join(host.spool, 'results-moved'));
    mkdirSync(path.join(host.spool, 'results'), { mode: 0o700 });
    host.submit(key, 'swap-2', 'echo', { msg: 'new folder' });
    expect((await host.waitResult('swap-2')).stdout).toBe('new folder\n');
    expect(host.audit('', 'spool_replaced').length).toBeGreaterThanOrEqual(1);
  });
});

describe('requests that tried to break intake', () => {
  it('deeply nested args are refused, not stranded', async () => {
    const deep = '{"a":'.repeat(2000) + '1' + '}'.repeat(2000);
    const payload = `{"id":"deep-1","op":"echo","args":${deep},"created_at":"${new Date().toISOString()}"}`;
    host.submit(key, 'deep-1', 'echo', {}, { payload });
    const r = await host.waitResult('deep-1');
    expect(r.error?.code).toBe('bad_envelope');
    expect(r.error?.message).toContain('nests deeper');
  });

  it('dumbwaiter.cancel of a waiting request publishes the cancelled result at once', async () => {
    host.submit(key, 'wait-1', 'deploy');
    await host.waitResult('wait-1', ['awaiting_approval']);
    host.submit(key, 'cancel-1', 'dumbwaiter.cancel', { target: 'wait-1' });
    await host.waitResult('cancel-1');
    expect((await host.waitResult('wait-1', ['cancelled'], 3000)).cancelled_by).toContain(key.key_id);
  });

  it('requests queued under a grant do not start once the grant is revoked', async () => {
    host.submit(key, 'g-1', 'deploy');
    await host.waitResult('g-1', ['awaiting_approval']);
    expect(host.cli(['pause']).status).toBe(0);
    const grant = JSON.parse(host.cli(['approvals', 'approve', 'g-1', '--for', '1h', '--json']).stdout).grant.id as string;
    host.submit(key, 'g-2', 'deploy');
    expect((await host.waitResult('g-2', ['queued'])).state).toBe('queued');
    expect(host.cli(['approvals', 'revoke-grant', grant]).status).toBe(0);
    expect(host.cli(['resume']).status).toBe(0);
    expect((await host.waitResult('g-1')).state).toBe('succeeded'); // approved by a human: stands
    expect((await host.waitResult('g-2', ['awaiting_approval'])).state).toBe('awaiting_approval');
  });
});
