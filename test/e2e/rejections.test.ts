// Every rejection code of protocol-v1 section 3 that this build has, through one real daemon: the
// result's state and error code, the audit entry, and nothing run. Then the binding rule: a request
// refused before authentication does not bind its id; one refused after authentication does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { NO_OPERATIONS } from '../helpers/allowlists';
import type { ErrorCode, KeyFile, RequestState, ResultDoc } from '../../shared/protocol/types';

let host: TestHost;
let daemon: DaemonProcess;
/** read scope, every operation its scope allows */
let readKey: KeyFile;
/** write scope, every operation */
let writeKey: KeyFile;
/** write scope, but only the operation `ok` */
let okOnlyKey: KeyFile;
let files: string;
let secretFile: string;

const NODE = JSON.stringify(process.execPath);
const MIN = 60_000;

function iso(offsetMs: number): string {
  return new Date(Date.now() + offsetMs).toISOString();
}

/** The envelope as an object, to tamper with one field and write it back. */
function envelopeObject(key: KeyFile, id: string, op: string, args: Record<string, unknown> = {}): { v: unknown; key_id: string; payload: string; mac: string } {
  return JSON.parse(host.envelope(key, id, op, args)) as { v: unknown; key_id: string; payload: string; mac: string };
}

function auditsOf(id: string, kind: string) {
  return host.audit(id, kind).filter((a) => a.request_id === id);
}

/**
 * Waits for the final result of `id` and checks: the state and code, that nothing ran, and that the
 * audit log has an entry of `auditKind` for the id whose message starts with the code.
 */
async function expectRefusal(id: string, state: RequestState, code: ErrorCode, auditKind: 'rejected' | 'expired' = 'rejected'): Promise<ResultDoc> {
  const r = await host.waitResult(id);
  expect(r.state, JSON.stringify(r.error)).toBe(state);
  expect(r.error?.code).toBe(code);
  expect(r.error?.message.length).toBeGreaterThan(0);
  expect(r).toMatchObject({ v: 1, id, exit_code: null, signal: null, started_at: null, finished_at: null, stdout: '', stderr: '' });
  const entry = await eventually(`a ${auditKind} audit entry for ${id} with ${code}`, () =>
    auditsOf(id, auditKind).find((a) => a.message.startsWith(`${code}: `)),
  );
  expect(entry.kind).toBe(auditKind);
  expect(auditsOf(id, 'started')).toEqual([]);
  expect(host.exists(`queue/${id}.json`)).toBe(false);
  await eventually(`claimed/${id}.json to be dropped`, () => (host.exists(`claimed/${id}.json`) ? undefined : true));
  return r;
}

beforeAll(async () => {
  host = new TestHost(NO_OPERATIONS, { max_request_age_s: 60 });
  files = path.join(host.work, 'files');
  mkdirSync(files);
  writeFileSync(path.join(files, 'inside.txt'), 'inside');
  secretFile = path.join(host.work, 'secret.txt');
  writeFileSync(secretFile, 'outside the root');
  symlinkSync(secretFile, path.join(files, 'escape.txt'));
  const cwd = JSON.stringify(host.work);
  host.writeAllowlist(`version: 1
operations:
  - name: echo
    command: [${NODE}, "-e", "process.stdout.write(process.argv[1])", "{msg}"]
    cwd: ${cwd}
    args:
      msg: {type: string, pattern: "[a-z0-9 ]*", max_length: 40}
    scope: read
    approval: never
    concurrency: 4
  - name: count
    command: [${NODE}, "-e", "process.stdout.write(String(Number(process.argv[1]) * 2))", "{n}"]
    cwd: ${cwd}
    args:
      n: {type: integer, min: 1, max: 10}
    scope: read
    approval: never
  - name: show
    command: [echo, "{file}"]
    cwd: ${cwd}
    args:
      file: {type: path, within: [${JSON.stringify(files)}]}
    scope: read
    approval: never
  - name: ok
    command: ["true"]
    cwd: ${cwd}
    scope: read
    approval: never
  - name: write-thing
    command: ["true"]
    cwd: ${cwd}
    scope: write
    approval: never
`);
  readKey = host.createKey('reader', 'read');
  writeKey = host.createKey('writer', 'write');
  okOnlyKey = host.createKey('ok-only', 'write', ['ok']);
  daemon = await host.startDaemon();

  // The allowlist works: each operation runs for a key allowed to call it.
  host.submit(readKey, 'rj-sanity-echo', 'echo', { msg: 'hello' });
  host.submit(readKey, 'rj-sanity-show', 'show', { file: 'files/inside.txt' });
  host.submit(writeKey, 'rj-sanity-write', 'write-thing', {});
  host.submit(okOnlyKey, 'rj-sanity-ok', 'ok', {});
  for (const id of ['rj-sanity-echo', 'rj-sanity-show', 'rj-sanity-write', 'rj-sanity-ok']) {
    const r = await host.waitResult(id);
    if (r.state !== 'succeeded') throw new Error(`sanity request ${id} did not succeed: ${JSON.stringify(r)}`);
  }
});

