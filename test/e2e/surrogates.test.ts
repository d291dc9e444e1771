// A JSON-escaped lone surrogate (`\ud800`) is valid JSON and valid UTF-8 on disk, but no program can be
// given it: argv would carry U+FFFD instead of what was signed and shown. The real daemon refuses a
// payload holding one anywhere (an argument's value, a key, the intent) and nothing runs; it then
// answers a valid request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningHost, type TestHost } from '../helpers/host';
import { allowlistYaml, echoOp } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;

beforeAll(async () => {
  ({ host, key } = await runningHost(allowlistYaml(echoOp({ command: ['/bin/echo', '{msg}'], args: { msg: { type: 'string', max_length: 40 } } })), { name: 'agent', scope: 'read' }));
}, 60_000);

afterAll(async () => {
  await host?.cleanup();
});

describe('lone surrogates', () => {
  it.each([
    ['an argument value', 'sur-value', { args: { msg: 'a\ud800b' } }, 'payload.args.msg'],
    ['an argument name', 'sur-key', { args: { ['m\udc00']: 'x' } }, 'a key in payload.args'],
    ['the intent', 'sur-intent', { args: { msg: 'x' }, intent: 'deploy \udfff now' }, 'payload.intent'],
  ] as const)('a lone surrogate in %s is refused as bad_envelope and nothing runs', async (_what, id, o, where) => {
    const payload = JSON.stringify({ id, op: 'echo', args: o.args, created_at: new Date().toISOString(), ...('intent' in o ? { intent: o.intent } : {}) });
    expect(payload).toMatch(/\\u[dD][89a-fA-F][0-9a-fA-F]{2}/); // escaped in the JSON text: the file itself is plain ASCII
    host.submit(key, id, 'echo', {}, { payload });
    const r = await host.waitResult(id);
    expect(r.state).toBe('rejected');
    expect(r.error?.code).toBe('bad_envelope');
    expect(r.error?.message).toContain(where);
    expect(r.error?.message).toContain('lone surrogate');
    expect(r.started_at).toBeNull();
    expect(host.audit(id, 'started').filter((a) => a.request_id === id)).toEqual([]);
  });

  it('a surrogate pair (a real character outside the BMP) still passes, and the daemon answers right after', async () => {
    host.submit(key, 'sur-pair', 'echo', { msg: 'ok \u{1F600}' });
    const r = await host.waitResult('sur-pair');
    expect(r.state).toBe('succeeded');
    expect(r.stdout).toBe('ok \u{1F600}\n');
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });
});
