// Every failure of the command line is a clear message and a non-zero exit, never a stack trace: each
// command and subcommand of the real `dumbwaiter` (the built bundle) with bad input (missing arguments,
// unknown flags, bad values, missing folders, /proc paths, a file where a folder is expected). And
// nothing half made: a key whose file cannot be written is never created.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, TestHost } from '../../helpers/host';

let host: TestHost;
/** A regular file, where a folder is expected. */
let file: string;
/** A folder, where a file is expected. */
let folder: string;

interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** The real command line (no --home given: the test's home comes from the environment). */
function dw(args: string[], home = host.home): Promise<Run> {
  return new Promise((resolve) => {
    const { DUMBWAITER_SPOOL: _none, ...env } = process.env;
    const p = spawn(process.execPath, [CLI, ...args], { cwd: host.root, env: { ...env, DUMBWAITER_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), 30_000);
    p.on('exit', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stderr });
    });
  });
}

/** Runs every case, a few at a time (each is a process of its own). */
async function runAll(cases: { args: string[]; home?: string }[]): Promise<{ args: string[]; home?: string; run: Run }[]> {
  const out: { args: string[]; home?: string; run: Run }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      out.push({ ...c, run: await dw(c.args, c.home) });
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  return out;
}

const keyIds = async () => {
  const p = spawn(process.execPath, [CLI, 'keys', 'list', '--json', '--home', host.home], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((r) => p.on('exit', r));
  return (JSON.parse(out) as { key_id: string }[]).map((k) => k.key_id);
};

beforeAll(() => {
  host = new TestHost('version: 1\noperations: []\n');
  file = path.join(host.root, 'a-file');
  writeFileSync(file, 'not a folder\n');
  folder = path.join(host.root, 'a-folder');
  mkdirSync(folder);
});

afterAll(async () => {
  await host?.cleanup();
});

describe('the command line with bad input', () => {
  it('fails with a message and a non-zero exit, never a stack trace, for every command and subcommand', async () => {
    const missing = path.join(host.root, 'missing', 'dir');
    const newOut = (n: string) => path.join(host.root, `k-${n}.json`);
    const cases: { args: string[]; home?: string }[] = [
      { args: ['no-such-command'] },
      ...['init', 'daemon', 'spools list', 'keys list', 'approvals list', 'cancel x', 'pause', 'resume', 'config get', 'resolve x --succeeded', 'status', 'audit', 'requests', 'show x', 'logs x', 'approvals watch'].flatMap((c) => [
        { args: [...c.split(' '), '--no-such-flag'] },
        ...(c === 'init' ? [] : [{ args: c.split(' '), home: missing }]),
        { args: c.split(' '), home: file },
        { args: c.split(' '), home: '/proc/self/dumbwaiter' },
        { args: c.split(' '), home: `${file}/home` },
      ]),
      { args: ['init', '--spool', '/proc/self/spool'] },
      { args: ['init', '--spool', `${file}/spool`] },
      { args: ['init', '--spool', file] },
      { args: ['init', '--spool', '/'] },
      { args: ['daemon', '--spool', 'no-such-spool'] },
      { args: ['spools', 'no-such-sub'] },
      { args: ['spools', 'add'] },
      { args: ['spools', 'add', 'x'] },
      { args: ['spools', 'add', 'bad name!', path.join(host.root, 'x')] },
      { args: ['spools', 'add', 'x', '/proc/self/x'] },
      { args: ['spools', 'add', 'x', file] },
      { args: ['spools', 'add', 'x', `${file}/x`] },
      { args: ['spools', 'add', 'x', host.spool] },
      { args: ['spools', 'remove'] },
      { args: ['spools', 'remove', 'no-such-spool'] },
      { args: ['spools', 'check'] },
      { args: ['spools', 'check', 'no-such-spool'] },
      { args: ['spools', 'adopt', 'x', folder] },
      { args: ['spools', 'adopt', 'x', missing, '--from-home', missing, '--yes'] },
      { args: ['spools', 'adopt', 'x', host.spool, '--from-home', '/proc/self', '--yes'] },
      { args: ['keys'] },
      { args: ['keys', 'no-such-sub'] },
      { args: ['keys', 'create'] },
      { args: ['keys', 'create', 'n'] },
      { args: ['keys', 'create', 'n', '--out', path.join(missing, 'k.json')] },
      { args: ['keys', 'create', 'n', '--out', '/proc/self/k.json'] },
      { args: ['keys', 'create', 'n', '--out', `${file}/k.json`] },
      { args: ['keys', 'create', 'n', '--out', file] },
      { args: ['keys', 'create', 'n', '--out', folder, '--force'] },
      { args: ['keys', 'create', 'n', '--out', newOut('scope'), '--scope', 'admin'] },
      { args: ['keys', 'create', 'n', '--out', newOut('ops'), '--ops', 'bad op!'] },
      { args: ['keys', 'create', ' n', '--out', newOut('name')] },
      { args: ['keys', 'create', 'n', '--out', newOut('spool'), '--spool', 'no-such-spool'] },
      { args: ['keys', 'revoke'] },
      { args: ['keys', 'revoke', 'k_none'] },
      { args: ['keys', 'rotate'] },
      { args: ['keys', 'rotate', 'k_none', '--out', newOut('rotate')] },
      { args: ['keys', 'rotate', 'k_none', '--out', path.join(missing, 'k.json')] },
      { args: ['approvals', 'no-such-sub'] },
      { args: ['approvals', 'approve'] },
      { args: ['approvals', 'approve', 'none'] },
      { args: ['approvals', 'approve', 'none', '--for', 'banana'] },
      { args: ['approvals', 'approve', 'none', '--for', '1h', '--args-match', 'no-equals'] },
      { args: ['approvals', 'deny'] },
      { args: ['approvals', 'deny', 'none'] },
      { args: ['approvals', 'revoke-grant'] },
      { args: ['approvals', 'revoke-grant', 'none'] },
      { args: ['cancel'] },
      { args: ['cancel', 'none'] },
      { args: ['config', 'no-such-sub'] },
      { args: ['config', 'get', 'no_such_setting'] },
      { args: ['config', 'set'] },
      { args: ['config', 'set', 'max_concurrent_runs'] },
      { args: ['config', 'set', 'max_concurrent_runs', 'banana'] },
      { args: ['config', 'set', 'max_concurrent_runs', '-1'] },
      { args: ['config', 'set', 'host_id', 'x'] },
      { args: ['config', 'set', 'spools', '[]'] },
      { args: ['config', 'set', 'no_such_setting', '1'] },
      { args: ['resolve'] },
      { args: ['resolve', 'none'] },
      { args: ['resolve', 'none', '--succeeded', '--failed'] },
      { args: ['resolve', 'none', '--check'] },
      { args: ['audit', '--limit', 'banana'] },
      { args: ['audit', '--limit', '-5'] },
      { args: ['audit', '--kind'] },
      { args: ['requests', 'extra'] },
      { args: ['requests', '--state', 'bogus'] },
      { args: ['requests', '--state'] },
      { args: ['requests', '--key', 'nobody'] },
      { args: ['requests', '--since', 'banana'] },
      { args: ['requests', '--limit', '0'] },
      { args: ['requests', '--limit', '1001'] },
      { args: ['requests', '--spool', 'no-such-spool'] },
      { args: ['show'] },
      { args: ['show', 'none'] },
      { args: ['show', 'a', 'b'] },
      { args: ['logs'] },
      { args: ['logs', 'none'] },
      { args: ['logs', 'none', '--follow'] },
      { args: ['logs', 'none', '--json'] },
      { args: ['approvals', 'watch', 'extra'] },
      { args: ['approvals', 'watch', '--json'] },
    ];
    const before = await keyIds();
    const bad = (await runAll(cases)).filter(({ run }) => run.status === 0 || run.status === null || /^\s+at /m.test(run.stderr) || run.stderr.trim() === '');
    expect(bad.map(({ args, home, run }) => `dumbwaiter ${args.join(' ')}${home ? ` (home ${home})` : ''}: exit ${run.status ?? run.signal}\n${run.stderr}`)).toEqual([]);
    expect(await keyIds()).toEqual(before); // none of the failed key commands left a key behind
  }, 240_000);
});

describe('keys create --out', () => {
  it('into a missing folder: one line, and no key made', async () => {
    const before = await keyIds();
    const r = await dw(['keys', 'create', 'n', '--out', '/missing/dir/k.json']);
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual(['dumbwaiter keys: cannot write the key file /missing/dir/k.json: the folder /missing/dir does not exist']);
    expect(await keyIds()).toEqual(before);
  });

  it('into /proc (refused by the check, or as root by the write itself): the key is rolled back, never active unwritten', async () => {
    const before = await keyIds();
    const r = await dw(['keys', 'create', 'n', '--out', '/proc/self/k.json']);
    expect(r.status).toBe(1);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(await keyIds()).toEqual(before);
  });

  it('that works writes the file of the key it lists', async () => {
    const out = path.join(host.root, 'good.key.json');
    expect((await dw(['keys', 'create', 'good', '--out', out])).status).toBe(0);
    const written = JSON.parse(readFileSync(out, 'utf8')) as { key_id: string };
    expect(await keyIds()).toContain(written.key_id);
  });
});
