// The daemon's clean stop on a signal holds where it used to fall apart and leave its runs behind: after
// its terminal or pipe went away (`dumbwaiter daemon | tee log` with tee killed, a parent that died: it
// died at its next log line, EPIPE), and on a second signal while it stops (the default action ended
// it; now the second signal ends the running work's grace period instead).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { CLI, TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { allowlistYaml } from '../helpers/allowlists';
import { alive, stopGroups, track, trackGroup } from '../helpers/processes';

let host: TestHost;

beforeAll(() => {
  host = new TestHost(allowlistYaml({ name: 'long', command: ['sleep', '300'] }));
});

afterAll(async () => {
  stopGroups(); // the first test's daemon is not this process's child: it goes with its parent's group
  await host.cleanup();
});

describe('a daemon that lost its terminal', () => {
  it('stops cleanly on SIGINT: its run is ended and recorded, nothing is left running', async () => {
    // A parent holding the daemon's stdout and stderr, as a terminal or `| tee` does; then it dies. In a
    // process group of its own, which the daemon joins: tracked as one.
    const parent = track(
      spawn(
        process.execPath,
        [
          '-e',
          `const c = require('node:child_process').spawn(process.execPath, process.argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
           c.stderr.on('data', (d) => { if (String(d).includes('daemon running')) console.log(c.pid); });`,
          CLI, 'daemon', '--home', host.home, '--spool', host.spool,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'], detached: true },
      ),
    );
    trackGroup(parent.pid!);
    let out = '';
    parent.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    const daemonPid = await eventually('the daemon to run', () => (/^\d+\n/.test(out) ? Number(out) : undefined), 30_000);

    host.submit(host.createKey(), 'long-1', 'long');
    await host.waitResult('long-1', ['running']);
    const runPid = trackGroup(await host.runPid('long-1'));

    parent.kill('SIGKILL');
    await new Promise((r) => parent.once('exit', r));
    process.kill(daemonPid, 'SIGINT');

    await eventually('the daemon to stop', () => (alive(daemonPid) ? undefined : true), 30_000);
    expect(alive(runPid)).toBe(false);
    expect((await host.waitResult('long-1')).state).toBe('uncertain'); // cut short by the stop, said so
    expect(host.audit('', 'daemon_stopped')).toHaveLength(1);
  });
});

describe('a daemon signalled twice', () => {
  it('ends the running work now instead of at the end of its grace, records it, and exits 0', async () => {
    // A grace far longer than the test may take: only the second signal can end the stop in time.
    expect(host.cli(['config', 'set', 'shutdown_grace_s', '600']).status).toBe(0);
    const d: DaemonProcess = await host.startDaemon();
    host.submit(host.createKey('twice'), 'long-2', 'long');
    await host.waitResult('long-2', ['running']);
    const runPid = trackGroup(await host.runPid('long-2'));

    d.proc.kill('SIGTERM');
    await eventually('the stop to begin', () => (d.stderr.includes('SIGTERM: stopping') ? true : undefined));
    d.proc.kill('SIGINT');
    await eventually('the second signal to be heard', () => (d.stderr.includes('SIGINT: ending running work now') ? true : undefined));
    expect(await d.exited).toEqual({ code: 0, signal: null });
    expect(alive(runPid)).toBe(false);
    expect((await host.waitResult('long-2')).state).toBe('uncertain');
  });
});
