// dw.cjs and dw.py say the same: run side by side (copies of the spool's, with nothing else) against one
// real daemon, each outcome of a request gives the same stdout, the same exit code and the same stderr
// lines, each line once; `status`, `ops` and `doctor` print the same lines; `<command> --help` and
// `help <command>` print that command's usage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { GATED_OP, TestHost, sandboxWithClients } from '../helpers/host';
import { allowlistYaml, echoOp } from '../helpers/allowlists';
import { COMMAND_HELP } from '../../shared/client/commandHelp';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let sandbox: string;
let env: Record<string, string>;

beforeAll(async () => {
  host = new TestHost(
    allowlistYaml(
      echoOp({ description: 'Print a message', args: { msg: { type: 'string', max_length: 20 } } }),
      { name: 'fail', description: 'Exit with a code', command: ['/bin/sh', '-c', 'echo "failing with $0" >&2; exit "$0"', '{code}'], args: { code: { type: 'integer', min: 1, max: 255 } } },
      { name: 'deploy', description: 'Deploy (a human approves it)', command: ['echo', 'deployed'], scope: 'write', approval: 'always' },
      GATED_OP,
    ),
  );
  key = host.createKey('alike', 'write');
  await host.startDaemon();
  const made = sandboxWithClients(host.spool, key);
  sandbox = made.dir;
  env = { ...made.env, PYTHONDONTWRITEBYTECODE: '1' };

  host.submit(key, 'al-ok', 'echo', { msg: 'hello' });
  host.submit(key, 'al-fail', 'fail', { code: 3 });
  host.submit(key, 'al-rejected', 'echo', { msg: 'x'.repeat(21) });
  host.submit(key, 'al-expired', 'echo', { msg: 'late' }, { expiresAt: new Date(Date.now() - 1000).toISOString() });
  host.submit(key, 'al-deny', 'deploy');
  host.submit(key, 'al-cancel', 'gated', { go: path.join(host.root, 'never') });
  await host.waitResult('al-deny', ['awaiting_approval']);
  expect(host.cli(['approvals', 'deny', 'al-deny', '--reason', 'not on a Friday']).status).toBe(0);
  await host.waitResult('al-cancel', ['running']);
  expect(host.cli(['cancel', 'al-cancel']).status).toBe(0);
  for (const id of ['al-ok', 'al-fail', 'al-rejected', 'al-expired', 'al-deny', 'al-cancel']) await host.waitResult(id, ['succeeded', 'failed', 'rejected', 'expired', 'denied', 'cancelled']);
}, 120_000);

afterAll(async () => {
  await host.cleanup();
  rmSync(sandbox, { recursive: true, force: true });
});

function dw(client: 'dw.cjs' | 'dw.py', args: string[]) {
  const [cmd, ...argv] = client === 'dw.cjs' ? [process.execPath, path.join(sandbox, client), ...args] : ['python3', path.join(sandbox, client), ...args];
  const r = spawnSync(cmd!, argv, { encoding: 'utf8', cwd: sandbox, env, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** What both clients give for `args`, after checking that they give the same. */
function alike(args: string[], mask = (t: string) => t) {
  const [node, py] = (['dw.cjs', 'dw.py'] as const).map((c) => dw(c, args)).map((r) => ({ ...r, stdout: mask(r.stdout), stderr: mask(r.stderr) }));
  expect(py, `dw ${args.join(' ')}`).toEqual(node);
  const lines = node!.stderr.split('\n').filter(Boolean);
  expect(new Set(lines).size, `each line once: ${node!.stderr}`).toBe(lines.length);
  return node!;
}

/** Each outcome: its exit code and the one line both clients say about it on stderr. */
const OUTCOMES: [string, number, string][] = [
  ['al-ok', 0, ''],
  ['al-fail', 3, 'failing with 3\ndw: al-fail failed: the operation exited with 3\n'],
  ['al-rejected', 80, 'dw: al-rejected rejected: bad_args: '],
  ['al-expired', 82, 'dw: al-expired expired: the request expired at '],
  ['al-deny', 81, 'dw: al-deny denied by '],
  ['al-cancel', 83, 'dw: al-cancel cancelled by '],
];

describe('dw.cjs and dw.py', () => {
  it.each(OUTCOMES)('say the same of %s, once: dw wait and dw status', (id, code, said) => {
    const w = alike(['wait', id]);
    expect(w.status).toBe(code);
    expect(w.stderr.startsWith(said)).toBe(true);
    expect(w.stderr.split('\n').filter(Boolean).length).toBeLessThanOrEqual(2);
    const s = alike(['status', id]);
    expect(s.status).toBe(0);
    // dw status says how it ended in the same words, on stdout.
    expect(s.stdout).toBe(code === 0 ? `${id} succeeded\n` : w.stderr.split('\n').filter((l) => l.startsWith('dw: ')).map((l) => `${l.slice(4)}\n`).join(''));
  });

  it('say the same of a denial, naming who denied it and why, and the word "denied" once', () => {
    const w = alike(['wait', 'al-deny']);
    expect(w.stderr).toMatch(/^dw: al-deny denied by \S+: not on a Friday\n$/);
  });

  it('say the same of a conflict (an id bound to another request), and run nothing', () => {
    const r = alike(['run', 'echo', 'msg=other', '--id', 'al-ok']);
    expect(r.status).toBe(87);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^al-ok\ndw: al-ok conflict: .*\n$/);
  });

  it('list the same operations (dw ops)', () => {
    const r = alike(['ops']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('deploy  [write, asks a human, timeout ');
    expect(r.stdout).toContain('    msg: string (at most 20 chars, required)\n');
  });

  it('check the same things in the same words (dw doctor), the clocks aside', () => {
    const r = alike(['doctor'], (t) => t.replace(/the host is \d+\.\d s (ahead of|behind)/, 'the host is N s ahead of'));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`ok    key file: key ${key.key_id}\n`);
    expect(r.stdout).not.toContain('FAIL');
  });

  it.each(Object.keys(COMMAND_HELP).filter((c) => c !== 'mcp'))("print %s's usage for `dw CMD --help` and `dw help CMD`", (cmd) => {
    for (const args of [[cmd, '--help'], ['help', cmd]]) expect(alike(args)).toEqual({ status: 0, stdout: COMMAND_HELP[cmd], stderr: '' });
  });

  it('dw.cjs prints the usage of its own mcp command', () => {
    expect(dw('dw.cjs', ['mcp', '--help'])).toEqual({ status: 0, stdout: COMMAND_HELP.mcp, stderr: '' });
  });
});
