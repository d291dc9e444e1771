// The run keeper with the real daemon killed by SIGKILL mid-run (not the keeper): a chatty run goes on
// writing, its output whole in its log and its exit code recorded by the next daemon, whether it ends
// while that daemon runs or while no daemon does; with the keeper killed as well (the whole host
// crashed), the run is uncertain and reconciled as before. A keeper killed while its daemon lives: the
// daemon watches the run as a restarted host watches an orphan, and starts the next run in a new keeper.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { GO_ARG, NO_OPERATIONS, allowlistYaml } from '../helpers/allowlists';
import { alive, groupRunning, stopGroups, trackGroup } from '../helpers/processes';
import { GatedRuns } from '../helpers/gatedRuns';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let gated: GatedRuns;

/** Numbered lines, one every 5 ms, until the file named by its argument exists; then `last N`, exit 3. */
const CHATTY = ['/bin/sh', '-c', 'i=0; while [ ! -e "$0" ]; do i=$((i+1)); echo "line $i"; sleep 0.005; done; echo "last $i"; exit 3', '{go}'];

beforeEach(() => {
  host = new TestHost(NO_OPERATIONS);
  gated = new GatedRuns(host);
  host.writeAllowlist(
    allowlistYaml(
      { name: 'chatty', command: CHATTY, args: GO_ARG },
      { name: 'checked', command: CHATTY, args: GO_ARG, reconcile: { command: ['true'] } },
      gated.spec('sleeper', { concurrency: 1 }),
      { name: 'echo', command: ['/bin/echo', '{word}'], args: { word: { type: 'string', max_length: 50 } } },
    ),
  );
  key = host.createKey('keeper', 'read');
});

afterEach(async () => {
  await host.cleanup();
  stopGroups();
});

const go = (id: string) => path.join(host.root, `go-${id}`);
const lines = (id: string) => (existsSync(path.join(host.spool, 'results', `${id}.log`)) ? host.logOf(id).split('\n').length - 1 : 0);

/** Starts `id` (of `op`), lets it write a while, and kills the daemon (and the keeper, if `keeperToo`). */
async function killedMidRun(id: string, op: string, keeperToo = false): Promise<number> {
  const d = await host.startDaemon();
  host.submit(key, id, op, { go: go(id) });
  const pid = trackGroup(await host.runPid(id));
  await eventually(`${id} to write`, () => (lines(id) >= 20 ? true : undefined));
  if (keeperToo) await host.crash(d);
  else await d.kill9();
  return pid;
}

/** The log of a CHATTY run that ended: every line once, in order, then its last. */
function expectWhole(id: string): void {
  const all = host.logOf(id).trimEnd().split('\n');
  const n = Number(all.at(-1)!.replace('last ', ''));
  expect(n).toBeGreaterThanOrEqual(20);
  expect(all).toEqual([...Array.from({ length: n }, (_, i) => `line ${i + 1}`), `last ${n}`]);
}