afterAll(async () => {
  await host?.cleanup();
});

describe('bad_envelope', () => {
  it('a file that is not JSON', async () => {
    host.writeQueueFile('rj-env-notjson.json', '{"v": 1, "key_id": ');
    const r = await expectRefusal('rj-env-notjson', 'rejected', 'bad_envelope');
    expect(r.error?.message).toMatch(/not JSON/);
  });

  it('a wrong envelope version', async () => {
    const e = envelopeObject(readKey, 'rj-env-v2', 'echo', { msg: 'hi' });
    host.writeQueueFile('rj-env-v2.json', JSON.stringify({ ...e, v: 2 }));
    const r = await expectRefusal('rj-env-v2', 'rejected', 'bad_envelope');
    expect(r.error?.message).toMatch(/version/);
  });

  it('a MAC in uppercase hex (otherwise correct)', async () => {
    const e = envelopeObject(readKey, 'rj-env-upper', 'echo', { msg: 'hi' });
    expect(e.mac.toUpperCase()).not.toBe(e.mac);
    host.writeQueueFile('rj-env-upper.json', JSON.stringify({ ...e, mac: e.mac.toUpperCase() }));
    const r = await expectRefusal('rj-env-upper', 'rejected', 'bad_envelope');
    expect(r.error?.message).toMatch(/mac/);
  });

  it('a signed payload that is not JSON', async () => {
    host.submit(readKey, 'rj-env-payload', 'echo', {}, { payload: 'id=rj-env-payload&op=echo' });
    const r = await expectRefusal('rj-env-payload', 'rejected', 'bad_envelope');
    expect(r.error?.message).toMatch(/payload is not JSON/);
  });

  it('a signed payload whose id differs from the file name', async () => {
    const env = host.envelope(readKey, 'rj-env-other-id', 'echo', { msg: 'hi' });
    host.writeQueueFile('rj-env-idmismatch.json', env);
    const r = await expectRefusal('rj-env-idmismatch', 'rejected', 'bad_envelope');
    expect(r.error?.message).toMatch(/does not match the file name/);
    // Neither id is bound or answered under the payload's id.
    expect(host.result('rj-env-other-id')).toBeUndefined();
  });
});

describe('keys', () => {
  it('unknown_key: a well-formed key id this host does not have', async () => {
    host.submit(readKey, 'rj-unknown-key', 'echo', { msg: 'hi' }, { keyId: 'k_not_on_this_host' });
    const r = await expectRefusal('rj-unknown-key', 'rejected', 'unknown_key');
    expect(r.error?.message).toContain('k_not_on_this_host');
  });

  it('revoked_key: a key revoked while the daemon runs', async () => {
    const k = host.createKey('to-revoke', 'read');
    host.submit(k, 'rj-before-revoke', 'echo', { msg: 'before' });
    expect((await host.waitResult('rj-before-revoke')).state).toBe('succeeded');
    expect(host.service((s) => s.keys.revoke(k.key_id, 'test'))).toBe(true);
    host.submit(k, 'rj-revoked', 'echo', { msg: 'after' });
    const r = await expectRefusal('rj-revoked', 'rejected', 'revoked_key');
    expect(r.error?.message).toContain(k.key_id);
  });
});

