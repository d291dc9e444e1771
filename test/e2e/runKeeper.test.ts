// The run keeper with the real daemon killed by SIGKILL mid-run (not the keeper): a chatty run goes on
// writing, its output whole in its log and its exit code recorded by the next daemon, whether it ends
// while that daemon runs or while no daemon does; with the keeper killed as well (the whole host
// crashed), the run is uncertain and reconciled as before.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { GO_ARG, NO_OPERATIONS, allowlistYaml } from '../helpers/allowlists';
import { alive, stopGroups, trackGroup } from '../helpers/processes';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;

/** Numbered lines, one every 5 ms, until the file named by its argument exists; then `last N`, exit 3. */
const CHATTY = ['/bin/sh', '-c', 'i=0; while [ ! -e "$0" ]; do i=$((i+1)); echo "line $i"; sleep 0.005; done; echo "last $i"; exit 3', '{go}'];

beforeEach(() => {
  host = new TestHost(NO_OPERATIONS);
  host.writeAllowlist(
    allowlistYaml(
      { name: 'chatty', command: CHATTY, args: GO_ARG },
      { name: 'checked', command: CHATTY, args: GO_ARG, reconcile: { command: ['true'] } },
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
  expect(n).toBeGreaterThan(40);
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
