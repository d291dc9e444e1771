// Cancellation with the real daemon: queued, waiting and running requests (the whole process tree
// really gone), a finished one left alone, and the built-in dumbwaiter.cancel from the sandbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { GUARDED, NO_OPERATIONS, QUICK, allowlistYaml } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let other: KeyFile;

// A run that leaves a grandchild behind it; `stubborn` also ignores SIGTERM (KILL must follow).
const tree = (name: string, trap: string, pids: string) => `
  - name: ${name}
    command: [/bin/sh, -c, '${trap} sleep 300 & echo $! > "$0.child"; echo $$ > "$0.parent"; wait', "${pids}/{tag}"]
    args:
      tag: {type: string, pattern: "[a-z0-9-]+"}
    scope: read
    approval: never
    concurrency: 4
`;

beforeAll(async () => {
  host = new TestHost(NO_OPERATIONS, { kill_grace_s: 1 });
  const pids = path.join(host.root, 'pids');
  mkdirSync(pids);
  host.writeAllowlist(allowlistYaml(tree('tree', '', pids), tree('stubborn', 'trap "" TERM;', pids), QUICK, GUARDED));
  key = host.createKey('canceller', 'read');
  other = host.createKey('someone-else', 'read');
  await host.startDaemon();
});

afterAll(async () => {
  await host.cleanup();
});

const pidOf = (tag: string, which: 'parent' | 'child') => {
  const f = path.join(host.root, 'pids', `${tag}.${which}`);
  // The shell creates the file before it writes the pid: only a whole line is a pid (an empty file read as 0).
  const text = existsSync(f) ? readFileSync(f, 'utf8') : '';
  return /^\d+\n$/.test(text) ? Number(text) : undefined;
};

/** Running: a process that was killed but not yet reaped by whoever adopted it (a zombie) is not. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ..."; the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return process.platform !== 'linux';
  }
}

async function startedTree(id: string, op: string, tag: string): Promise<{ parent: number; child: number }> {
  host.submit(key, id, op, { tag });
  await host.waitResult(id, ['running']);
  const parent = await eventually('the parent pid', () => pidOf(tag, 'parent'));
  const child = await eventually('the child pid', () => pidOf(tag, 'child'));
  expect(alive(parent) && alive(child)).toBe(true);
  return { parent, child };
}

describe('cancel from the command line', () => {
  it('cancels a queued request: it never runs', async () => {
    expect(host.cli(['pause']).status).toBe(0);
    host.submit(key, 'c-queued', 'quick');
    await host.waitResult('c-queued', ['queued']);
    const r = host.cli(['cancel', 'c-queued', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ changed: true, state: 'cancelled' });
    expect(host.cli(['resume']).status).toBe(0);
    const res = await host.waitResult('c-queued', ['cancelled']);
    expect(res.cancelled_by).toMatch(/^cli:/);
    expect(res.started_at).toBeNull();
    expect(host.audit('c-queued', 'cancelled')[0]?.actor).toMatch(/^cli:/);
  });

  it('cancels a request waiting for approval', async () => {
    host.submit(key, 'c-waiting', 'guarded');
    await host.waitResult('c-waiting', ['awaiting_approval']);
    expect(host.cli(['cancel', 'c-waiting']).status).toBe(0);
    expect((await host.waitResult('c-waiting', ['cancelled'])).state).toBe('cancelled');
    expect(JSON.parse(host.cli(['approvals', 'list', '--json']).stdout)).toEqual([]);
  });

  it('terminates a running request with its whole process tree', async () => {
    const { parent, child } = await startedTree('c-running', 'tree', 'running');
    const r = host.cli(['cancel', 'c-running']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('being terminated');
    const res = await host.waitResult('c-running', ['cancelled']);
    expect(res.signal).toBe('SIGTERM');
    expect(res.cancelled_by).toMatch(/^cli:/);
    await eventually('the process tree to be gone', () => (!alive(parent) && !alive(child) ? true : undefined));
  });

  it('kills a tree that ignores SIGTERM after the grace period', async () => {
    const { parent, child } = await startedTree('c-stubborn', 'stubborn', 'stubborn');
    expect(host.cli(['cancel', 'c-stubborn']).status).toBe(0);
    const res = await host.waitResult('c-stubborn', ['cancelled']);
    expect(res.signal).toBe('SIGKILL');
    await eventually('the process tree to be gone', () => (!alive(parent) && !alive(child) ? true : undefined));
  });

  it('changes nothing for a finished request, and says so', async () => {
    host.submit(key, 'c-done', 'quick');
    const before = await host.waitResult('c-done');
    const r = host.cli(['cancel', 'c-done', '--json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ changed: false, state: 'succeeded', message: expect.stringContaining('nothing changed') });
    expect(host.result('c-done')).toEqual(before);
  });
});

describe('the built-in dumbwaiter.cancel', () => {
  it('cancels a running request of the same key, and answers with its own result', async () => {
    const { parent, child } = await startedTree('b-running', 'tree', 'builtin');
    host.submit(key, 'b-cancel-1', 'dumbwaiter.cancel', { target: 'b-running' });
    const own = await host.waitResult('b-cancel-1');
    expect(own).toMatchObject({ state: 'succeeded', op: 'dumbwaiter.cancel', exit_code: 0 });
    expect(own.stdout).toContain('b-running');
    const target = await host.waitResult('b-running', ['cancelled']);
    expect(target.cancelled_by).toContain(key.key_id);
    await eventually('the process tree to be gone', () => (!alive(parent) && !alive(child) ? true : undefined));
  });

  it("may not cancel another key's request", async () => {
    host.submit(key, 'b-victim', 'guarded');
    await host.waitResult('b-victim', ['awaiting_approval']);
    host.submit(other, 'b-cancel-2', 'dumbwaiter.cancel', { target: 'b-victim' });
    expect((await host.waitResult('b-cancel-2')).error?.code).toBe('scope_denied');
    expect(host.result('b-victim')?.state).toBe('awaiting_approval');
  });

  it('refuses a missing or unknown target, and answers dumbwaiter.ping', async () => {
    host.submit(key, 'b-cancel-3', 'dumbwaiter.cancel', { target: 'no-such-request' });
    expect((await host.waitResult('b-cancel-3')).error?.code).toBe('bad_args');
    host.submit(key, 'b-cancel-4', 'dumbwaiter.cancel', {});
    expect((await host.waitResult('b-cancel-4')).error?.code).toBe('bad_args');
    host.submit(key, 'b-ping', 'dumbwaiter.ping');
    const ping = await host.waitResult('b-ping');
    expect(ping.state).toBe('succeeded');
    expect(JSON.parse(ping.stdout)).toMatchObject({ protocol: 1, key_id: key.key_id });
    host.submit(key, 'b-nope', 'dumbwaiter.reboot');
    expect((await host.waitResult('b-nope')).error?.code).toBe('unknown_op');
  });
});
