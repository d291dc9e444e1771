// Watching a run that outlived its host, with real processes and a real ledger: found by what was
// recorded when it started, or not at all once it is gone; its end by itself noticed; ended on
// terminate (a cancel, a stop) and once its request was given a verdict; for an operation that leaves
// processes running, its main process is the run.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Orphan, type OrphanWatch } from '../../../../main/core/daemon/orphans';
import { procStat } from '../../../../main/core/exec/procfs';
import { scopedLogger } from '../../../../main/core/log';
import type { RunPlan } from '../../../../main/core/allowlist/plan';
import { TestLedger } from '../../../helpers/ledger';
import { eventually } from '../../../helpers/host';
import { alive, groupRunning, stopGroups, track, trackGroup } from '../../../helpers/processes';

const MARKER = 'c'.repeat(32);

let l: TestLedger;
let dir: string;
beforeEach(() => {
  l = new TestLedger();
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-orphan-'));
});
afterEach(() => {
  stopGroups();
  l.close();
  rmSync(dir, { recursive: true, force: true });
});

const plan = (leaves = false): RunPlan => ({ op: 'deploy', argv: ['/bin/sh'], cwd: dir, env: {}, timeout_s: 60, max_output_bytes: 1024, concurrency: 1, cost: 0, scope: 'read', approval: 'never', leaves_processes: leaves });

/** A stand-in for a run a killed host left: a detached shell with the marker, running `script`, and
 *  its request recorded as running with what the runner records at its start. */
function runLeft(id: string, script: string, leaves = false): number {
  const child = track(spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, TMPDIR: process.env.TMPDIR, DUMBWAITER_RUN_MARKER: MARKER } }));
  const pid = trackGroup(child.pid!);
  l.add(id, { state: 'running', plan: plan(leaves) });
  l.requests.setProcesses(id, pid, MARKER, procStat(pid)!.started);
  return pid;
}

const watch = (id: string): OrphanWatch => ({ killGraceMs: 200, stillRunning: () => l.requests.get(id)?.state === 'running', log: scopedLogger('test') });
const find = (id: string) => Orphan.find(l.requests.get(id)!, watch(id));
const go = (name = 'go') => path.join(dir, name);

describe.runIf(process.platform === 'linux')('Orphan', () => {
  it('is not found once the processes of the run are gone', async () => {
    const pid = runLeft('r1', 'exit 0');
    await eventually('the run to end', () => (groupRunning(pid) ? undefined : true));
    expect(await find('r1')).toBeNull();
  });

  it('is not found for a run cut before its process existed (no pid)', async () => {
    l.add('r0', { state: 'running', plan: plan() });
    expect(await find('r0')).toBeNull();
  });

  it('is watched while it runs and ends by itself', async () => {
    runLeft('r2', `while [ ! -e "${go()}" ]; do sleep 0.05; done`);
    const o = await find('r2');
    expect(o).not.toBeNull();
    writeFileSync(go(), '');
    expect(await o!.done).toEqual({ by: 'itself' });
  });

  it('is found by its marker when only a process that left its group is left', async () => {
    const pidFile = path.join(dir, 'escaped');
    const pid = runLeft('r3', `setsid sh -c 'echo $$ > "$0"; exec sleep 300' "${pidFile}" >/dev/null 2>&1 & while [ ! -s "${pidFile}" ]; do sleep 0.01; done`);
    await eventually('the main process to end', () => (groupRunning(pid) ? undefined : true));
    const escaped = trackGroup(Number(readFileSync(pidFile, 'utf8')));
    const o = await find('r3');
    expect(o).not.toBeNull();
    o!.terminate('cancel');
    expect(await o!.done).toEqual({ by: 'terminate', reason: 'cancel', note: '1 process left behind by the run was ended' });
    expect(alive(escaped)).toBe(false);
  });

  it('ends its processes on terminate, KILL after the grace period for one that ignores TERM', async () => {
    const pid = runLeft('r4', `trap "" TERM; while :; do sleep 300 & wait; done`);
    const o = await find('r4');
    o!.terminate('shutdown');
    const end = await o!.done;
    expect(end).toMatchObject({ by: 'terminate', reason: 'shutdown' });
    expect(groupRunning(pid)).toBe(false);
  });

  it('ends its processes once its request is no longer running (a forced verdict)', async () => {
    const pid = runLeft('r5', 'exec sleep 300');
    const o = await find('r5');
    l.lifecycle.move(l.requests.get('r5')!, 'failed', { resolved_by: 'human' }, null);
    expect(await o!.done).toMatchObject({ by: 'terminate', reason: 'resolved' });
    expect(groupRunning(pid)).toBe(false);
  });

  it('of an operation that leaves processes running, is its main process: it ends when that ends', async () => {
    const child = path.join(dir, 'service');
    runLeft('r6', `sleep 300 & echo $! > "${child}"; while [ ! -e "${go()}" ]; do sleep 0.05; done`, true);
    const service = await eventually('the service to start', () => (existsSync(child) && readFileSync(child, 'utf8').endsWith('\n') ? Number(readFileSync(child, 'utf8')) : undefined));
    const o = await find('r6');
    expect(o).not.toBeNull();
    writeFileSync(go(), '');
    expect(await o!.done).toEqual({ by: 'itself' });
    expect(alive(service)).toBe(true); // left running on purpose, as the operation says
  });
});
