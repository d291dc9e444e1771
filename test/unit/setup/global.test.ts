// The test run's own net against orphans (test/setup/global.ts, and the workers' net in
// test/helpers/processes.ts), run as a vitest run of its own around fixtures that leave processes behind.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, track } from '../../helpers/processes';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'dw-orphans-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function runFixture(name: string, env: Record<string, string> = {}): { status: number | null; output: string; pids: number[] } {
  const pids = path.join(scratch, `${name}.pid`);
  writeFileSync(pids, '');
  const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'test/fixtures/orphans/vitest.config.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ORPHAN_FIXTURE: `${name}.fixture.ts`, ORPHAN_PIDS: pids, NO_COLOR: '1', ...env },
    timeout: 120_000,
  });
  return { status: r.status, output: r.stdout + r.stderr, pids: readFileSync(pids, 'utf8').split(' ').filter(Boolean).map(Number) };
}

describe.runIf(process.platform === 'linux')('processes the tests start', () => {
  it('a daemon a test forgot to stop is stopped when its worker ends, its run with it, and the run passes', () => {
    const r = runFixture('forgetsDaemon');
    expect(r.output).toContain('1 passed');
    expect(r.output).not.toContain('outlived');
    expect(r.status).toBe(0);
    expect(r.pids).toHaveLength(2); // the daemon and its run
    for (const pid of r.pids) expect(alive(pid)).toBe(false);
  });

  it('what an interrupted run left behind is killed and removed at the next start, which says so', () => {
    // A run that was stopped with Ctrl-C (vitest exits before the teardown): its folder, its owner gone,
    // and a process of one of its tests still running.
    const tmp = mkdtempSync(path.join(scratch, 'tmp-'));
    const stale = path.join(tmp, 'dwt-interrupted');
    mkdirSync(stale);
    writeFileSync(path.join(stale, '.vitest-pid'), '999999999');
    const leftover = track(spawn('sleep', ['300'], { detached: true, stdio: 'ignore', env: { ...process.env, TMPDIR: stale } }));
    const r = runFixture('passes', { TMPDIR: tmp });
    expect(r.status).toBe(0);
    expect(r.output).toMatch(/An interrupted test run left 1 process\(es\); killed:\s+\d+: sleep 300/);
    expect(alive(leftover.pid!)).toBe(false);
    expect(existsSync(stale)).toBe(false);
  });

  it('a process that escaped its worker fails the run, named, and is killed', () => {
    const r = runFixture('leaksDetached');
    expect(r.output).toMatch(/1 process\(es\) started by the tests outlived them[^]*sleep 300/);
    expect(r.status).not.toBe(0);
    expect(alive(r.pids[0]!)).toBe(false);
  });
});
