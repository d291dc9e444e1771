// bin/dumbwaiter.js in a checkout: it runs the bundle, building it when there is none, and rebuilds it
// when a source it was built from is newer, so that an edit shows at the next command. In a copy of the
// checkout, so that the real one's bundle is left alone.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonProcess, eventually, TestHost } from '../../helpers/host';

const ROOT = path.resolve(import.meta.dirname, '../../..');
let copy = '';

const bundle = () => path.join(copy, 'dist', 'host', 'cli.mjs');
const cli = (...args: string[]) => spawnSync(process.execPath, [path.join(copy, 'bin', 'dumbwaiter.js'), ...args], { encoding: 'utf8' });

beforeAll(() => {
  copy = mkdtempSync(path.join(os.tmpdir(), 'dw-checkout-'));
  for (const d of ['bin', 'main', 'shared', 'scripts', 'package.json']) cpSync(path.join(ROOT, d), path.join(copy, d), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe('bin/dumbwaiter.js in a checkout', () => {
  it('builds the bundle when there is none, then runs it', () => {
    const r = cli('--version');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version);
    expect(existsSync(bundle())).toBe(true);
    expect(existsSync(path.join(copy, 'dist', 'sandbox', 'dw.cjs'))).toBe(true);
  });

  it('rebuilds it when a source is newer than the bundle, so that the edit shows', () => {
    const main = path.join(copy, 'main', 'cli', 'main.ts');
    writeFileSync(main, readFileSync(main, 'utf8').replace('run allowlisted operations for a sandboxed agent', 'an edited help line'));
    const later = new Date(statSync(bundle()).mtimeMs + 1); // just newer than the bundle, and older than its rebuild
    utimesSync(main, later, later);
    const r = cli('help');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('an edited help line');
  });

  it('runs the bundle as built when no source is newer', () => {
    const built = statSync(bundle()).mtimeMs;
    const r = cli('help');
    expect(r.stdout).toContain('an edited help line');
    expect(statSync(bundle()).mtimeMs).toBe(built);
  });
});

describe('bin/dumbwaiter.js daemon', () => {
  it("keeps V8's young generation at its first size from before the bundle loads", async () => {
    // Loading the bundle with the young generation free to grow doubles it (a 1 MiB half becomes 2).
    const probe = path.join(copy, 'young-probe.cjs');
    writeFileSync(
      probe,
      `const v8 = require('node:v8');
       const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
       const first = young();
       process.on('SIGUSR2', () => process.stderr.write('young ' + JSON.stringify({ first, now: young() }) + '\\n'));`,
    );
    const h = new TestHost('version: 1\noperations: []\n');
    const d = new DaemonProcess(spawn(process.execPath, ['--require', probe, path.join(copy, 'bin', 'dumbwaiter.js'), 'daemon', '--home', h.home, '--spool', h.spool], { stdio: ['ignore', 'pipe', 'pipe'] }));
    try {
      await d.ready();
      d.proc.kill('SIGUSR2');
      const seen = await eventually('the young generation told', () => /young (\{.*\})/.exec(d.stderr)?.[1]);
      const { first, now } = JSON.parse(seen) as { first: number; now: number };
      // Its first half, and the other one, committed at the first scavenge.
      expect(now).toBeLessThanOrEqual(2 * first);
    } finally {
      await d.stop();
      await h.cleanup();
    }
  });
});
