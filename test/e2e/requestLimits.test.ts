// A request's own envelope (payload timeout_s and max_output_bytes) through the real daemon: it can
// only tighten what its operation allows; a larger value is refused as bad_args, and nothing runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningHost, type DaemonProcess, type TestHost } from '../helpers/host';
import { allowlistYaml } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let daemon: DaemonProcess;

beforeAll(async () => {
  ({ host, key, daemon } = await runningHost(
    allowlistYaml(
      { name: 'nap', description: 'sleeps', command: ['/bin/sleep', '{s}'], args: { s: { type: 'integer', min: 0, max: 60 } }, timeout_s: 30 },
      { name: 'say', description: 'prints', command: ['/usr/bin/printf', '%s', '{text}'], args: { text: { type: 'string', max_length: 4000 } }, timeout_s: 30, max_output_bytes: 4096 },
    ),
    { name: 'agent' },
  ));
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  host?.cleanup();
});

describe('a request with its own limits', () => {
  it('is killed at its own shorter timeout', async () => {
    host.submit(key, 'lim-timeout', 'nap', { s: 20 }, { extra: { timeout_s: 1 } });
    const r = await host.waitResult('lim-timeout');
    expect(r).toMatchObject({ state: 'failed', error: { code: 'timeout' } });
    expect(r.error!.message).toContain('1 s');
  });

  it('keeps only its own smaller output budget', async () => {
    host.submit(key, 'lim-output', 'say', { text: 'x'.repeat(3000) }, { extra: { max_output_bytes: 100 } });
    const r = await host.waitResult('lim-output');
    expect(r).toMatchObject({ state: 'succeeded', stdout_truncated: true });
    expect(r.stdout.length).toBeLessThanOrEqual(100);
  });

  it('asking for more than the operation allows is refused as bad_args, naming both', async () => {
    host.submit(key, 'lim-more', 'nap', { s: 0 }, { extra: { timeout_s: 31 } });
    const r = await host.waitResult('lim-more');
    expect(r).toMatchObject({ state: 'rejected', error: { code: 'bad_args' } });
    expect(r.error!.message).toMatch(/31/);
    expect(r.error!.message).toMatch(/30/);
    expect(r.started_at).toBeNull();
  });

  it('a limit that is not a whole number is a bad envelope', async () => {
    host.submit(key, 'lim-type', 'nap', { s: 0 }, { extra: { max_output_bytes: '10' } });
    expect(await host.waitResult('lim-type')).toMatchObject({ state: 'rejected', error: { code: 'bad_envelope' } });
  });

  it('survives a restart of the daemon: the limit recorded at intake still holds when it starts', async () => {
    expect(host.cli(['pause']).status).toBe(0);
    host.submit(key, 'lim-restart', 'nap', { s: 20 }, { extra: { timeout_s: 1 } });
    await host.waitResult('lim-restart', ['queued']);
    await daemon.stop();
    daemon = await host.startDaemon();
    expect(host.cli(['resume']).status).toBe(0);
    expect(await host.waitResult('lim-restart')).toMatchObject({ state: 'failed', error: { code: 'timeout' } });
  });
});
