// One daemon per home: a second one is refused and told who holds the home; the lock dies with its holder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHost } from '../helpers/host';

let host: TestHost;

beforeAll(() => {
  host = new TestHost('version: 1\noperations: []\n');
});

afterAll(async () => {
  await host.cleanup();
});

describe('the home lock', () => {
  it('refuses a second daemon and names the first; a SIGKILLed holder frees it', async () => {
    const first = await host.startDaemon();
    const second = host.cli(['daemon']);
    expect(second.status).toBe(1);
    expect(second.stderr).toContain('another Dumbwaiter daemon already runs for this home');
    expect(second.stderr).toContain(`pid ${first.proc.pid}`);
    const st = JSON.parse(host.cli(['status', '--json']).stdout);
    expect(st.daemon).toMatchObject({ running: true, holder: { pid: first.proc.pid } });

    await first.kill9();
    expect(JSON.parse(host.cli(['status', '--json']).stdout).daemon.running).toBe(false);
    const third = await host.startDaemon();
    expect(third.proc.exitCode).toBeNull();
  });
});
