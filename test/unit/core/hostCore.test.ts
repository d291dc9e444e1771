// One core per home and process: the daemon and the service of the desktop app share it, so what the
// service decides reaches the daemon directly (no wake file between two halves of one process), and
// each spool has one result publisher, the daemon's while it serves the spool.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HostCore } from '../../../main/core/hostCore';
import { Daemon } from '../../../main/core/daemon/daemon';
import { Host } from '../../../main/core/host/host';
import { UserError } from '../../../main/core/errors';
import { TestHost } from '../../helpers/host';
import { allowlistYaml } from '../../helpers/allowlists';

const GUARDED = allowlistYaml({ name: 'guarded', command: ['/bin/echo', 'approved'], approval: 'always' });

let host: TestHost | null = null;
afterEach(async () => {
  await host?.cleanup();
  host = null;
});

describe('HostCore', () => {
  it('refuses a folder that is no home, saying how to make one', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-nohome-'));
    try {
      expect(() => HostCore.open(dir)).toThrow(UserError);
      expect(() => HostCore.open(dir)).toThrow(/is not a Dumbwaiter home yet\. Run: dumbwaiter init --home/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("shared by the app's daemon and service: an approval reaches the daemon without the wake file, and the run's result is written once", async () => {
    host = new TestHost(GUARDED);
    const key = host.createKey();
    const core = HostCore.open(host.home);
    const daemon = await Daemon.start({ homeDir: host.home, core, consoleLog: false });
    const svc = new Host(core);
    try {
      host.submit(key, 'asks', 'guarded');
      await host.waitResult('asks', ['awaiting_approval']);
      const wake = path.join(host.home, 'wake');
      const wokenBefore = existsSync(wake) ? statSync(wake).mtimeMs : null;
      svc.verdicts.approve('asks', 'app');
      const r = await host.waitResult('asks');
      expect(r).toMatchObject({ state: 'succeeded', stdout: 'approved\n' });
      expect(existsSync(wake) ? statSync(wake).mtimeMs : null).toBe(wokenBefore);
      // The service's own publisher for the spool is the daemon's server: the result is in sync.
      expect(core.requests.isSynced(svc.requests.get('asks')!)).toBe(true);
    } finally {
      await daemon.stop();
      // The daemon leaves a core it was given open: the service still answers.
      expect(svc.requests.get('asks')?.state).toBe('succeeded');
      core.close();
    }
  });

  it('without a daemon in the process, a change is published at once and the wake file tells a daemon elsewhere', async () => {
    host = new TestHost(GUARDED);
    const key = host.createKey();
    // Recorded as waiting by a daemon that then stopped: the command line decides alone.
    const d = await host.startDaemon();
    host.submit(key, 'later', 'guarded');
    await host.waitResult('later', ['awaiting_approval']);
    await d.stop();
    const svc = new Host(host.home);
    try {
      svc.verdicts.deny('later', 'cli', 'not now');
      expect(host.result('later')?.state).toBe('denied');
      expect(existsSync(path.join(host.home, 'wake'))).toBe(true);
    } finally {
      svc.close();
    }
  });
});
