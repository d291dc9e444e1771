// One daemon per home: a second one is refused and told who holds the home; the lock dies with its holder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { TestHost } from '../helpers/host';
import { track } from '../helpers/processes';
import { acquireHomeLock } from '../../main/core/daemon/lock';

const lockFile = () => path.join(host.home, 'daemon.lock');

let host: TestHost;

beforeAll(() => {
  host = new TestHost();
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
    await third.stop();
  });
});

describe('status probes', () => {
  it('a daemon starting while another process probes the lock waits for the probe instead of giving up', async () => {
    // Another process holds the lock the way a status probe does, only longer (300 ms), as the start comes.
    const holder = track(
      spawn(
        process.execPath,
      ['-e', `const D=require('better-sqlite3');const db=new D(${JSON.stringify(lockFile())});db.pragma('locking_mode = EXCLUSIVE');db.exec('BEGIN EXCLUSIVE');setTimeout(()=>db.close(),300);console.log('held')`],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      ),
    );
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    const lock = acquireHomeLock(lockFile(), path.join(host.home, 'daemon.json'), 'test');
    lock.release();
  });
});
