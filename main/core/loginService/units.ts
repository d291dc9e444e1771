// What starts a home's daemon at login, as text: a systemd user unit (Linux), a launchd agent (macOS), a
// scheduled task (Windows). Pure functions, so the text can be shown (`service install --dry-run`) and
// tested exactly as it is installed; loginService/manager.ts writes and enables it.
import { createHash } from 'node:crypto';
import { UserError } from '../errors';

/** The daemon to start: this Node, this install's CLI entry, this home, and the PATH its operations see. */
export interface DaemonCommand {
  node: string;
  entry: string;
  home: string;
  path: string | undefined;
}

/** One name per home, so that two homes get two services: `dumbwaiter-` and a digest of its path. */
export function serviceName(home: string): string {
  return `dumbwaiter-${createHash('sha256').update(home).digest('hex').slice(0, 12)}`;
}

export function daemonArgv(c: DaemonCommand): string[] {
  return [c.node, c.entry, 'daemon', '--home', c.home];
}

/** No unit format carries a control character (a line feed would start a directive of its own). */
function checked(what: string, value: string): string {
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(value)) throw new UserError(`${what} ${JSON.stringify(value)} has a control character: no service can name it`);
  return value;
}

/** One word of a systemd command line or assignment: double-quoted with C escapes, `%` (specifiers)
 *  and `$` (variable expansion) doubled, so the program gets exactly these characters. */
export function systemdWord(value: string, dollar = true): string {
  const escaped = value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('%', '%%');
  return `"${dollar ? escaped.replaceAll('$', '$$$$') : escaped}"`;
}

/** The daemon stops cleanly on SIGTERM (its runs get shutdown_grace_s, then are ended and recorded; or
 *  are left running, by runs_on_stop), so systemd signals it alone and kills nothing else
 *  (KillMode=process): the run keeper, and the runs it holds, outlive a stop or a restart of the unit. A start
 *  refused because the app already runs this home's daemon is a failure: retried every 10 s, the
 *  service takes over once the app quits. */
export function systemdUnit(c: DaemonCommand): string {
  // systemd expands variables in the arguments, not in the program's own name, and refuses a name
  // with a quote or a backslash however it is escaped.
  if (/["'\\]/.test(c.node)) throw new UserError(`systemd cannot start a program whose path has a quote or a backslash (${c.node}): run Node from another folder`);
  const exec = daemonArgv(c).map((w, i) => systemdWord(checked('the path', w), i > 0)).join(' ');
  return [
    '[Unit]',
    `Description=Dumbwaiter daemon for ${checked('the home', c.home).replaceAll('%', '%%')}`,
    'Documentation=https://github.com/dumbwaiter-dev/dumbwaiter#commands',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${exec}`,
    // Environment= expands specifiers but not variables: `$` stays as it is.
    ...(c.path ? [`Environment=${systemdWord(`PATH=${checked('PATH', c.path)}`, false)}`] : []),
    'Restart=on-failure',
    'RestartSec=10',
    'KillMode=process',
    'KillSignal=SIGTERM',
    'TimeoutStopSec=90',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

export function launchdLabel(home: string): string {
  return `dev.dumbwaiter.${serviceName(home)}`;
}

function xml(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** A launchd agent: started at login (RunAtLoad), started again 10 s after it fails (KeepAlive with
 *  SuccessfulExit false; ThrottleInterval), stopped by SIGTERM like the systemd unit. */
export function launchdPlist(c: DaemonCommand): string {
  const str = (v: string) => `<string>${xml(checked('the path', v))}</string>`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  ${str(launchdLabel(c.home))}`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...daemonArgv(c).map((w) => `    ${str(w)}`),
    '  </array>',
    ...(c.path ? ['  <key>EnvironmentVariables</key>', '  <dict>', '    <key>PATH</key>', `    ${str(c.path)}`, '  </dict>'] : []),
    '  <key>RunAtLoad</key>',
    '  <true/>',
    '  <key>KeepAlive</key>',
    '  <dict>',
    '    <key>SuccessfulExit</key>',
    '    <false/>',
    '  </dict>',
    '  <key>ThrottleInterval</key>',
    '  <integer>10</integer>',
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}

/** One word of a Windows command line (CommandLineToArgvW's rules; Windows paths hold no `"`). */
function windowsWord(value: string): string {
  if (value.includes('"')) throw new UserError(`${value} has a double quote: no scheduled task can name it`);
  return /[\s]/.test(value) || value === '' ? `"${value.replace(/(\\+)$/, '$1$1')}"` : value;
}

/** The scheduled task's command line (schtasks /TR) and the schtasks arguments that create it. */
export function windowsTask(c: DaemonCommand): { name: string; command: string; create: string[] } {
  const name = `Dumbwaiter ${serviceName(c.home)}`;
  const command = daemonArgv(c).map((w) => windowsWord(checked('the path', w))).join(' ');
  return { name, command, create: ['/Create', '/TN', name, '/SC', 'ONLOGON', '/TR', command, '/RL', 'LIMITED', '/F'] };
}
