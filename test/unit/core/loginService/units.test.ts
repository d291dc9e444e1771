// The service units as text: every path reaches the daemon exactly as it is, whatever it holds (spaces,
// quotes, systemd's `%` specifiers and `$` variables, XML's markup), checked by systemd itself where it
// is installed and by a real XML plist parser.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { daemonArgv, launchdLabel, launchdPlist, serviceName, systemdUnit, windowsTask, type DaemonCommand } from '../../../../main/core/loginService/units';

const plist = createRequire(import.meta.url)('plist') as { parse(xml: string): unknown };

const scratch = mkdtempSync(path.join(os.tmpdir(), 'dw-units-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A folder whose name holds everything the formats treat specially. */
const odd = path.join(scratch, `my "home" it's 100% $HOME \\ <&> ${'${x}'}`);
mkdirSync(odd);
const command = (over: Partial<DaemonCommand> = {}): DaemonCommand => ({ node: process.execPath, entry: '/opt/dw/bin/dumbwaiter.js', home: odd, path: '/usr/bin:/bin', ...over });

const hasAnalyze = spawnSync('sh', ['-c', 'command -v systemd-analyze']).status === 0;

describe('systemdUnit', () => {
  it('quotes each word, doubling % and $ and escaping quotes and backslashes', () => {
    const unit = systemdUnit(command());
    const home = odd.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('%', '%%').replaceAll('$', () => '$$');
    expect(unit).toContain(`\nExecStart="${process.execPath}" "/opt/dw/bin/dumbwaiter.js" "daemon" "--home" "${home}"\n`);
    expect(unit).toContain('\nEnvironment="PATH=/usr/bin:/bin"\n');
    expect(unit).toMatch(/\nRestart=on-failure\n/);
    expect(unit).toMatch(/\nKillSignal=SIGTERM\n/);
    expect(unit).toMatch(/\nWantedBy=default.target\n/);
  });

  it('refuses a path with a line feed, which would start a directive of its own', () => {
    expect(() => systemdUnit(command({ home: '/tmp/x\nExecStartPre=/bin/rm -rf ~' }))).toThrow(/control character/);
    expect(() => launchdPlist(command({ home: '/tmp/x\u0007' }))).toThrow(/control character/);
  });

  it('refuses a Node whose path has a quote or a backslash, which systemd refuses as a program name', () => {
    expect(() => systemdUnit(command({ node: path.join(odd, 'node') }))).toThrow(/quote or a backslash/);
  });

  // systemd-analyze verify checks that ExecStart's program exists: run from a folder named with the
  // characters systemd takes in a program's name (spaces, %, $, markup), Node is found only if systemd
  // reads the word back exactly as it was.
  it.runIf(hasAnalyze)('is accepted by systemd-analyze verify, which finds the program under an odd path', () => {
    const dir = path.join(scratch, 'node 100%n $HOME ${x} <&>'); // %n: the unit's name, unless escaped
    mkdirSync(dir);
    const node = path.join(dir, 'node');
    symlinkSync(process.execPath, node);
    const file = path.join(scratch, `${serviceName(odd)}.service`);
    writeFileSync(file, systemdUnit(command({ node, entry: node })));
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    // And the check has teeth: the same unit naming a program that is not there is refused.
    writeFileSync(file, systemdUnit(command({ node: `${node}-gone` })));
    expect(spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' }).stderr).toMatch(/not executable/);
  });

  it.skipIf(hasAnalyze)('systemd-analyze is not on this machine (no systemd): the unit was checked as text only', () => {});
});

describe('launchdPlist', () => {
  it('is well-formed XML whose ProgramArguments are the daemon argv exactly', () => {
    const xml = launchdPlist(command());
    const errors: string[] = [];
    new DOMParser({ errorHandler: (level: string, m: string) => errors.push(`${level}: ${m}`) }).parseFromString(xml, 'text/xml');
    expect(errors).toEqual([]);
    const doc = plist.parse(xml) as Record<string, unknown>;
    expect(doc).toEqual({
      Label: launchdLabel(odd),
      ProgramArguments: daemonArgv(command()),
      EnvironmentVariables: { PATH: '/usr/bin:/bin' },
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      ThrottleInterval: 10,
    });
  });
});

describe('windowsTask', () => {
  it('starts the daemon at logon, quoting the words with spaces', () => {
    const t = windowsTask(command({ node: 'C:\\Program Files\\nodejs\\node.exe', entry: 'C:\\dw\\bin\\dumbwaiter.js', home: 'C:\\Users\\me\\Dumbwaiter home\\' }));
    expect(t.command).toBe('"C:\\Program Files\\nodejs\\node.exe" C:\\dw\\bin\\dumbwaiter.js daemon --home "C:\\Users\\me\\Dumbwaiter home\\\\"');
    expect(t.create).toEqual(['/Create', '/TN', t.name, '/SC', 'ONLOGON', '/TR', t.command, '/RL', 'LIMITED', '/F']);
  });
});

describe('serviceName', () => {
  it('is one per home, the same each time', () => {
    expect(serviceName('/a/home')).toBe(serviceName('/a/home'));
    expect(serviceName('/a/home')).not.toBe(serviceName('/b/home'));
    expect(serviceName(odd)).toMatch(/^dumbwaiter-[0-9a-f]{12}$/);
  });
});
