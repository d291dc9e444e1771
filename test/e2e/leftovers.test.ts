// A run's processes end with it, with the real daemon: a background child of a run that exits 0, and
// one that left the run's process group with setsid (after a normal exit and after a timeout), are
// ended before the result is recorded, so the file they would write later never appears; an operation
// with leaves_processes keeps them (the approval says so, and one given before it said so no longer
// holds); another host's run with the same request id is left alone. Gone means: no such process in /proc, and none carrying the run's marker.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { alive, stopGroups, trackGroup, UNREAD_NOTE } from '../helpers/processes';
import type { KeyFile } from '../../shared/protocol/types';

/** `$0` is the run's file prefix: the leftover writes its process group, then its pid, then waits 30 s
 *  and writes `$0.x`. The run's main process waits for the pid, so the leftover really runs first. */
const LEFTOVER = `sh -c 'cut -d" " -f5 /proc/$$/stat > "$0.pgrp"; echo $$ > "$0.pid"; sleep 30; touch "$0.x"' "$0" >/dev/null 2>&1 &`;
const READY = 'while [ ! -s "$0.pid" ]; do sleep 0.01; done; echo "$DUMBWAITER_RUN_MARKER" > "$0.marker";';

/** An operation running `script` with `$0` the file prefix of the request's tag, in `dir`. */
function op(dir: string, name: string, script: string, extra = ''): string {
  return `
  - name: ${name}
    command: ${JSON.stringify(['/bin/sh', '-c', script, `${dir}/{tag}`])}
    args:
      tag: {type: string, pattern: "[a-z0-9-]+"}
    scope: read
    concurrency: 4${extra.includes('approval:') ? '' : '\n    approval: never'}${extra}`;
}

const ESCAPE = `setsid ${LEFTOVER} ${READY}`;

/** `guardedLeaves`: whether the operation `guarded` (asks first) leaves processes running. */
const allowlist = (guardedLeaves: boolean) =>
  `version: 1\noperations:` +
  op(files, 'background', `${LEFTOVER} ${READY} echo started`) +
  op(files, 'escape', `${ESCAPE} echo started`) +
  op(files, 'escape-slow', `${ESCAPE} exec sleep 300`, '\n    timeout_s: 1') +
  op(files, 'service', `${ESCAPE} echo started`, '\n    leaves_processes: true') +
  op(files, 'guarded-service', `${ESCAPE} echo started`, '\n    leaves_processes: true\n    approval: always') +
  op(files, 'guarded', `${ESCAPE} echo started`, `\n    leaves_processes: ${guardedLeaves}\n    approval: always`) +
  '\n';

let host: TestHost;
let other: TestHost;
let key: KeyFile;
let otherKey: KeyFile;
let files: string;

beforeAll(async () => {
  host = new TestHost('version: 1\noperations: []\n');
  files = path.join(host.root, 'runs');
  mkdirSync(files);
  host.writeAllowlist(allowlist(false));
  key = host.createKey('agent', 'read');
  await host.startDaemon();
  // A second host on the same machine, whose run has the same request id; its files go in the same folder.
  other = new TestHost(`version: 1\noperations:${op(files, 'service', `${ESCAPE} echo started`, '\n    leaves_processes: true')}\n`);
  otherKey = other.createKey('agent', 'read');
  await other.startDaemon();
});

afterEach(stopGroups);

afterAll(async () => {
  await other.cleanup();
  await host.cleanup();
});

const prefix = (tag: string) => path.join(files, tag);
const read = (tag: string, ext: string) => (existsSync(`${prefix(tag)}.${ext}`) ? readFileSync(`${prefix(tag)}.${ext}`, 'utf8').trim() : '');

/** The leftover of the run with this tag, once it has written its pid (tracked: killed after the test). */
async function leftover(tag: string): Promise<{ pid: number; pgrp: number; marker: string }> {
  const pid = await eventually(`the leftover of ${tag}`, () => (/^\d+$/.test(read(tag, 'pid')) ? Number(read(tag, 'pid')) : undefined));
  trackGroup(Number(read(tag, 'pgrp')));
  const marker = await eventually(`the marker of ${tag}`, () => read(tag, 'marker') || undefined);
  return { pid, pgrp: Number(read(tag, 'pgrp')), marker };
}

