// Orphaned runs with the real host (daemon and run keeper) killed by SIGKILL mid-run: the restarted daemon finds the run's
// processes still running, shows it running and orphaned (result file, status), keeps its slot,
// refuses a verdict on it unless forced, ends it on a cancel (the human's or the agent's), and once it
// ends by itself reconciles it or leaves it uncertain; a clean stop ends it as it ends a run. Once its
// main process has exited, what it left is ended as a run's is; a forced verdict given before any
// daemon ended its processes is carried out by the next start; and a row recorded without its start
// time is never taken for a living run, whoever holds its pid now.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { GO_ARG, NO_OPERATIONS, allowlistYaml } from '../helpers/allowlists';
import { alive, groupRunning, stopGroups, track, trackGroup, UNREAD_NOTE } from '../helpers/processes';
import { acquireHomeLock } from '../../main/core/daemon/lock';
import { GatedRuns } from '../helpers/gatedRuns';
import { stallerCommand } from '../helpers/staller';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let gated: GatedRuns;

beforeEach(() => {
  host = new TestHost(NO_OPERATIONS);
  gated = new GatedRuns(host);
  const escape = 'setsid /bin/sh -c "echo \\$\\$ > \\"\\$0.pid\\"; while [ ! -e \\"\\$0\\" ]; do sleep 0.05; done" "$0" & wait';
  host.writeAllowlist(
    allowlistYaml(
      gated.spec('sleeper', { concurrency: 1 }),
      gated.spec('checked', { concurrency: 4, reconcile: { command: ['true'] } }),
      gated.spec('other', { concurrency: 4 }),
      { name: 'escaper', command: ['/bin/sh', '-c', escape, '{go}'], args: GO_ARG },
      { name: 'leaver', command: ['/bin/sh', '-c', 'sleep 300 & echo $! > "$0.child"; while [ ! -e "$0" ]; do sleep 0.05; done', '{go}'], args: GO_ARG, concurrency: 1 },
    ),
  );
  key = host.createKey('orphans', 'read');
});

afterEach(async () => {
  // By pid: the net's check of a process (helpers/processes.ts) would read its environment.
  for (const pid of stallers.splice(0)) process.kill(pid, 'SIGKILL');
  await host.cleanup();
  stopGroups();
});

const goFile = (id: string) => gated.goFile(id);

const staller = stallerCommand();
const canStall = 'argv' in staller;
const stallers: number[] = [];

