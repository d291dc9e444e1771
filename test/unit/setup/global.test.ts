// The test run's own net against orphans (test/setup/global.ts with test/helpers/children.ts), run
// as a vitest run of its own around fixture tests that leave processes behind.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'dw-orphans-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function runFixture(name: string): { status: number | null; output: string; pids: number[] } {
  const pids = path.join(scratch, `${name}.pid`);
  const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'test/fixtures/orphans/vitest.config.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ORPHAN_FIXTURE: `${name}.fixture.ts`, ORPHAN_PIDS: pids, NO_COLOR: '1' },
    timeout: 120_000,
  });
  return { status: r.status, output: r.stdout + r.stderr, pids: readFileSync(pids, 'utf8').split(' ').map(Number) };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')); // a zombie is gone too
  } catch {
    return false;
  }
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

  it('a process that escaped its worker fails the run, named, and is killed', () => {
    const r = runFixture('leaksDetached');
    expect(r.output).toMatch(/1 process\(es\) started by the tests outlived them[^]*sleep 300/);
    expect(r.status).not.toBe(0);
    expect(alive(r.pids[0]!)).toBe(false);
  });
});
