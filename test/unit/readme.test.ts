// The README against the machine it describes: the Node versions it names are the ones CI tests and
// package.json's engines allow, the recommended ones install without an EBADENGINE warning (and the
// packages that warn on the oldest are the ones it names), and the install scripts it says the project
// approves are every one the lockfile has, as npm itself finds. The Quick start, run as written on a
// fresh home: test/e2e/readme.test.ts.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const README = read('README.md');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; allowScripts: Record<string, boolean> };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[]; hasInstallScript?: boolean }> };
// npm's own range rules (the semver package npm and electron-builder use; a dependency of theirs here).
const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean; intersects(a: string, b: string): boolean };

/** The README's section under `## title`, up to the next `## `. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  expect(start, `README has a section "${title}"`).toBeGreaterThan(0);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The package's name from its lockfile path (node_modules/a/node_modules/@s/b -> @s/b). */
const nameOf = (lockPath: string) => lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);
const locked = Object.entries(lock.packages).filter(([p]) => p !== '');

/** Each supported Node line of `engines` (`^20.19.0 || ...`): its major and its first version. */
const lines = pkg.engines.node.split('||').map((part) => {
  const m = /^\s*\^(\d+)\.(\d+)\.0\s*$/.exec(part);
  if (!m) throw new Error(`engines.node part "${part}" is not of the form ^MAJOR.MINOR.0`);
  return { major: m[1]!, minor: Number(m[2]), first: `${m[1]}.${m[2]}.0` };
});
const oldest = lines[0]!;
const recommended = lines.slice(1);

/** Locked packages whose engines.node does not allow `version` (npm's EBADENGINE warning there). */
const badEngine = (version: string) =>
  locked.filter(([, v]) => typeof (v.engines as { node?: string } | undefined)?.node === 'string' && !semver.satisfies(version, (v.engines as { node: string }).node)).map(([p]) => nameOf(p));

describe('the Node versions: README, engines and CI agree', () => {
  const fresh = section('What a fresh machine needs');

  it('the README quotes package.json’s engines as they are, oldest line first', () => {
    expect(fresh).toContain(`\`${pkg.engines.node}\``);
    expect(lines.map((l) => Number(l.major))).toEqual([...lines.map((l) => Number(l.major))].sort((a, b) => a - b));
  });

  it('the README names every line with its first version: Node 24, Node 22 from 22.13, Node 20 from 20.19', () => {
    for (const l of lines) expect(fresh).toContain(`Node ${l.major}${l.minor > 0 ? ` from ${l.major}.${l.minor}` : ''}`);
  });

  it('CI’s `npm test` runs on every line engines allows, and on nothing else; the oldest at its first version', () => {
    const workflow = YAML.parse(read('.github/workflows/ci.yml')) as { jobs: { test: { strategy: { matrix: { node: string[]; include: { node?: string }[] } } } } };
    const matrix = workflow.jobs.test.strategy.matrix;
    const tested = [...new Set([...matrix.node, ...matrix.include.map((i) => i.node).filter((n) => n !== undefined)])];
    expect(tested.map((v) => v.split('.')[0]).sort()).toEqual(lines.map((l) => l.major).sort());
    for (const v of tested) expect(semver.intersects(v, pkg.engines.node), `${v} within ${pkg.engines.node}`).toBe(true);
    expect(tested).toContain(`${oldest.major}.${oldest.minor}`);
  });

  it('no locked package warns EBADENGINE on a recommended line, from its first version', () => {
    for (const l of recommended) expect(badEngine(l.first), `Node ${l.first}`).toEqual([]);
  });

  it('the packages that do warn on the oldest line are the ones the README names', () => {
    const warned = [...new Set(badEngine(oldest.first))].sort();
    const named = [...fresh.matchAll(/EBADENGINE[^]*?\(([^)]*)want Node/g)].flatMap((m) => [...m[1]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!)).sort();
    expect(named).toEqual(warned);
  });
});

describe('install scripts: the project’s approvals (npm 11’s allowScripts)', () => {
  const withScripts = [...new Set(locked.filter(([, v]) => v.hasInstallScript).map(([p]) => nameOf(p)))].sort();

  it('every locked package with an install script is approved or denied by name, and nothing else is listed', () => {
    // By name, not pinned (name@1.2.3): this lockfile records no `resolved` URLs, and npm verifies a
    // pinned version only from one, so a pin would never match.
    expect(Object.keys(pkg.allowScripts).sort()).toEqual(withScripts);
    expect(withScripts).toContain('better-sqlite3');
    expect(pkg.allowScripts['better-sqlite3']).toBe(true); // the ledger's native module must build
  });

  it('the README says which are approved and which denied', () => {
    const note = /\*\*Install scripts\.\*\*[^]*?(?:\n\n|$)/.exec(section('What a fresh machine needs'))?.[0] ?? '';
    const approves = /approves [^:]*:([^;]*);/.exec(note)?.[1] ?? '';
    const denies = /it denies ([^\n(]*)/.exec(note)?.[1] ?? '';
    const names = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).sort();
    expect(names(approves)).toEqual(Object.keys(pkg.allowScripts).filter((n) => pkg.allowScripts[n]).sort());
    expect(names(denies)).toEqual(Object.keys(pkg.allowScripts).filter((n) => !pkg.allowScripts[n]).sort());
  });

  it('npm finds no install script left unreviewed (where npm has `install-scripts`, npm 11)', (ctx) => {
    const r = spawnSync('npm', ['install-scripts', 'ls', '--json'], {
      cwd: ROOT,
      encoding: 'utf8',
      shell: process.platform === 'win32', // npm.cmd
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_offline: 'true' },
      timeout: 60_000,
    });
    if (r.status !== 0 && /Unknown command/i.test(`${r.stdout}${r.stderr}`)) ctx.skip('this npm has no install-scripts command (npm 10 ignores allowScripts)');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ allowScripts: [] });
  });
});
