// `dumbwaiter spools add NAME DIR` and `init --spool DIR` through the real command line: only the spool's
// own folder is made (a typo, or a share that is not mounted, must not quietly become a local spool),
// --parents makes the missing ones above it, a folder that cannot be made is one line and exit 1, and
// the new spool's mount is said as `spools check` finds it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { CLI, TestHost } from '../helpers/host';
import { fsTypeOf } from '../../main/core/spool/mountType';

let host: TestHost;
let scratch: string;

beforeAll(() => {
  host = new TestHost();
  scratch = mkdtempSync(path.join(os.tmpdir(), 'dw-spool-folders-'));
});

afterAll(async () => {
  await host.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

function dw(args: string[]) {
  const { DUMBWAITER_SPOOL: _none, ...env } = process.env;
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...env, DUMBWAITER_HOME: host.home } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** One line on stderr, the command's name first, and no stack. */
function oneLine(stderr: string, command: string): string {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(lines[0]!.startsWith(`dumbwaiter ${command}: `), stderr).toBe(true);
  return lines[0]!;
}

const spoolNames = () => (JSON.parse(dw(['spools', 'list', '--json']).stdout) as { name: string }[]).map((s) => s.name);

describe('spools add: folders made on purpose', () => {
  it('a path whose parents are missing is refused in one line naming the first missing folder, and nothing is made', () => {
    const dir = path.join(scratch, 'does', 'not', 'exist', 'spool');
    const r = dw(['spools', 'add', 'deep', dir]);
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr, 'spools')).toBe(
      `dumbwaiter spools: ${path.join(scratch, 'does', 'not', 'exist')} does not exist: check the path (a typo? a share or synced folder not mounted?), or pass --parents to create it and the 2 missing folders above it`,
    );
    expect(existsSync(path.join(scratch, 'does'))).toBe(false);
    expect(spoolNames()).not.toContain('deep');
  });

  it('--parents makes them all; the spool folder is private, and its mount is said as spools check says it', () => {
    const dir = path.join(scratch, 'made', 'on', 'purpose', 'spool');
    const r = dw(['spools', 'add', 'deep', dir, '--parents']);
    expect(r.status, r.stderr).toBe(0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(existsSync(path.join(dir, 'queue'))).toBe(true);
    expect(spoolNames()).toContain('deep');
    const mount = /^Mount: (.*)$/m.exec(r.stdout)?.[1];
    expect(mount, r.stdout).toMatch(new RegExp(`^${fsTypeOf(dir)}: (ok|degraded)`));
    // The probe it ran is the one kept: `spools list` shows the same summary.
    const listed = (JSON.parse(dw(['spools', 'list', '--json']).stdout) as { name: string; probe: { summary: string } | null }[]).find((s) => s.name === 'deep');
    expect(listed?.probe?.summary).toBe(mount);
  });

  it('only the last folder is made without --parents', () => {
    const dir = path.join(scratch, 'one-level');
    const r = dw(['spools', 'add', 'shallow', dir]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Added spool shallow at ${dir}`);
    expect(existsSync(path.join(dir, 'queue'))).toBe(true);
  });

  it.runIf(process.platform === 'linux')('/etc/passwd/spool and /proc/spool: one clear line each, exit 1', () => {
    const file = dw(['spools', 'add', 'x', '/etc/passwd/spool']);
    expect(file.status).toBe(1);
    expect(oneLine(file.stderr, 'spools')).toBe('dumbwaiter spools: /etc/passwd is a file, not a folder: the spool /etc/passwd/spool cannot be made in it. Give a path made of folders');
    const proc = dw(['spools', 'add', 'x', '/proc/spool']);
    expect(proc.status).toBe(1);
    expect(oneLine(proc.stderr, 'spools')).toBe('dumbwaiter spools: cannot create the folder /proc/spool: this filesystem (/proc) does not allow new folders there');
    expect(spoolNames()).not.toContain('x');
  });
});

describe('init --spool: folders made on purpose', () => {
  it('refuses a missing parent in one line, makes them with --parents, and says the mount', () => {
    const home = path.join(scratch, 'init-home');
    const dir = path.join(scratch, 'init', 'nested', 'spool');
    const refused = spawnSync(process.execPath, [CLI, 'init', '--home', home, '--spool', dir], { encoding: 'utf8' });
    expect(refused.status).toBe(1);
    expect(oneLine(refused.stderr, 'init')).toContain(`${path.join(scratch, 'init', 'nested')} does not exist`);
    expect(existsSync(path.join(scratch, 'init'))).toBe(false);
    const made = spawnSync(process.execPath, [CLI, 'init', '--home', home, '--spool', dir, '--parents'], { encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toMatch(new RegExp(`^Mount: ${fsTypeOf(dir)}: `, 'm'));
    expect(existsSync(path.join(dir, 'queue'))).toBe(true);
    const json = spawnSync(process.execPath, [CLI, 'init', '--home', home, '--json'], { encoding: 'utf8' });
    expect(JSON.parse(json.stdout)).toMatchObject({ spool: dir, probe: { spool: 'default', dir, fs_type: fsTypeOf(dir) } });
  });
});
