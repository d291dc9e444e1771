// Changes made by the command line reach the real daemon by <home>/wake, not by polling: with a rescan
// interval of a minute (the tick is the only other way the daemon looks at the ledger), an approve, a
// cancel and a pause take effect while the test waits for them. And where the wake cannot be written,
// the command still succeeds without blocking and the daemon finds the change at its next tick.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { GATED_OP, eventually, runningHost, type DaemonProcess, type TestHost } from '../helpers/host';
import { GUARDED, QUICK, allowlistYaml } from '../helpers/allowlists';
import type { HostStatusDoc, KeyFile } from '../../shared/protocol/types';

const ALLOWLIST = allowlistYaml(GATED_OP, GUARDED, QUICK);

let host: TestHost;
let key: KeyFile;
let running: DaemonProcess;
const daemon = () => running;
const catalogOps = () => (JSON.parse(readFileSync(path.join(host.spool, 'catalog.json'), 'utf8')) as { operations: { name: string }[] }).operations.map((o) => o.name);

async function setup(settings: Record<string, unknown>): Promise<void> {
  ({ host, key, daemon: running } = await runningHost(ALLOWLIST, { name: 'waker', scope: 'read' }, settings));
}

afterEach(async () => {
  await host.cleanup();
});

function mkfifo(p: string): void {
  const r = spawnSync('mkfifo', [p]);
  if (r.status !== 0) throw new Error(`mkfifo ${p}: ${r.stderr}`);
}

function cli(...args: string[]): void {
  const r = host.cli(args);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
}

describe('changes made elsewhere wake the daemon', () => {
  it('with a rescan interval of a minute, the command line approve, cancel, pause and resume reach the daemon at once', async () => {
    await setup({ rescan_interval_ms: 60_000 });

    host.submit(key, 'wk-ask', 'guarded');
    await host.waitResult('wk-ask', ['awaiting_approval']);
    cli('approvals', 'approve', 'wk-ask');
    expect((await host.waitResult('wk-ask')).state).toBe('succeeded');

    const go = path.join(host.root, 'never');
    host.submit(key, 'wk-run', 'gated', { go });
    await host.waitResult('wk-run', ['running']);
    await host.runPid('wk-run');
    cli('cancel', 'wk-run');
    expect((await host.waitResult('wk-run')).state).toBe('cancelled');

    cli('pause');
    host.submit(key, 'wk-held', 'quick');
    expect((await host.waitResult('wk-held', ['queued'])).state).toBe('queued');
    cli('resume');
    expect((await host.waitResult('wk-held')).state).toBe('succeeded');

    host.submit(key, 'wk-after', 'quick');
    expect((await host.waitResult('wk-after')).state).toBe('succeeded');
  });

  it.each([
    ['a folder', (p: string) => mkdirSync(p)],
    ['a FIFO', mkfifo],
  ])('where the wake cannot be written (%s in its place), the command still succeeds without blocking and the daemon finds the change at its next tick', async (_what, plant) => {
    await setup({ rescan_interval_ms: 300 });
    const wake = path.join(host.home, 'wake');
    rmSync(wake, { force: true });
    plant(wake);
    host.submit(key, 'wk-nowake', 'guarded');
    await host.waitResult('wk-nowake', ['awaiting_approval']);
    cli('approvals', 'approve', 'wk-nowake');
    expect((await host.waitResult('wk-nowake')).state).toBe('succeeded');
    expect((await host.sentinel(key, 'quick')).state).toBe('succeeded');
  });

  it('between its ticks the daemon does not look at the ledger: with no wake, a pause made elsewhere is not in its heartbeats until the wake works again', async () => {
    await setup({ rescan_interval_ms: 60_000 });
    const wake = path.join(host.home, 'wake');
    rmSync(wake, { force: true });
    mkdirSync(wake);
    cli('pause');
    const after = new Date().toISOString();
    // host.json says what the daemon believes; it is rewritten every 5 s.
    const beat = await eventually('a heartbeat written after the pause', () => {
      const doc = hostJson();
      return doc && doc.heartbeat_at > after ? doc : undefined;
    });
    expect(beat.paused).toBe(false);
    expect((await host.sentinel(key)).state).toBe('succeeded');
    rmSync(wake, { recursive: true });
    cli('resume');
    cli('pause');
    await eventually('host.json to say paused', () => (hostJson()?.paused ? true : undefined));
  });

  it('with a rescan interval of a minute, an allowlist edit in place right after an atomic replace is served (the watch is on the home folder, not on the file replaced)', async () => {
    await setup({ rescan_interval_ms: 60_000 });
    host.writeAllowlist(ALLOWLIST.replace('name: quick', 'name: quick2'));
    await eventually('the replaced file served', () => (catalogOps().includes('quick2') ? true : undefined));
    writeFileSync(path.join(host.home, 'allowlist.yaml'), ALLOWLIST.replace('name: quick', 'name: quick3')); // in place
    await eventually('the edit in place served', () => (catalogOps().includes('quick3') ? true : undefined));
  });

  it('reads settings.json written in place in two steps once it is whole: never reported invalid', async () => {
    await setup({ rescan_interval_ms: 60_000 });
    const file = path.join(host.home, 'settings.json');
    const next = JSON.stringify({ ...(JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>), max_request_age_s: 1234 }, null, 2);
    const reloads = () => daemon().stderr.split('settings reloaded').length;
    const before = reloads();
    const fd = openSync(file, 'w');
    writeSync(fd, next.slice(0, next.length / 2));
    await eventually('the daemon to read it', () =>
      // (Before, it refused it: said in its log; the service cannot be asked, it reads the file too.)
      daemon().stderr.includes('does not read whole yet') || daemon().stderr.includes('keeping the current settings') ? true : undefined,
    );
    writeSync(fd, next.slice(next.length / 2));
    closeSync(fd);
    await eventually('the settings reloaded', () => (reloads() > before ? true : undefined));
    expect(host.audit('', 'settings_invalid')).toEqual([]);
  });
});

function hostJson(): HostStatusDoc | undefined {
  try {
    return JSON.parse(readFileSync(path.join(host.spool, 'host.json'), 'utf8')) as HostStatusDoc;
  } catch {
    return undefined;
  }
}