/** A process that keeps its memory map busy, so that reading its environment waits (helpers/staller.ts). */
async function startStaller(): Promise<void> {
  const argv = (staller as { argv: string[] }).argv;
  const child = track(spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'], env: { PATH: process.env.PATH!, TMPDIR: process.env.TMPDIR! } }));
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  stallers.push(await eventually('the staller to start', () => (out.includes('\n') ? Number(out) : undefined)));
}
const runs = (id: string) => gated.runs(id);

/** Starts each request, kills the daemon with SIGKILL while they run, and starts another, which finds
 *  them still running. Returns their process groups and the new daemon. */
async function orphaned(reqs: [id: string, op: string][]): Promise<{ pids: number[]; daemon: DaemonProcess }> {
  const pids = await gated.startThenKill9(key, reqs);
  const daemon = await host.startDaemon();
  for (const [id] of reqs) await eventually(`${id} to be orphaned`, () => (host.result(id)?.orphaned ? true : undefined));
  return { pids, daemon };
}

interface Status {
  running: { id: string; orphaned: boolean; pid: number }[];
  uncertain: { id: string }[];
}
const status = () => JSON.parse(host.cli(['status', '--json']).stdout) as Status;

describe('a run whose processes outlive a SIGKILL of the daemon', () => {
  it('is shown running and orphaned, keeps its slot, cannot be resolved, and is ended by a cancel', async () => {
    const { pids: [pid] } = await orphaned([['orph-1', 'sleeper']]);
    expect(host.result('orph-1')).toMatchObject({ state: 'running', orphaned: true });
    expect(status().running).toEqual([expect.objectContaining({ id: 'orph-1', orphaned: true, pid })]);
    expect(host.cli(['status']).stdout).toContain('ORPHANED');
    expect(host.audit('orph-1', 'orphaned')[0]?.message).toContain(`process group ${pid}`);

    // It holds the one slot of its operation: a second request waits (the sentinel's pass has ended).
    writeFileSync(goFile('next'), '');
    host.submit(key, 'next', 'sleeper', { go: goFile('next') });
    expect((await host.sentinel(key)).state).toBe('succeeded');
    expect((await host.waitResult('next', ['queued'])).state).toBe('queued'); // shown once it has waited 50 ms

    const refused = host.cli(['resolve', 'orph-1', '--failed']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`is still running (process group ${pid}): cancel it`);
    expect(refused.stderr).toContain('--force');
    expect(groupRunning(pid!)).toBe(true);

    expect(host.cli(['cancel', 'orph-1']).status).toBe(0);
    const r = await host.waitResult('orph-1', ['cancelled', 'uncertain', 'succeeded', 'failed']);
    expect(r).toMatchObject({ state: 'cancelled', cancelled_by: expect.stringMatching(/^cli:/) });
    expect(r.orphaned).toBeUndefined();
    expect(groupRunning(pid!)).toBe(false);
    expect(existsSync(goFile('orph-1'))).toBe(false); // it was ended, not let go
    // Its slot is free again.
    expect((await host.waitResult('next')).state).toBe('succeeded');
    expect(runs('orph-1')).toBe(1);
  });

  it('takes a forced verdict while it runs, and the daemon then ends its processes', async () => {
    const { pids: [pid] } = await orphaned([['orph-force', 'sleeper']]);
    const forced = host.cli(['resolve', 'orph-force', '--succeeded', '--force', '--note', 'checked the deploy by hand']);
    expect(forced.status).toBe(0);
    expect(forced.stdout).toContain(`The host is ending its processes (process group ${pid})`);
    expect(await host.waitResult('orph-force', ['succeeded'])).toMatchObject({ resolved_by: 'human', note: 'checked the deploy by hand' });
    expect(host.result('orph-force')?.orphaned).toBeUndefined();
    await eventually('its processes to be ended', () => (groupRunning(pid!) ? undefined : true));
    await eventually('the end of its processes in the audit log', () => (host.audit('orph-force', 'orphan_ended')[0] ? true : undefined));
    expect(existsSync(goFile('orph-force'))).toBe(false);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('is reconciled once it ends by itself, or left uncertain without a reconcile command', async () => {
    await orphaned([
      ['orph-checked', 'checked'],
      ['orph-plain', 'other'],
    ]);
    writeFileSync(goFile('orph-checked'), '');
    writeFileSync(goFile('orph-plain'), '');
    // Uncertain first (a crash during the check leaves it so), then as its reconcile command says.
    expect(await host.waitResult('orph-checked', ['succeeded', 'failed'])).toMatchObject({
      state: 'succeeded',
      resolved_by: 'reconcile',
      reconcile: { verdict: 'applied', by: 'daemon (orphan ended)' },
    });
    const plain = await host.waitResult('orph-plain', ['succeeded', 'failed', 'uncertain']);
    expect(plain).toMatchObject({ state: 'uncertain', error: { code: 'interrupted' } });
    // "its main process ... ; <a note>" when ending what was left had something to say (under load, a
    // process started elsewhere meanwhile whose environment could not be read in time).
    expect(plain.error!.message).toMatch(/, and its (processes \(process group \d+\) outlived it and have|main process \(pid \d+\) outlived it and has) ended since/);
    expect(plain.orphaned).toBeUndefined();
    expect(host.cli(['resolve', 'orph-plain', '--failed']).status).toBe(0);
    expect(runs('orph-checked') + runs('orph-plain')).toBe(2);
  });

  it("is ended by the agent's dumbwaiter.cancel", async () => {
    const { pids: [pid] } = await orphaned([['orph-agent', 'sleeper']]);
    host.submit(key, 'cancel-orph', 'dumbwaiter.cancel', { target: 'orph-agent' });
    expect(await host.waitResult('cancel-orph')).toMatchObject({ state: 'succeeded', stdout: expect.stringContaining('orph-agent is running') });
    expect(await host.waitResult('orph-agent', ['cancelled', 'uncertain'])).toMatchObject({ state: 'cancelled', cancelled_by: `key ${key.key_id} (dumbwaiter.cancel)` });
    expect(groupRunning(pid!)).toBe(false);
  });

  it('is ended by a clean stop of the daemon and left uncertain, as a run is', async () => {
    const { pids: [pid], daemon } = await orphaned([['orph-stop', 'sleeper']]);
    const end = await daemon.stop();
    expect(end, `the daemon's stop ended so; its output:\n${daemon.stderr}`).toEqual({ code: 0, signal: null });
    expect(groupRunning(pid!)).toBe(false);
    expect(host.result('orph-stop')).toMatchObject({ state: 'uncertain', error: { code: 'interrupted' } });
    expect(host.result('orph-stop')?.error?.message).toContain('terminated because the host was stopping');
  });

  /** Starts an escaper run (one process leaves its group with setsid), kills the daemon with SIGKILL. */
  async function escaperLeft(id: string): Promise<{ main: number; escaped: number }> {
    const d1 = await host.startDaemon();
    host.submit(key, id, 'escaper', { go: goFile(id) });
    const main = trackGroup(await host.runPid(id));
    const escaped = await eventually('the escaped pid', () => {
      const text = existsSync(`${goFile(id)}.pid`) ? readFileSync(`${goFile(id)}.pid`, 'utf8') : '';
      return /^\d+\n$/.test(text) ? trackGroup(Number(text)) : undefined;
    });
    await host.crash(d1);
    return { main, escaped };
  }

  it('is found by its marker after a process left its process group, and a cancel ends that one too', async () => {
    const { main, escaped } = await escaperLeft('orph-setsid');
    await host.startDaemon();
    await eventually('it to be orphaned', () => (host.result('orph-setsid')?.orphaned ? true : undefined));
    expect(host.cli(['cancel', 'orph-setsid']).status).toBe(0);
    expect(await host.waitResult('orph-setsid', ['cancelled', 'uncertain'])).toMatchObject({ state: 'cancelled' });
    expect(groupRunning(main)).toBe(false);
    expect(groupRunning(escaped)).toBe(false);
  });

  it('is not adopted once its main process has exited: what it left (found by its marker outside its group) is ended at start', async () => {
    const { main, escaped } = await escaperLeft('orph-left');
    // Only the process that left the group is left: its group is gone, its marker is all there is.
    process.kill(main, 'SIGKILL');
    await eventually('the main process to end', () => (groupRunning(main) ? undefined : true));
    expect(groupRunning(escaped)).toBe(true);
    await host.startDaemon();
    const r = await host.waitResult('orph-left', ['uncertain', 'cancelled', 'succeeded', 'failed']);
    expect(r).toMatchObject({ state: 'uncertain', error: { code: 'interrupted' } });
    // The escaped shell, and its sleep when it is caught between two.
    expect(r.error!.message).toMatch(/; its main process had ended, and \d+ process(es)? left behind by the run (was|were) ended;/);
    expect(host.audit('orph-left', 'orphaned')).toHaveLength(0);
    expect(groupRunning(escaped)).toBe(false);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it.runIf(canStall)('serves at once after the restart while it looks for what an ended run left (processes slow to read hold that look up), the run\'s slot held', async () => {
    const [pid] = await gated.startThenKill9(key, [['orph-slow', 'sleeper']]);
    writeFileSync(goFile('orph-slow'), '');
    await eventually('the run to end', () => (groupRunning(pid!) ? undefined : true));
    // Processes started since the run, whose environments each take a deadline (a second) to give up
    // on: the look for what the run left waits on them, on a busy machine as here.
    await Promise.all([startStaller(), startStaller()]);
    await host.startDaemon();
    // Served before that look ends (it did not, before: the start waited for it, seconds on end).
    expect((await host.sentinel(key)).state).toBe('succeeded');
    expect(host.service((s) => s.requests.get('orph-slow'))?.state).toBe('running');
    // The look ends, and the run is uncertain; its slot was held until then (concurrency 1).
    host.submit(key, 'orph-next', 'sleeper', { go: goFile('orph-next') });
    expect(await host.waitResult('orph-slow', ['uncertain'])).toMatchObject({ error: { code: 'interrupted' } });
    writeFileSync(goFile('orph-next'), '');
    expect((await host.waitResult('orph-next')).state).toBe('succeeded');
    expect(runs('orph-slow')).toBe(1);
  });

  it('once its main process exits while watched, has what it left ended and frees its slot, as a run does', async () => {
    const d1 = await host.startDaemon();
    host.submit(key, 'orph-leaver', 'leaver', { go: goFile('orph-leaver') });
    const pid = trackGroup(await host.runPid('orph-leaver'));
    const child = await eventually('the child pid', () => {
      const text = existsSync(`${goFile('orph-leaver')}.child`) ? readFileSync(`${goFile('orph-leaver')}.child`, 'utf8') : '';
      return /^\d+\n$/.test(text) ? Number(text) : undefined;
    });
    await host.crash(d1);
    await host.startDaemon();
    await eventually('it to be orphaned', () => (host.result('orph-leaver')?.orphaned ? true : undefined));
    // Another run of its operation (concurrency 1) waits for the slot.
    writeFileSync(goFile('after-leaver'), '');
    host.submit(key, 'after-leaver', 'leaver', { go: goFile('after-leaver') });
    expect((await host.sentinel(key)).state).toBe('succeeded');
    expect((await host.waitResult('after-leaver', ['queued'])).state).toBe('queued');

    writeFileSync(goFile('orph-leaver'), ''); // its main process exits; its child would run on
    const r = await host.waitResult('orph-leaver', ['uncertain', 'cancelled', 'succeeded', 'failed']);
    expect(r).toMatchObject({ state: 'uncertain', error: { code: 'interrupted' } });
    expect(r.error!.message).toContain(`its main process (pid ${pid}) outlived it and has ended since; 1 process left behind by the run was ended`);
    expect(alive(child)).toBe(false);
    expect(groupRunning(pid)).toBe(false);
    expect((await host.waitResult('after-leaver')).state).toBe('succeeded');
  });

  it('has its processes ended by the next start after a forced verdict given before a daemon adopted it (a daemon starting)', async () => {
    const { pids: [pid], daemon } = await orphaned([['orph-race', 'sleeper']]);
    await host.crash(daemon);
    expect(host.service((s) => s.requests.get('orph-race')?.orphaned)).toBe(1);
    // A new daemon has taken the lock and not yet adopted the run: the verdict is accepted then.
    const starting = acquireHomeLock(path.join(host.home, 'daemon.lock'), path.join(host.home, 'daemon.json'), 'a daemon starting');
    let forced;
    try {
      forced = host.cli(['resolve', 'orph-race', '--succeeded', '--force', '--note', 'seen by hand']);
    } finally {
      starting.release();
    }
    expect(forced.status).toBe(0);
    expect(host.result('orph-race')).toMatchObject({ state: 'succeeded', resolved_by: 'human' });
    expect(groupRunning(pid!)).toBe(true);

    await host.startDaemon();
    const ended = await eventually('the end of its processes in the audit log', () => host.audit('orph-race', 'orphan_ended')[0]);
    expect(ended.message).toMatch(new RegExp(`^orphaned run resolved as succeeded by a human while it ran: its processes were ended at the host's start \\(\\d+ process(es)? left behind by the run (was|were) ended${UNREAD_NOTE}\\)$`));
    expect(groupRunning(pid!)).toBe(false);
    expect(existsSync(goFile('orph-race'))).toBe(false); // ended, not let go
    expect(host.service((s) => s.requests.get('orph-race'))).toMatchObject({ state: 'succeeded', orphaned: 0 });
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it("is never adopted from a row without its start time (an earlier version's), whose pid now holds another program", async () => {
    const d1 = await host.startDaemon();
    host.submit(key, 'old-run', 'sleeper', { go: goFile('old-run') });
    const runPid = trackGroup(await host.runPid('old-run'));
    await host.crash(d1);
    // A reboot, say: the run is gone and its pid went to another program, in a process group of its own.
    process.kill(-runPid, 'SIGKILL');
    await eventually('the run to end', () => (groupRunning(runPid) ? undefined : true));
    const victim = trackGroup(track(spawn('/bin/sleep', ['300'], { detached: true, stdio: 'ignore' })).pid!);
    // The row as the previous version left it: a pid, no marker, no start time.
    host.ledger((l) => l.requests.setProcesses('old-run', victim, null, null));
    await host.startDaemon();
    const r = await host.waitResult('old-run', ['uncertain', 'cancelled', 'succeeded', 'failed']);
    expect(r).toMatchObject({ state: 'uncertain', error: { code: 'interrupted' } });
    expect(r.orphaned).toBeUndefined();
    // The agent cancels its request: nothing runs to end, and the other program lives.
    host.submit(key, 'cancel-old', 'dumbwaiter.cancel', { target: 'old-run' });
    await host.waitResult('cancel-old');
    expect(host.result('old-run')?.state).toBe('uncertain');
    expect(alive(victim)).toBe(true);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('refuses a verdict on a run of the live daemon, and on one while no daemon watches it', async () => {
    const d1 = await host.startDaemon();
    host.submit(key, 'orph-down', 'sleeper', { go: goFile('orph-down') });
    await host.waitResult('orph-down', ['running']);
    trackGroup(await host.runPid('orph-down'));
    // A run of the live daemon is no orphan: no verdict, forced or not.
    const live = host.cli(['resolve', 'orph-down', '--failed', '--force']);
    expect(live.status).toBe(1);
    expect(live.stderr).toContain('is running, not uncertain: nothing to resolve (to end it: dumbwaiter cancel orph-down)');
    await host.crash(d1);
    const refused = host.cli(['resolve', 'orph-down', '--failed', '--force']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('no host runs now: start it');
    expect(host.service((s) => s.requests.get('orph-down')?.state)).toBe('running');
  });
});
