// A folder holding the user's own files can never become the spool, and retention never deletes what
// the host did not write: the real command line (init, config set spool), the real service (useSpool)
// and a real daemon whose start reaps, on a real spool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { CLI, TestHost, eventually } from '../helpers/host';
import { NO_OPERATIONS } from '../helpers/allowlists';
import { SPOOL_MARKER } from '../../main/core/spool/layout';
import type { KeyFile } from '../../shared/protocol/types';

const DAY = 86_400_000;

/** Every entry below `dir` with its content (files) or '/' (folders): what "untouched" compares. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of readdirSync(dir, { recursive: true }).map(String).sort()) {
    const p = path.join(dir, rel);
    out[rel] = statSync(p).isDirectory() ? '/' : readFileSync(p, 'utf8');
  }
  return out;
}

function age(file: string, ms: number): void {
  const t = new Date(Date.now() - ms);
  utimesSync(file, t, t);
}

let host: TestHost;
let key: KeyFile;

beforeAll(() => {
  host = new TestHost(NO_OPERATIONS, { retention_spool_days: 0.01 });
  key = host.createKey('agent', 'read');
});

afterAll(async () => {
  await host?.cleanup();
});

describe('a folder with user files never becomes the spool', () => {
  /** The user's project: its own bin/ and tmp/ (what a spool would write into and reap). */
  const userFolder = () => {
    const dir = path.join(host.root, `project-${Math.random().toString(36).slice(2)}`);
    for (const d of ['bin', 'tmp', 'results']) mkdirSync(path.join(dir, d), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(dir, 'bin', 'dw.cjs'), 'my own tool');
    writeFileSync(path.join(dir, 'tmp', 'draft.txt'), 'my draft');
    writeFileSync(path.join(dir, 'results', 'q3.json'), '{"mine": true}');
    writeFileSync(path.join(dir, 'README.md'), 'my project');
    for (const f of ['bin/dw.cjs', 'tmp/draft.txt', 'results/q3.json']) age(path.join(dir, f), 30 * DAY);
    return dir;
  };
  const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--home', host.home], { encoding: 'utf8', timeout: 60_000 });
  const settings = () => readFileSync(path.join(host.home, 'settings.json'), 'utf8');
  const defaultDir = () => (JSON.parse(settings()) as { spools: { name: string; dir: string }[] }).spools.find((s) => s.name === 'default')?.dir;

  it('init --spool refuses it, says why, and nothing in it changes', () => {
    const dir = userFolder();
    const before = snapshot(dir);
    const r = cli(['init', '--spool', dir]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`refusing to use ${dir} as the spool: it holds files Dumbwaiter did not create`);
    expect(snapshot(dir)).toEqual(before);
    expect(defaultDir()).toBe(host.spool);
  });

  it('config set spool refuses it the same way (the one call that moves the spool), and a relative path is taken from where it is typed', () => {
    const dir = userFolder();
    const before = snapshot(dir);
    const settingsBefore = settings();
    const r = cli(['config', 'set', 'spool', dir]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('it holds files Dumbwaiter did not create');
    expect(snapshot(dir)).toEqual(before);
    expect(settings()).toBe(settingsBefore);
    // The same folder given relative to the working folder: the same folder, refused the same way.
    const rel = spawnSync(process.execPath, [CLI, 'config', 'set', 'spool', path.basename(dir), '--home', host.home], { encoding: 'utf8', cwd: host.root, timeout: 60_000 });
    expect(rel.status).toBe(1);
    expect(rel.stderr).toContain(`refusing to use ${dir} as the spool`);
    expect(snapshot(dir)).toEqual(before);
  });

  it("the service's useSpool refuses it, and takes an empty folder (marked as the host's)", () => {
    const dir = userFolder();
    const before = snapshot(dir);
    expect(() => host.service((s) => s.spools.use(dir, 'test'))).toThrow('it holds files Dumbwaiter did not create');
    expect(snapshot(dir)).toEqual(before);
    // An empty folder is fine: it becomes a spool with the host's marker (then the test's spool is put back).
    const empty = path.join(host.root, 'empty');
    mkdirSync(empty, { mode: 0o700 });
    // Once moved, the spool is `default` at its new folder (the old folder is no spool of the home).
    expect(host.service((s) => s.spools.use(empty, 'test'), 'default')).toMatchObject({ path: empty, ok: true });
    expect(existsSync(path.join(empty, SPOOL_MARKER))).toBe(true);
    expect(readFileSync(path.join(empty, 'bin', 'dw.cjs'), 'utf8')).toContain('Dumbwaiter');
    expect(host.service((s) => s.spools.use(host.spool, 'test'), 'default')).toMatchObject({ ok: true }); // a host-made spool, again
    expect(defaultDir()).toBe(host.spool);
  });
});

describe('retention', () => {
  it('removes only what the host named, and in a folder the host did not make a spool, nothing at all', async () => {
    const spool = (...p: string[]) => path.join(host.spool, ...p);
    // Files someone put into the spool's folders by hand, and the host's own kinds of files, all old.
    const foreign = ['results/notes.txt', 'inbox/readme.md', 'quarantine/keep-me.txt'];
    const hostNamed = ['results/old-req.json', 'results/old-req.log', 'inbox/20200101T000000000Z-0123abcd.json', 'quarantine/2020-01-01T000000000Z-abc123-x.json', 'tmp/leftover.123'];
    const plant = () => {
      for (const f of [...foreign, ...hostNamed]) {
        writeFileSync(spool(f), 'x');
        age(spool(f), 3 * DAY);
      }
    };

    // First as if the spool had been adopted over someone's folder: no marker, and a file of theirs
    // at the top. The daemon serves it, but deletes nothing there and leaves bin/ alone.
    unlinkSync(spool(SPOOL_MARKER));
    writeFileSync(spool('their-file.txt'), 'theirs');
    writeFileSync(spool('bin', 'dw.cjs'), 'their own dw.cjs');
    plant();
    const before = snapshot(host.spool);
    let d = await host.startDaemon();
    expect((await host.sentinel(key)).state).toBe('succeeded'); // after the start's reaping pass
    await d.stop();
    for (const f of [...foreign, ...hostNamed]) expect(existsSync(spool(f)), f).toBe(true);
    expect(readFileSync(spool('bin', 'dw.cjs'), 'utf8')).toBe('their own dw.cjs');
    expect(readFileSync(spool('their-file.txt'), 'utf8')).toBe(before['their-file.txt']);
    expect(host.audit('', 'reaped').filter((a) => /results|inbox|quarantine|tmp/.test(a.message))).toEqual([]);

    // Made the host's again (init on it: refused while their file is there; taken once it is gone).
    expect(host.cli(['init']).status).toBe(1);
    unlinkSync(spool('their-file.txt'));
    expect(host.cli(['init']).status).toBe(0);
    expect(existsSync(spool(SPOOL_MARKER))).toBe(true);
    plant();
    d = await host.startDaemon();
    await eventually('the reaping at the start', () => (host.audit('', 'reaped').length > 0 ? true : undefined));
    for (const f of hostNamed) expect(existsSync(spool(f)), f).toBe(false);
    for (const f of foreign) expect(existsSync(spool(f)), f).toBe(true);
    expect(readFileSync(spool('bin', 'dw.cjs'), 'utf8')).toContain('Dumbwaiter'); // the host's client, placed again
    expect((await host.sentinel(key)).state).toBe('succeeded');
    await d.stop();
  });
});
