// bin/dumbwaiter.js in a checkout: it runs the bundle, building it when there is none, and rebuilds it
// when a source it was built from is newer, so that an edit shows at the next command. In a copy of the
// checkout, so that the real one's bundle is left alone.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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
