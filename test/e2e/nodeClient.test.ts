// The bundled sandbox client (spool/bin/dw.cjs), copied out of the spool and run with no node_modules,
// against the real daemon: the round trip, every exit code, typed arguments, a client killed after
// submitting, doctor, and the MCP server through the SDK's own client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { TestHost, clockPast, eventually, type DaemonProcess } from '../helpers/host';
import { track } from '../helpers/processes';
import type { CatalogDoc } from '../../shared/protocol/types';

let host: TestHost;
let daemon: DaemonProcess;
let bin: string;
let env: Record<string, string>;
let readEnv: Record<string, string>;

const OPS = (root: string) => `version: 1
operations:
  - name: echo
    description: Print the words
    command: [echo, "{msg}"]
    args:
      msg: {type: string, max_length: 100}
    scope: read
    approval: never
  - name: typed
    description: Show typed arguments
    command: [echo, "workers={workers}", "{verbose}", "{files}"]
    args:
      workers: {type: integer, min: 1, max: 8}
      verbose: {type: boolean, flag: --verbose}
      files: {type: array, items: {type: string, pattern: "[a-z.]+"}, max_items: 3}
    scope: read
    approval: never
  - name: fail
    command: [/bin/sh, -c, 'echo failing >&2; exit 3']
    scope: read
    approval: never
  - name: slow
    command: [/bin/sh, -c, 'echo started; sleep 30']
    scope: read
    approval: never
    concurrency: 4
  - name: deploy
    command: [echo, deployed]
    scope: write
  - name: nowhere
    command: [/nonexistent/tool]
    scope: read
    approval: never
  - name: fresh
    command: [echo, fresh]
    cwd: ${JSON.stringify(root)}
    scope: read
    approval: never
`;

beforeAll(async () => {
  host = new TestHost('version: 1\noperations: []\n');
  host.writeAllowlist(OPS(host.work));
  // A sandbox with nothing but a copy of the spool's bin/ folder: no node_modules anywhere above it.
  bin = mkdtempSync(path.join(os.tmpdir(), 'dw-sandbox-'));
  const keyFile = path.join(bin, 'key.json');
  writeFileSync(keyFile, JSON.stringify(host.createKey('node-client', 'write')));
  const readKey = path.join(bin, 'read-key.json');
  writeFileSync(readKey, JSON.stringify(host.createKey('reader', 'read')));
  env = { DUMBWAITER_SPOOL: host.spool, DUMBWAITER_KEY_FILE: keyFile };
  readEnv = { DUMBWAITER_SPOOL: host.spool, DUMBWAITER_KEY_FILE: readKey };
  daemon = await host.startDaemon();
  copyFileSync(path.join(host.spool, 'bin', 'dw.cjs'), path.join(bin, 'dw.cjs'));
});

afterAll(async () => {
  await host.cleanup();
  rmSync(bin, { recursive: true, force: true });
});