describe('bad_signature', () => {
  it('a wrong MAC', async () => {
    host.submit(readKey, 'rj-sig-wrong', 'echo', { msg: 'hi' }, { mac: '0'.repeat(64) });
    await expectRefusal('rj-sig-wrong', 'rejected', 'bad_signature');
  });

  it('a payload altered after signing', async () => {
    const e = envelopeObject(readKey, 'rj-sig-altered', 'echo', { msg: 'harmless' });
    const altered = e.payload.replace('harmless', 'altered');
    expect(altered).not.toBe(e.payload);
    host.writeQueueFile('rj-sig-altered.json', JSON.stringify({ ...e, payload: altered }));
    await expectRefusal('rj-sig-altered', 'rejected', 'bad_signature');
  });

  it('a MAC made with another key', async () => {
    const e = envelopeObject(writeKey, 'rj-sig-otherkey', 'echo', { msg: 'hi' });
    host.writeQueueFile('rj-sig-otherkey.json', JSON.stringify({ ...e, key_id: readKey.key_id }));
    await expectRefusal('rj-sig-otherkey', 'rejected', 'bad_signature');
  });
});

describe('the clock', () => {
  it('clock_skew: created_at 10 minutes in the future', async () => {
    host.submit(readKey, 'rj-skew', 'echo', { msg: 'hi' }, { createdAt: iso(10 * MIN) });
    const r = await expectRefusal('rj-skew', 'rejected', 'clock_skew');
    expect(r.op).toBe('echo');
  });

  it('a created_at 4 minutes in the future is within the allowed skew', async () => {
    host.submit(readKey, 'rj-skew-ok', 'echo', { msg: 'hi' }, { createdAt: iso(4 * MIN) });
    expect((await host.waitResult('rj-skew-ok')).state).toBe('succeeded');
  });

  it('expired: created_at older than max_request_age_s (60 s here)', async () => {
    host.submit(readKey, 'rj-too-old', 'echo', { msg: 'hi' }, { createdAt: iso(-2 * MIN) });
    const r = await expectRefusal('rj-too-old', 'expired', 'expired', 'expired');
    expect(r.error?.message).toMatch(/maximum request age/);
  });

  it('expired: expires_at in the past', async () => {
    host.submit(readKey, 'rj-past-expiry', 'echo', { msg: 'hi' }, { createdAt: iso(-5000), expiresAt: iso(-1000) });
    const r = await expectRefusal('rj-past-expiry', 'expired', 'expired', 'expired');
    expect(r.error?.message).toMatch(/expired at/);
  });
});

describe('policy', () => {
  it('unknown_op', async () => {
    host.submit(writeKey, 'rj-unknown-op', 'rm-rf', {});
    const r = await expectRefusal('rj-unknown-op', 'rejected', 'unknown_op');
    expect(r.op).toBe('rm-rf');
  });

  const badArgs: [string, string, Record<string, unknown>, RegExp][] = [
    ['a wrong type', 'count', { n: 'five' }, /must be an integer/],
    ['an integer out of range', 'count', { n: 11 }, /at most 10/],
    ['an unknown argument', 'echo', { msg: 'hi', extra: 'x' }, /unknown argument "extra"/],
    ['a missing argument', 'echo', {}, /missing required argument "msg"/],
    ['a pattern mismatch', 'echo', { msg: 'UPPER; rm -rf /' }, /pattern/],
    ['a path outside its root', 'show', { file: 'files/../secret.txt' }, /outside the allowed folders/],
    ['an absolute path outside its root', 'show', { file: '/etc/hostname' }, /outside the allowed folders/],
    ['a symlink inside the root that leads outside it', 'show', { file: 'files/escape.txt' }, /outside the allowed folders/],
  ];
  for (const [what, op, args, message] of badArgs) {
    it(`bad_args: ${what}`, async () => {
      const id = `rj-args-${what.replace(/[^a-z]+/g, '-')}`;
      host.submit(readKey, id, op, args);
      const r = await expectRefusal(id, 'rejected', 'bad_args');
      expect(r.op).toBe(op);
      expect(r.error?.message).toMatch(message);
    });
  }

  it('scope_denied: a read key calling a write operation that needs no approval', async () => {
    host.submit(readKey, 'rj-scope-read', 'write-thing', {});
    const r = await expectRefusal('rj-scope-read', 'rejected', 'scope_denied');
    expect(r.error?.message).toMatch(/read scope/);
  });

  it('scope_denied: a key limited to some operations calling another', async () => {
    host.submit(okOnlyKey, 'rj-scope-ops', 'echo', { msg: 'hi' });
    const r = await expectRefusal('rj-scope-ops', 'rejected', 'scope_denied');
    expect(r.error?.message).toMatch(/may not call "echo"/);
  });
});

