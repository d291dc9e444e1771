// A request from the sandbox to its result, through the real daemon: the happy path and how runs end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { TestHost, type DaemonProcess } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, type OpSpec } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

const SCRIPT = `
const [mode, arg] = process.argv.slice(2);
if (mode === 'env') console.log(JSON.stringify(process.env));
if (mode === 'argv') console.log(JSON.stringify(process.argv.slice(3)));
if (mode === 'exit') { console.error('failing on purpose'); process.exit(Number(arg)); }
if (mode === 'flood') { const line = 'x'.repeat(99) + '\\n'; for (let i = 0; i < Number(arg); i++) process.stdout.write(line); console.log('THE END'); }
if (mode === 'sleep') setTimeout(() => {}, Number(arg) * 1000);
if (mode === 'pwd') console.log(process.cwd());
`;

let host: TestHost;
let key: KeyFile;
let daemon: DaemonProcess;

beforeAll(async () => {
  host = new TestHost(NO_OPERATIONS);
  const script = path.join(host.root, 'tool.cjs');
  writeFileSync(script, SCRIPT);
  const op = (name: string, args: string[], fields: Partial<OpSpec> = {}): OpSpec => ({ name, command: [process.execPath, script, ...args], cwd: host.work, timeout_s: 30, ...fields });
  host.writeAllowlist(
    allowlistYaml(
      op('echo', ['argv', '{msg}'], { args: { msg: { type: 'string', max_length: 500, allow_dash: true } } }),
      op('env', ['env'], { env: { OP_SETTING: 'from-allowlist' } }),
      op('fail', ['exit', '{code}'], { args: { code: { type: 'integer', min: 0, max: 255 } } }),
      op('flood', ['flood', '{lines}'], { max_output_bytes: 2048, args: { lines: { type: 'integer', min: 1, max: 100000 } } }),
      op('slow', ['sleep', '30'], { timeout_s: 1 }),
      op('pwd', ['pwd']),
      { name: 'missing-program', command: ['/nonexistent/program'] },
    ),
  );
  chmodSync(script, 0o644);
  key = host.createKey('tests', 'read');
  daemon = await host.startDaemon();
});

afterAll(async () => {
  await host.cleanup();
});

describe('round trip', () => {
  it('runs a request and writes its result and log', async () => {
    host.submit(key, 'rt-1', 'echo', { msg: 'hello' });
    const r = await host.waitResult('rt-1');
    expect(r).toMatchObject({ v: 1, id: 'rt-1', op: 'echo', state: 'succeeded', exit_code: 0, signal: null, error: null });
    expect(JSON.parse(r.stdout)).toEqual(['hello']);
    expect(r.started_at).not.toBeNull();
    expect(r.duration_ms).toBeGreaterThanOrEqual(0);
    expect(host.logOf('rt-1')).toContain('hello');
    expect(host.exists('queue/rt-1.json')).toBe(false);
    expect(host.exists('claimed/rt-1.json')).toBe(false);
  });

  it('passes an injection attempt as one literal argument, never to a shell', async () => {
    const evil = `"; touch ${host.root}/pwned; echo $(id) \`id\` | cat && rm -rf ~ #`;
    host.submit(key, 'rt-inject', 'echo', { msg: evil });
    const r = await host.waitResult('rt-inject');
    expect(r.state).toBe('succeeded');
    expect(JSON.parse(r.stdout)).toEqual([evil]);
    expect(host.exists('../pwned')).toBe(false);
  });

  it('gives the child a fixed environment with the request id, and the operation cwd', async () => {
    host.submit(key, 'rt-env', 'env', {});
    const env = JSON.parse((await host.waitResult('rt-env')).stdout) as Record<string, string>;
    expect(env.DUMBWAITER_REQUEST_ID).toBe('rt-env');
    expect(env.OP_SETTING).toBe('from-allowlist');
    expect(env.PATH).toBeTruthy();
    // Nothing of the daemon's own environment leaks beyond the minimal base.
    expect(Object.keys(env).filter((k) => !['PATH', 'HOME', 'LANG', 'LC_ALL', 'USER', 'LOGNAME', 'TMPDIR', 'TZ', 'OP_SETTING', 'DUMBWAITER_REQUEST_ID', 'DUMBWAITER_RUN_MARKER'].includes(k) && !k.startsWith('NODE_') && k !== 'COLOR')).toEqual([]);
    host.submit(key, 'rt-pwd', 'pwd', {});
    expect((await host.waitResult('rt-pwd')).stdout.trim()).toBe(host.work);
  });

  it('records a non-zero exit as failed with its exit code and stderr', async () => {
    host.submit(key, 'rt-fail', 'fail', { code: 3 });
    const r = await host.waitResult('rt-fail');
    expect(r).toMatchObject({ state: 'failed', exit_code: 3, error: null });
    expect(r.stderr).toContain('failing on purpose');
  });

  it('keeps the tail of long output within the limit and marks it truncated', async () => {
    host.submit(key, 'rt-flood', 'flood', { lines: 1000 });
    const r = await host.waitResult('rt-flood');
    expect(r.state).toBe('succeeded');
    expect(r.stdout_truncated).toBe(true);
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(2048);
    expect(r.stdout).toContain('THE END');
    const log = host.logOf('rt-flood');
    expect(log).toContain('output limit of 2048 bytes reached');
    expect(Buffer.byteLength(log)).toBeLessThan(2048 + 200);
  });

  it('kills a run at its timeout, as failed with error timeout', async () => {
    host.submit(key, 'rt-slow', 'slow', {});
    const r = await host.waitResult('rt-slow');
    expect(r.state).toBe('failed');
    expect(r.error?.code).toBe('timeout');
    expect(r.signal).toBe('SIGTERM');
  });

  it('reports a program that cannot start as spawn_failed', async () => {
    host.submit(key, 'rt-nospawn', 'missing-program', {});
    const r = await host.waitResult('rt-nospawn');
    expect(r.state).toBe('failed');
    expect(r.error?.code).toBe('spawn_failed');
    expect(r.error?.message).toContain('/nonexistent/program');
  });

  it('keeps host.json fresh and catalog.json in step with the allowlist', async () => {
    const hostJson = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(path.join(host.spool, 'host.json'), 'utf8')));
    expect(hostJson).toMatchObject({ v: 1, protocol: 1, paused: false, up: true });
    expect(Date.now() - Date.parse(hostJson.heartbeat_at)).toBeLessThan(10_000);
    const catalog = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(path.join(host.spool, 'catalog.json'), 'utf8')));
    expect(catalog.operations.map((o: { name: string }) => o.name)).toContain('echo');
    const echo = catalog.operations.find((o: { name: string }) => o.name === 'echo');
    expect(echo.args_schema).toMatchObject({ type: 'object', required: ['msg'], additionalProperties: false });
  });

  it('stops cleanly on SIGTERM and says so in host.json', async () => {
    const { code } = await daemon.stop();
    expect(code).toBe(0);
    const fs = await import('node:fs');
    expect(JSON.parse(fs.readFileSync(path.join(host.spool, 'host.json'), 'utf8')).up).toBe(false);
  });
});