function dw(args: string[], e: Record<string, string> = env, timeout = 30_000) {
  const r = spawnSync(process.execPath, [path.join(bin, 'dw.cjs'), ...args], {
    encoding: 'utf8',
    cwd: bin,
    env: { PATH: process.env.PATH!, HOME: bin, ...e },
    timeout,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('dw from the spool bin/ folder', () => {
  it('lists the operations with their arguments', () => {
    const r = dw(['ops']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('typed');
    expect(r.stdout).toContain('workers: integer (>= 1, <= 8, required)');
    expect(r.stdout).toContain('files: list of string');
    const json = JSON.parse(dw(['ops', '--json']).stdout) as CatalogDoc['operations'];
    expect(json.map((o) => o.name)).toContain('echo');
  });

  it('runs a request: the id on stderr at once, the live output on stdout, exit 0', () => {
    const r = dw(['run', 'echo', 'msg=hello; rm -rf ~']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('hello; rm -rf ~\n');
    const id = r.stderr.trim().split('\n')[0]!;
    expect(host.result(id)?.state).toBe('succeeded');
  });

  it('types arguments by the catalog', () => {
    const r = dw(['run', 'typed', 'workers=4', 'verbose=true', 'files=a.ts', 'files=b.ts']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('workers=4 --verbose a.ts b.ts\n');
    const id = r.stderr.trim();
    expect(host.service((s) => s.requests.get(id)?.args_json)).toBe('{"workers":4,"verbose":true,"files":["a.ts","b.ts"]}');
  });

  it.each([
    [['workers=four'], 'argument "workers" must be an integer'],
    [['workers=9'], 'argument "workers" must be at most 8'],
    [['workers=2', 'colour=red'], 'unknown argument "colour"'],
    [['verbose=true'], 'missing required argument "workers"'],
    [['workers=2', 'files=UPPER'], 'argument "files[0]" does not match'],
  ])('refuses %j before writing anything (exit 65)', (pairs, message) => {
    const before = readdirSync(path.join(host.spool, 'queue')).length;
    const r = dw(['submit', 'typed', ...pairs]);
    expect(r.status).toBe(65);
    expect(r.stderr).toContain(message);
    expect(readdirSync(path.join(host.spool, 'queue')).length).toBe(before);
    expect(readdirSync(path.join(host.spool, 'tmp'))).toEqual([]);
  });

  it('passes a failing operation\'s exit code through', () => {
    const r = dw(['run', 'fail']);
    expect(r.status).toBe(3);
    expect(r.stdout).toContain('failing');
  });

  it('exits 80 when rejected, 86 when the program cannot start', () => {
    const rejected = dw(['run', 'deploy'], readEnv);
    expect(rejected.status).toBe(80);
    expect(rejected.stderr).toContain('scope_denied');
    expect(dw(['run', 'nowhere']).status).toBe(86);
  });

  it('exits 81 when a human denies it', async () => {
    const id = dw(['submit', 'deploy']).stdout.trim();
    await host.waitResult(id, ['awaiting_approval']);
    expect(host.cli(['approvals', 'deny', id, '--reason', 'no']).status).toBe(0);
    const r = dw(['wait', id]);
    expect(r.status).toBe(81);
    expect(r.stderr).toContain('denied');
  });

  it('exits 82 when it expired before it could start', async () => {
    expect(host.cli(['pause']).status).toBe(0);
    const id = dw(['submit', 'fresh', '--expires-in', '1']).stdout.trim();
    await host.waitResult(id, ['queued']);
    // Until its expiry time has passed: a time on the clock, not an event.
    await clockPast(Date.parse(host.service((svc) => svc.requests.get(id)!.expires_at!)));
    expect(host.cli(['resume']).status).toBe(0);
    expect(dw(['wait', id]).status).toBe(82);
  });

  it('exits 85 when --timeout passes first, and 83 once cancelled; a killed client can reattach with dw wait', async () => {
    // A client that dies right after submitting: the request lives on, and a new client finds it.
    const child = track(spawn(process.execPath, [path.join(bin, 'dw.cjs'), 'run', 'slow'], { env: { PATH: process.env.PATH!, ...env } }));
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const id = await eventually('the id on stderr', () => (err.includes('\n') ? err.split('\n')[0] : undefined));
    await host.waitResult(id, ['running']);
    child.kill('SIGKILL');
    const pending = dw(['wait', id, '--timeout', '0.5']);
    expect(pending.status).toBe(85);
    expect(pending.stderr).toContain(`dw wait ${id}`);
    const cancel = dw(['cancel', id]);
    expect(cancel.status).toBe(0);
    expect(cancel.stdout).toContain(id);
    expect(dw(['wait', id]).status).toBe(83);
    expect(JSON.parse(dw(['status', id, '--json']).stdout).state).toBe('cancelled');
  });

  it('shows the inbox: a conflict on a reused id', async () => {
    expect(dw(['run', 'echo', 'msg=one', '--id', 'reused-1']).status).toBe(0);
    expect(dw(['submit', 'echo', 'msg=two', '--id', 'reused-1']).status).toBe(0);
    await eventually('the conflict message', () => host.inbox().find((m) => m.ref === 'reused-1'));
    const r = dw(['inbox']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/conflict \(reused-1\)/);
    expect(JSON.parse(dw(['inbox', '--json']).stdout)).toEqual(host.inbox());
  });

  it('doctor passes with the host up', () => {
    const r = dw(['doctor']);
    expect(r.stdout).toContain('key accepted');
    expect(r.status).toBe(0);
  });

  it('exits 84 for a run left uncertain by a host crash', async () => {
    const id = dw(['submit', 'slow']).stdout.trim();
    await host.waitResult(id, ['running']);
    const pid = await host.runPid(id); // recorded just after the start: without it, the orphan below would live on
    await daemon.kill9();
    daemon = await host.startDaemon();
    expect(dw(['wait', id]).status).toBe(84);
    process.kill(-pid, 'SIGKILL'); // the orphaned run of the killed daemon
  });

  it('doctor fails fast, exit 69, with the host stopped', async () => {
    await daemon.stop();
    const started = Date.now();
    const r = dw(['doctor']);
    expect(r.status).toBe(69);
    expect(r.stdout).toContain('the host looks down');
    expect(Date.now() - started).toBeLessThan(8000); // no 10 s wait for a ping nobody answers
    daemon = await host.startDaemon();
  });
});

describe('dw mcp', () => {
  it('lists the catalog as tools, runs one, reports a refusal as a tool error, and follows the catalog', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(bin, 'dw.cjs'), 'mcp', '--wait-s', '20'],
      env: { PATH: process.env.PATH!, ...env },
      cwd: bin,
    });
    const client = new Client({ name: 'test', version: '1' });
    let listChanged = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listChanged++;
    });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['echo', 'typed', 'deploy', 'dumbwaiter_status', 'dumbwaiter_wait', 'dumbwaiter_cancel']));
      const catalog = JSON.parse(readFileSync(path.join(host.spool, 'catalog.json'), 'utf8')) as CatalogDoc;
      expect(tools.find((t) => t.name === 'typed')?.inputSchema).toEqual(catalog.operations.find((o) => o.name === 'typed')?.args_schema);

      const ok = await client.callTool({ name: 'echo', arguments: { msg: 'from mcp' } });
      expect(ok.isError).toBeFalsy();
      const body = JSON.parse((ok.content as { text: string }[])[0]!.text);
      expect(body).toMatchObject({ state: 'succeeded', stdout: 'from mcp\n' });
      const status = await client.callTool({ name: 'dumbwaiter_status', arguments: { id: body.id } });
      expect(JSON.parse((status.content as { text: string }[])[0]!.text).state).toBe('succeeded');

      const bad = await client.callTool({ name: 'typed', arguments: { workers: 'many' } });
      expect(bad.isError).toBe(true);
      expect((bad.content as { text: string }[])[0]!.text).toContain('workers');
      const missing = await client.callTool({ name: 'nowhere', arguments: {} });
      expect(missing.isError).toBe(true);
      expect((missing.content as { text: string }[])[0]!.text).toContain('spawn_failed');

      host.writeAllowlist(OPS(host.work).replace('  - name: fresh', '  - name: brand-new\n    command: ["true"]\n    scope: read\n    approval: never\n  - name: fresh'));
      await eventually('a tools/list_changed notification', () => (listChanged > 0 ? true : undefined), 15_000);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('brand-new');
    } finally {
      await client.close();
    }
  });
});