describe('a chatty run when the daemon is killed', () => {
  it('goes on writing, and the next daemon follows it and records its exit code, its output whole', async () => {
    await killedMidRun('talk-1', 'chatty');
    const at = lines('talk-1');
    await eventually('output written with no daemon', () => (lines('talk-1') >= at + 20 ? true : undefined));
    await host.startDaemon();
    writeFileSync(go('talk-1'), '');
    const r = await host.waitResult('talk-1', ['failed']);
    expect(r).toMatchObject({ exit_code: 3, error: null });
    expectWhole('talk-1');
    expect(r.log_bytes).toBe(readFileSync(path.join(host.spool, 'results', 'talk-1.log')).length);
    expect(r.stdout).toMatch(/last \d+\n$/);
    expect(host.audit('talk-1', 'started')).toHaveLength(1);
    expect(host.audit('talk-1', 'orphaned')).toHaveLength(0);
  });

  it('is recorded as it ended when it ends while no daemon runs, and the keeper exits', async () => {
    await killedMidRun('talk-2', 'chatty');
    const keeper = host.keeperPid()!;
    writeFileSync(go('talk-2'), '');
    await host.runGone('talk-2');
    // With no daemon and no run left, it writes the end down and goes.
    await eventually('the keeper to exit', () => (alive(keeper) ? undefined : true));
    expect(host.result('talk-2')?.state).toBe('running');
    await host.startDaemon();
    const r = await host.waitResult('talk-2', ['failed']);
    expect(r).toMatchObject({ exit_code: 3, error: null });
    expectWhole('talk-2');
    expect(r.log_sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('a chatty run when the daemon and its keeper are killed', () => {
  it('is uncertain, and its reconcile check settles it as before', async () => {
    await killedMidRun('talk-3', 'checked', true);
    await host.runGone('talk-3'); // its next write found no reader
    await host.startDaemon();
    const r = await host.waitResult('talk-3', ['succeeded']);
    expect(r).toMatchObject({ resolved_by: 'reconcile' });
    expect(host.audit('talk-3', 'uncertain').length).toBeGreaterThan(0);
  });
});

/** The pid of the home's run keeper, once one runs. */
const keeperOf = () => eventually('the run keeper', () => host.keeperPid() ?? undefined);

describe.runIf(process.platform === 'linux')('the run keeper', () => {
  it('holding no run, exits when its daemon is killed', async () => {
    const d = await host.startDaemon();
    const keeper = await keeperOf();
    await d.kill9();
    await eventually('the keeper to exit', () => (alive(keeper) ? undefined : true));
  });

  it('killed during a run (the daemon lives): the run is watched as an orphan, ends uncertain, is never re-run, and the next run starts', async () => {
    const d = await host.startDaemon();
    const first = await keeperOf();
    host.submit(key, 'lost-1', 'sleeper', { go: gated.goFile('lost-1') });
    await host.waitResult('lost-1', ['running']);
    const pid = trackGroup(await host.runPid('lost-1'));
    await eventually('lost-1 to have started', () => (gated.runs('lost-1') === 1 ? true : undefined));

    process.kill(first, 'SIGKILL');
    await eventually('lost-1 to be orphaned', () => (host.result('lost-1')?.orphaned ? true : undefined));
    expect(host.result('lost-1')?.state).toBe('running');
    expect(host.audit('lost-1', 'orphaned')[0]?.message).toContain(`the host's run keeper) ended while it ran, and its processes (process group ${pid}) still run`);
    expect(groupRunning(pid)).toBe(true);

    // Its slot is held: another run of its operation waits; another operation's run starts, in a new keeper.
    writeFileSync(gated.goFile('next'), '');
    host.submit(key, 'next', 'sleeper', { go: gated.goFile('next') });
    host.submit(key, 'echo-1', 'echo', { word: 'again' });
    expect(await host.waitResult('echo-1')).toMatchObject({ state: 'succeeded', stdout: 'again\n' });
    expect((await host.waitResult('next', ['queued'])).state).toBe('queued'); // shown once it has waited 50 ms
    const second = await keeperOf();
    expect(second).not.toBe(first);

    writeFileSync(gated.goFile('lost-1'), '');
    const r = await host.waitResult('lost-1', ['uncertain', 'succeeded', 'failed']);
    expect(r).toMatchObject({ state: 'uncertain', error: { code: 'interrupted' } });
    // "its main process ... ; <a note>" when ending what was left had something to say: under load, a
    // process started elsewhere meanwhile whose environment could not be read in time is named.
    expect(r.error!.message).toMatch(new RegExp(`the host's run keeper\\) ended while it ran, and its (processes \\(process group ${pid}\\) outlived it and have|main process \\(pid ${pid}\\) outlived it and has) ended since`));
    expect(r.error!.message).toContain('will not be re-run');
    expect((await host.waitResult('next')).state).toBe('succeeded');
    expect(gated.runs('lost-1')).toBe(1);
    expect(alive(d.proc.pid!)).toBe(true);
  });
});
