// `dumbwaiter service`: the real command line against a fake `systemctl` on PATH that records its calls
// (no user systemd runs here), and with no systemctl at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { CLI } from '../helpers/host';
import { serviceName } from '../../main/core/loginService/units';
import { acquireHomeLock } from '../../main/core/daemon/lock';
import { homePaths } from '../../main/core/home';

let scratch: string;
let home: string;
let userHome: string;
let fakeBin: string;
let calls: string;
let unitFile: string;

function dw(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, HOME: userHome, XDG_CONFIG_HOME: '', PATH: fakeBin, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A systemctl that records each call and answers as `answer` (a shell snippet) says. */
function fakeSystemctl(answer = 'exit 0'): void {
  writeFileSync(path.join(fakeBin, 'systemctl'), `#!/bin/sh\necho "$*" >> '${calls}'\n${answer}\n`, { mode: 0o755 });
}

const recorded = () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : []);

beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'dw-service-'));
  home = path.join(scratch, `the "home" it's 100% $HOME`);
  userHome = path.join(scratch, 'user');
  fakeBin = path.join(scratch, 'bin');
  calls = path.join(scratch, 'calls.txt');
  mkdirSync(userHome);
  mkdirSync(fakeBin);
  unitFile = path.join(userHome, '.config', 'systemd', 'user', `${serviceName(home)}.service`);
  expect(dw(['init', '--home', home, '--spool', path.join(scratch, 'spool')]).status).toBe(0);
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.runIf(process.platform === 'linux')('dumbwaiter service (systemd)', () => {
  it('--dry-run prints the unit and what it would run, and touches nothing', () => {
    fakeSystemctl();
    const r = dw(['service', 'install', '--dry-run', '--home', home]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`Would write ${unitFile}:`);
    expect(r.stdout).toContain(`ExecStart="${process.execPath}" "${path.resolve('bin/dumbwaiter.js')}" "daemon" "--home" `);
    expect(r.stdout).toContain(`Then: systemctl --user daemon-reload; systemctl --user enable --now ${serviceName(home)}.service`);
    expect(readdirSync(userHome)).toEqual([]);
    expect(recorded()).toEqual([]);
  });

  it('install writes the unit and enables it; uninstall disables and removes it', () => {
    fakeSystemctl();
    const r = dw(['service', 'install', '--home', home]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readFileSync(unitFile, 'utf8')).toContain('\nRestart=on-failure\n');
    expect(recorded()).toEqual(['--user daemon-reload', `--user enable --now ${serviceName(home)}.service`]);

    rmSync(calls);
    const u = dw(['service', 'uninstall', '--home', home]);
    expect(u.status).toBe(0);
    expect(existsSync(unitFile)).toBe(false);
    expect(recorded()).toEqual([`--user disable --now ${serviceName(home)}.service`, '--user daemon-reload']);
  });

  it('install says when a daemon already runs for the home, which the service then takes over from', () => {
    fakeSystemctl();
    const paths = homePaths(home);
    const lock = acquireHomeLock(paths.lock, paths.lockInfo, 'the Dumbwaiter desktop app');
    try {
      const r = dw(['service', 'install', '--home', home]);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/A daemon already runs for this home \(pid \d+ .*\(the Dumbwaiter desktop app\)\): the service's starts when that one stops/);
      const s = dw(['service', 'status', '--home', home]);
      expect(s.stdout).toMatch(/Daemon: +runs for .*the Dumbwaiter desktop app/);
    } finally {
      lock.release();
    }
    expect(dw(['service', 'uninstall', '--home', home]).status).toBe(0);
  });

  it('status asks systemctl whether the unit is enabled and running', () => {
    fakeSystemctl('case "$2" in is-enabled) echo enabled;; is-active) echo active;; esac');
    expect(dw(['service', 'install', '--home', home]).status).toBe(0);
    const r = dw(['service', 'status', '--home', home]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`Installed: ${unitFile}`);
    expect(r.stdout).toMatch(/Enabled: +enabled\nRunning: +yes\n/);
    expect(r.stdout).toContain('Daemon:    none runs for');
    expect(dw(['service', 'uninstall', '--home', home]).status).toBe(0);
  });

  it('says in one line when there is no user service manager to enable the unit', () => {
    fakeSystemctl('echo "Failed to connect to bus: No medium found" >&2; exit 1');
    const r = dw(['service', 'install', '--home', home]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`dumbwaiter service: wrote ${unitFile}, but \`systemctl --user daemon-reload\` failed: Failed to connect to bus: No medium found\n`);
    const s = dw(['service', 'status', '--home', home]);
    expect(s.status).toBe(0);
    expect(s.stdout).toContain('Running:   unknown: systemctl --user cannot reach a user service manager here (Failed to connect to bus: No medium found)');
    rmSync(unitFile);
  });

  it('status says in one line that systemctl is absent, without a stack trace', () => {
    rmSync(path.join(fakeBin, 'systemctl'));
    const r = dw(['service', 'status', '--home', home]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('systemctl is not on this machine: it cannot say whether');
    const i = dw(['service', 'install', '--home', home]);
    expect(i.status).toBe(1);
    expect(i.stderr).toMatch(/^dumbwaiter service: wrote .*, but systemctl is not on this machine: nothing enabled it \(run `systemctl --user daemon-reload` where it is\)\n$/);
    const u = dw(['service', 'uninstall', '--home', home]);
    expect(u.status).toBe(0);
    expect(u.stdout).toContain('did not succeed (systemctl is not on this machine)');
    expect(existsSync(unitFile)).toBe(false);
  });

  it('refuses a home that was never made, and --spool, in one line', () => {
    fakeSystemctl();
    const r = dw(['service', 'install', '--home', path.join(scratch, 'nowhere')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^dumbwaiter service: .*nowhere is not a Dumbwaiter home yet: run `dumbwaiter init --home \.\.\.` first\n$/);
    expect(dw(['service', 'install', '--home', home, '--spool', 'default']).status).toBe(2);
    expect(dw(['service', 'restart', '--home', home]).stderr).toContain('usage: dumbwaiter service install|uninstall|status');
  });
});
