// Watching a run that outlived its host, with real processes and a real ledger: found by what was
// recorded when it started, or not at all once it is gone or was recorded without its start time; its
// main process watched, and what it left ended once that ends, as for a run of the host; ended on
// terminate (a cancel, a stop) and once its request was given a verdict; for an operation that leaves
// processes running, its main process is the run.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Orphan, type OrphanWatch } from '../../../../main/core/daemon/orphans';
import { procStat } from '../../../../main/core/exec/procfs';
import { scopedLogger } from '../../../../main/core/log';
import type { RunPlan } from '../../../../main/core/allowlist/plan';
import { TestLedger } from '../../../helpers/ledger';
import { eventually } from '../../../helpers/host';
import { alive, groupRunning, leftoversNote, stopGroups, track, trackGroup } from '../../../helpers/processes';

/** Random: other test files (and other runs of the suite) search for markers of their own. */
const MARKER = randomBytes(16).toString('hex');

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
/** The watched orphan that find() must have returned. */
function orphanOf(id: string): Orphan {
  const found = find(id);
  if (found === null || !('orphan' in found)) throw new Error(`${id}: not watched (${JSON.stringify(found)})`);
  return found.orphan;
}
const go = (name = 'go') => path.join(dir, name);

describe.runIf(process.platform === 'linux')('Orphan', () => {
  it('has nothing left to end once the processes of the run are gone (told by its leftovers, looked for meanwhile)', async () => {
    const pid = runLeft('r1', 'exit 0');
    await eventually('the run to end', () => (groupRunning(pid) ? undefined : true));
    const found = find('r1');
    expect(found).toEqual({ leftovers: expect.any(Promise) });
    expect(await (found as { leftovers: Promise<string | null> }).leftovers).toBeNull();
  });

  it('is not found for a run cut before its process existed (no pid)', async () => {
    l.add('r0', { state: 'running', plan: plan() });
    expect(find('r0')).toBeNull();
  });

  it('is watched while it runs and ends by itself', async () => {
    runLeft('r2', `while [ ! -e "${go()}" ]; do sleep 0.05; done`);
    const o = orphanOf('r2');
    writeFileSync(go(), '');
    expect(await o.done).toEqual({ by: 'itself', note: null });
  });

  it('is not watched when its main process has exited: what it left, found by its marker outside its group, is ended', async () => {
    const pidFile = path.join(dir, 'escaped');
    const pid = runLeft('r3', `setsid sh -c 'echo $$ > "$0"; exec sleep 300' "${pidFile}" >/dev/null 2>&1 & while [ ! -s "${pidFile}" ]; do sleep 0.01; done`);
    await eventually('the main process to end', () => (groupRunning(pid) ? undefined : true));
    const escaped = trackGroup(Number(readFileSync(pidFile, 'utf8')));
    const found = find('r3');
    expect(found).toEqual({ leftovers: expect.any(Promise) });
    expect(await (found as { leftovers: Promise<string | null> }).leftovers).toMatch(leftoversNote('1 process left behind by the run was ended'));
    expect(alive(escaped)).toBe(false);
  });

  it('ends what its main process left once that exits while watched, and says so', async () => {
    const childFile = path.join(dir, 'child');
    runLeft('r3b', `sleep 300 & echo $! > "${childFile}"; while [ ! -e "${go()}" ]; do sleep 0.05; done`);
    const child = await eventually('the child to start', () => (existsSync(childFile) && readFileSync(childFile, 'utf8').endsWith('\n') ? Number(readFileSync(childFile, 'utf8')) : undefined));
    const o = orphanOf('r3b');
    writeFileSync(go(), '');
    expect(await o.done).toEqual({ by: 'itself', note: expect.stringMatching(leftoversNote('1 process left behind by the run was ended')) });
    expect(alive(child)).toBe(false);
  });

  it("is not looked for when its row has no start time (an earlier version's), whoever holds its pid now", async () => {
    // Another program's process group, in the pid the old row names.
    const victim = trackGroup(track(spawn('/bin/sleep', ['300'], { detached: true, stdio: 'ignore' })).pid!);
    l.add('r-old', { state: 'running', plan: plan() });
    l.requests.setProcesses('r-old', victim, null, null);
    expect(find('r-old')).toBeNull();
    l.requests.setProcesses('r-old', victim, MARKER, null);
    expect(find('r-old')).toBeNull();
    // Nor does the ending of what is left after a verdict.
    expect(await Orphan.endRemains(l.requests.get('r-old')!, watch('r-old'))).toContain('could not be looked for');
    expect(alive(victim)).toBe(true);
  });

  it('ends what is left of a run given a verdict while it ran (endRemains), and nothing of a pid now held by another program', async () => {
    const pid = runLeft('r-verdict', 'exec sleep 300');
    l.lifecycle.move(l.requests.get('r-verdict')!, 'succeeded', { resolved_by: 'human' }, { kind: 'resolved', message: 'a forced verdict' });
    expect(await Orphan.endRemains(l.requests.get('r-verdict')!, watch('r-verdict'))).toMatch(leftoversNote('1 process left behind by the run was ended'));
    expect(groupRunning(pid)).toBe(false);
    // The same row, its pid now another program's (a start time other than the one recorded).
    const other = trackGroup(track(spawn('/bin/sleep', ['300'], { detached: true, stdio: 'ignore' })).pid!);
    l.requests.setProcesses('r-verdict', other, MARKER, procStat(other)!.started - 1);
    expect(await Orphan.endRemains(l.requests.get('r-verdict')!, watch('r-verdict'))).toBeNull();
    expect(alive(other)).toBe(true);
  });

  it('ends its processes on terminate, KILL after the grace period for one that ignores TERM', async () => {
    const pid = runLeft('r4', `trap "" TERM; while :; do sleep 300 & wait; done`);
    const o = orphanOf('r4');
    o.terminate('shutdown');
    const end = await o.done;
    expect(end).toMatchObject({ by: 'terminate', reason: 'shutdown' });
    expect(groupRunning(pid)).toBe(false);
  });

  it('ends its processes once its request is no longer running (a forced verdict)', async () => {
    const pid = runLeft('r5', 'exec sleep 300');
    const o = orphanOf('r5');
    l.lifecycle.move(l.requests.get('r5')!, 'failed', { resolved_by: 'human' }, { kind: 'resolved', message: 'a forced verdict' });
    expect(await o.done).toMatchObject({ by: 'terminate', reason: 'resolved' });
    expect(groupRunning(pid)).toBe(false);
  });

  it('of an operation that leaves processes running, is its main process: it ends when that ends', async () => {
    const child = path.join(dir, 'service');
    runLeft('r6', `sleep 300 & echo $! > "${child}"; while [ ! -e "${go()}" ]; do sleep 0.05; done`, true);
    const service = await eventually('the service to start', () => (existsSync(child) && readFileSync(child, 'utf8').endsWith('\n') ? Number(readFileSync(child, 'utf8')) : undefined));
    const o = orphanOf('r6');
    writeFileSync(go(), '');
    expect(await o.done).toEqual({ by: 'itself', note: null });
    expect(alive(service)).toBe(true); // left running on purpose, as the operation says
    // Given a verdict afterwards, its service is still left alone: the run was its main process.
    expect(await Orphan.endRemains(l.requests.get('r6')!, watch('r6'))).toBeNull();
    expect(alive(service)).toBe(true);
  });
});