/** The running processes whose environment has this run marker (Linux's /proc). */
function marked(marker: string): number[] {
  const entry = `DUMBWAITER_RUN_MARKER=${marker}`;
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n) && alive(Number(n)))
    .filter((n) => {
      try {
        return readFileSync(`/proc/${n}/environ`, 'latin1').split('\0').includes(entry);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function daemonAnswers(h: TestHost, k: KeyFile): Promise<void> {
  expect((await h.sentinel(k)).state).toBe('succeeded');
}

describe.runIf(process.platform === 'linux')('what a run leaves behind', () => {
  it('a background child of a run that exits 0 is ended before the result: its later write never happens', async () => {
    host.submit(key, 'bg-1', 'background', { tag: 'bg-1' });
    const runPid = trackGroup(await host.runPid('bg-1'));
    const { pid, pgrp, marker } = await leftover('bg-1');
    expect(pgrp).toBe(runPid); // in the run's process group
    const r = await host.waitResult('bg-1');
    expect(r).toMatchObject({ state: 'succeeded', exit_code: 0, stdout: 'started\n' });
    // Already when the result is there: the process that would write bg-1.x is gone, and so is every
    // process with the run's marker, so nothing of the run can write it later.
    expect(alive(pid)).toBe(false);
    expect(marked(marker)).toEqual([]);
    expect(existsSync(`${prefix('bg-1')}.x`)).toBe(false);
    expect(host.logOf('bg-1')).toMatch(new RegExp(`^started\\n\\[dumbwaiter: [12] process(es)? left behind by the run (was|were) ended${UNREAD_NOTE}\\]\\n$`));
    await daemonAnswers(host, key);
  });

  it('a child that left the process group with setsid is found by the marker and ended after a normal exit', async () => {
    host.submit(key, 'setsid-1', 'escape', { tag: 'setsid-1' });
    const runPid = trackGroup(await host.runPid('setsid-1'));
    const { pid, pgrp, marker } = await leftover('setsid-1');
    expect(pgrp).toBe(pid); // a group (and session) of its own
    expect(pgrp).not.toBe(runPid);
    expect(await host.waitResult('setsid-1')).toMatchObject({ state: 'succeeded', exit_code: 0 });
    expect(alive(pid)).toBe(false);
    expect(marked(marker)).toEqual([]);
    expect(existsSync(`${prefix('setsid-1')}.x`)).toBe(false);
    await daemonAnswers(host, key);
  });

  it('a child that left the process group with setsid is ended when the run times out', async () => {
    host.submit(key, 'setsid-slow', 'escape-slow', { tag: 'setsid-slow' });
    trackGroup(await host.runPid('setsid-slow'));
    const { pid, marker } = await leftover('setsid-slow');
    const r = await host.waitResult('setsid-slow');
    expect(r).toMatchObject({ state: 'failed', error: { code: 'timeout' } });
    expect(alive(pid)).toBe(false);
    expect(marked(marker)).toEqual([]);
    await daemonAnswers(host, key);
  });

  it('leaves_processes: what the run started keeps running, and the test ends it', async () => {
    host.submit(key, 'service-1', 'service', { tag: 'service-1' });
    const { pid, marker } = await leftover('service-1');
    expect(await host.waitResult('service-1')).toMatchObject({ state: 'succeeded', exit_code: 0 });
    expect(alive(pid)).toBe(true);
    expect(marked(marker)).toContain(pid);
    expect(host.logOf('service-1')).toBe('started\n');
    process.kill(-pid, 'SIGKILL');
    await eventually('the service to end', () => (marked(marker).length === 0 ? true : undefined));
    await daemonAnswers(host, key);
  });

  it('the approval of an operation that leaves processes running says so', async () => {
    host.submit(key, 'service-2', 'guarded-service', { tag: 'service-2' });
    const waiting = await host.waitResult('service-2', ['awaiting_approval']);
    expect(waiting.approval?.leaves_processes).toBe(true);
    const card = host.cli(['approvals', 'list']).stdout;
    expect(card).toMatch(/^Run guarded-service\?\n/);
    expect(card).toContain('  Request:  service-2, ');
    expect(card).toContain('      processes it starts: may outlive it (leaves_processes)\n');
    expect(card).toContain('  ! What this command starts may keep running after it ends (its operation leaves processes running).\n');
    expect(host.cli(['approvals', 'approve', 'service-2']).status).toBe(0);
    const { pid, marker } = await leftover('service-2');
    expect((await host.waitResult('service-2')).state).toBe('succeeded');
    expect(alive(pid)).toBe(true);
    process.kill(-pid, 'SIGKILL');
    await eventually('the service to end', () => (marked(marker).length === 0 ? true : undefined));
    await daemonAnswers(host, key);
  });

  it("another host's process from a run with the same request id is not ended", async () => {
    other.submit(otherKey, 'same-id', 'service', { tag: 'same-id-other' });
    const theirs = await leftover('same-id-other');
    expect((await other.waitResult('same-id')).state).toBe('succeeded');
    expect(readFileSync(`/proc/${theirs.pid}/environ`, 'latin1').split('\0')).toContain('DUMBWAITER_REQUEST_ID=same-id');

    host.submit(key, 'same-id', 'escape', { tag: 'same-id-mine' });
    const mine = await leftover('same-id-mine');
    expect((await host.waitResult('same-id')).state).toBe('succeeded');
    expect(alive(mine.pid)).toBe(false);
    expect(alive(theirs.pid)).toBe(true);
    expect(marked(theirs.marker)).toContain(theirs.pid);

    process.kill(-theirs.pid, 'SIGKILL');
    await eventually('their service to end', () => (marked(theirs.marker).length === 0 ? true : undefined));
    await daemonAnswers(host, key);
    await daemonAnswers(other, otherKey);
  });

  it('an approval given while the operation ended its leftovers does not hold once it leaves them running', async () => {
    host.submit(key, 'guarded-1', 'guarded', { tag: 'guarded-1' });
    expect((await host.waitResult('guarded-1', ['awaiting_approval'])).approval?.leaves_processes).toBeUndefined();
    expect(host.cli(['pause']).status).toBe(0);
    expect(host.cli(['approvals', 'approve', 'guarded-1']).status).toBe(0);
    await host.waitResult('guarded-1', ['queued']);
    const reloads = host.audit('reloaded', 'allowlist_loaded').length;
    host.writeAllowlist(allowlist(true));
    await eventually('the allowlist to be reloaded', () => (host.audit('reloaded', 'allowlist_loaded').length > reloads ? true : undefined));
    expect(host.cli(['resume']).status).toBe(0);
    const again = await host.waitResult('guarded-1', ['awaiting_approval']);
    expect(again.approval?.leaves_processes).toBe(true);
    expect(existsSync(`${prefix('guarded-1')}.pid`)).toBe(false); // it never ran
    expect(host.cli(['approvals', 'deny', 'guarded-1']).status).toBe(0);
    await host.waitResult('guarded-1', ['denied']);
    await daemonAnswers(host, key);
  });
});