describe('binding of ids', () => {
  const preAuth: [string, (id: string) => void][] = [
    ['bad_signature', (id) => host.submit(readKey, id, 'echo', { msg: 'forged' }, { mac: 'f'.repeat(64) })],
    ['unknown_key', (id) => host.submit(readKey, id, 'echo', { msg: 'forged' }, { keyId: 'k_stranger' })],
    ['bad_envelope', (id) => host.writeQueueFile(`${id}.json`, 'not json at all')],
  ];

  for (const [code, refuse] of preAuth) {
    it(`a ${code} refusal does not bind its id: a valid request with that id later succeeds`, async () => {
      const id = `rj-unbound-${code.replace('_', '-')}`;
      refuse(id);
      await expectRefusal(id, 'rejected', code as ErrorCode);
      host.submit(readKey, id, 'echo', { msg: 'the real one' });
      const r = await host.waitResult(id, ['succeeded', 'failed']);
      expect(r.state).toBe('succeeded');
      expect(r.stdout).toBe('the real one');
      expect(r.error).toBeNull();
      expect(auditsOf(id, 'conflict')).toEqual([]);
    });

    it(`a ${code} refusal for an id already bound leaves its result unchanged`, async () => {
      const id = `rj-bound-${code.replace('_', '-')}`;
      host.submit(readKey, id, 'echo', { msg: 'bound first' });
      expect((await host.waitResult(id)).state).toBe('succeeded');
      const file = path.join(host.spool, 'results', `${id}.json`);
      const before = readFileSync(file, 'utf8');
      refuse(id);
      await eventually(`the ${code} refusal of ${id} in the audit log`, () =>
        auditsOf(id, 'rejected').find((a) => a.message.startsWith(`${code}: `)),
      );
      await eventually(`${id}.json to leave queue/`, () => (host.exists(`queue/${id}.json`) ? undefined : true));
      await eventually(`claimed/${id}.json to be dropped`, () => (host.exists(`claimed/${id}.json`) ? undefined : true));
      expect(readFileSync(file, 'utf8')).toBe(before);
      expect(auditsOf(id, 'started')).toHaveLength(1);
    });
  }

  it('a refusal after authentication binds the id: the same id with another op then conflicts and does not run', async () => {
    const id = 'rj-bound-after-auth';
    host.submit(readKey, id, 'no-such-op', {});
    await expectRefusal(id, 'rejected', 'unknown_op');
    const before = readFileSync(path.join(host.spool, 'results', `${id}.json`), 'utf8');
    host.submit(readKey, id, 'echo', { msg: 'second try' });
    await eventually(`a conflict for ${id}`, () => auditsOf(id, 'conflict')[0]);
    // The audit entry is recorded before the inbox message is written: wait for both.
    await eventually(`a conflict message for ${id} in the inbox`, () =>
      host.inbox().find((m) => m.kind === 'conflict' && m.ref === id),
    );
    expect(readFileSync(path.join(host.spool, 'results', `${id}.json`), 'utf8')).toBe(before);
    expect(auditsOf(id, 'started')).toEqual([]);
  });

  it('the daemon is still running after all of the refusals', () => {
    expect(daemon.proc.exitCode).toBeNull();
    expect(daemon.proc.signalCode).toBeNull();
    expect(host.audit('', 'internal_error')).toEqual([]);
  });
});
