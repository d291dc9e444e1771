// The README's quick start: a request from a plain shell script (sh + openssl) to a result file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost } from '../helpers/host';
import { EXAMPLE_ALLOWLIST } from '../../main/core/allowlist/example';

const SCRIPT = path.resolve(import.meta.dirname, '../../examples/submit.sh');
let host: TestHost;
let keyFile: string;

beforeAll(async () => {
  host = new TestHost(EXAMPLE_ALLOWLIST);
  keyFile = path.join(host.root, 'key.json');
  writeFileSync(keyFile, JSON.stringify(host.createKey('shell', 'read')));
  await host.startDaemon();
});

afterAll(async () => {
  await host.cleanup();
});

describe('examples/submit.sh against the example allowlist', () => {
  it('gets a request from a shell script to a result', () => {
    const r = spawnSync('sh', [SCRIPT, keyFile, host.spool, 'echo', '{"msg":"hello from sh"}', 'sh-1'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: 'sh-1', state: 'succeeded', stdout: 'hello from sh\n' });
  });

  it('exits 1 with the result when the request is refused', () => {
    const r = spawnSync('sh', [SCRIPT, keyFile, host.spool, 'echo', '{"msg":"x","extra":1}', 'sh-2'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout).error.code).toBe('bad_args');
  });
});
