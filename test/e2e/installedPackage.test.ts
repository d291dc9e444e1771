// The package as npm ships it: `npm pack`, then installed into an empty project with its runtime
// dependencies alone, and `dumbwaiter` run from there: the bundle, with no tsx, no TypeScript, no
// esbuild and no other devDependency installed, answers --version, makes a home with init and serves one
// request signed by the sandbox client it placed in the spool.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonProcess } from '../helpers/host';
import { track } from '../helpers/processes';

const ROOT = path.resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let dir = '';
let app = '';
let daemon: DaemonProcess | null = null;

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}
const dumbwaiter = (...args: string[]) => run(path.join(app, 'node_modules', '.bin', 'dumbwaiter'), args, app);

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-pack-'));
  app = path.join(dir, 'app');
  mkdirSync(app);
  run(NPM, ['pack', '--silent', '--pack-destination', dir], ROOT); // its prepare script builds the bundle
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'uses-dumbwaiter', version: '1.0.0', private: true }));
  // From npm's cache where it can (this checkout's install filled it). Install scripts are skipped: the
  // only one is better-sqlite3's native build, which would test better-sqlite3; its addon, built by this
  // checkout's install for this Node, is copied into place instead.
  run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(dir, `dumbwaiter-${pkg.version}.tgz`)], app);
  const addon = path.join('build', 'Release', 'better_sqlite3.node');
  const sqlite = path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
  mkdirSync(path.join(app, 'node_modules', 'better-sqlite3', path.dirname(addon)), { recursive: true });
  copyFileSync(path.join(sqlite, addon), path.join(app, 'node_modules', 'better-sqlite3', addon));
}, 240_000);

afterAll(async () => {
  await daemon?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packed package, installed with its runtime dependencies alone', () => {
  it('holds the bundle and none of the sources or build tools: no tsx, TypeScript, esbuild or other devDependency', () => {
    const installed = readdirSync(path.join(app, 'node_modules'));
    expect(installed).toContain('dumbwaiter');
    expect(installed).toContain('better-sqlite3');
    expect(installed.filter((name) => name in pkg.devDependencies || name === 'esbuild' || name === 'typescript')).toEqual([]);
    const shipped = readdirSync(path.join(app, 'node_modules', 'dumbwaiter'), { recursive: true }).map(String);
    expect(shipped).toContain(path.join('dist', 'host', 'cli.mjs'));
    expect(shipped.filter((f) => f.endsWith('.ts') || f.endsWith('.tsx'))).toEqual([]);
    // The test-only crash points are compiled out of the product's bundle.
    for (const f of shipped.filter((f) => f.endsWith('.mjs'))) expect(readFileSync(path.join(app, 'node_modules', 'dumbwaiter', f), 'utf8'), f).not.toContain('DUMBWAITER_FAULT');
  });

  it('dumbwaiter --version prints the version', () => {
    expect(dumbwaiter('--version').trim()).toBe(pkg.version);
  });

  it('makes a home with init and answers a request signed by the sandbox client it placed in the spool', async () => {
    const home = path.join(dir, 'home');
    const spool = path.join(dir, 'spool');
    const keyFile = path.join(dir, 'sandbox.key.json');
    expect(dumbwaiter('init', '--home', home, '--spool', spool)).toContain('Created: home');
    dumbwaiter('keys', 'create', 'sandbox', '--out', keyFile, '--home', home);
    daemon = await new DaemonProcess(
      track(spawn(path.join(app, 'node_modules', '.bin', 'dumbwaiter'), ['daemon', '--home', home], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] })),
    ).ready();
    expect(existsSync(path.join(spool, 'bin', 'dw.cjs'))).toBe(true);
    const client = spawnSync(process.execPath, [path.join(spool, 'bin', 'dw.cjs'), '--spool', spool, '--key-file', keyFile, 'run', 'echo', 'msg=from the installed package'], { encoding: 'utf8', timeout: 60_000 });
    expect(client.status, client.stderr).toBe(0);
    expect(client.stdout).toContain('from the installed package');
    expect(await daemon.stop()).toEqual({ code: 0, signal: null });
  });
});
