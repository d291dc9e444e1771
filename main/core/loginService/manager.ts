// `dumbwaiter service install|uninstall|status`: writes the unit of loginService/units.ts where the
// platform's service manager looks for it and asks that manager (systemctl, launchctl, schtasks) to
// enable, start, stop or describe it. A manager that is absent or cannot be reached (a container with
// no user systemd bus) is said in one line, never a stack trace.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { writeFileAtomic } from '../fs/atomicWrite';
import { UserError } from '../errors';
import { homePaths } from '../home';
import { describeHolder, isLocked, readHolder } from '../daemon/lock';
import { launchdLabel, launchdPlist, serviceName, systemdUnit, windowsTask, type DaemonCommand } from './units';

export type ServiceKind = 'systemd' | 'launchd' | 'schtasks';

export function serviceKind(platform: NodeJS.Platform = process.platform): ServiceKind {
  if (platform === 'darwin') return 'launchd';
  if (platform === 'win32') return 'schtasks';
  if (platform === 'linux') return 'systemd';
  throw new UserError(`no service can be made on ${platform}: run \`dumbwaiter daemon\` from your own start-up script`);
}

/** What install writes and runs, and what uninstall runs, for one home on one platform. */
export interface ServicePlan {
  kind: ServiceKind;
  /** The unit's name for its manager (systemd unit, launchd label, task name). */
  name: string;
  /** Where the unit file goes (null: a scheduled task has none). */
  file: string | null;
  content: string;
  install: string[][];
  uninstall: string[][];
}

export function servicePlan(c: DaemonCommand, kind: ServiceKind, env: NodeJS.ProcessEnv = process.env): ServicePlan {
  const home = os.homedir();
  switch (kind) {
    case 'systemd': {
      const name = `${serviceName(c.home)}.service`;
      const dir = path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'systemd', 'user');
      return {
        kind, name, file: path.join(dir, name), content: systemdUnit(c),
        install: [['systemctl', '--user', 'daemon-reload'], ['systemctl', '--user', 'enable', '--now', name]],
        uninstall: [['systemctl', '--user', 'disable', '--now', name]],
      };
    }
    case 'launchd': {
      const name = launchdLabel(c.home);
      const file = path.join(home, 'Library', 'LaunchAgents', `${name}.plist`);
      const domain = `gui/${os.userInfo().uid}`;
      return { kind, name, file, content: launchdPlist(c), install: [['launchctl', 'bootstrap', domain, file]], uninstall: [['launchctl', 'bootout', `${domain}/${name}`]] };
    }
    case 'schtasks': {
      const task = windowsTask(c);
      return { kind, name: task.name, file: null, content: task.command, install: [['schtasks', ...task.create]], uninstall: [['schtasks', '/Delete', '/TN', task.name, '/F']] };
    }
  }
}

interface Ran {
  ok: boolean;
  missing: boolean;
  out: string;
  /** Its first line of complaint, for a one-line message. */
  why: string;
}

function run(argv: string[]): Ran {
  const [cmd, ...args] = argv;
  const r = spawnSync(cmd!, args, { encoding: 'utf8', timeout: 30_000 });
  const missing = (r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
  const why = missing ? `${cmd} is not on this machine` : (r.stderr || r.stdout || r.error?.message || `exit ${r.status}`).trim().split('\n')[0]!;
  return { ok: r.status === 0, missing, out: (r.stdout ?? '').trim(), why };
}

const shown = (argv: string[]) => argv.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : JSON.stringify(w))).join(' ');

function runAll(plan: ServicePlan, steps: string[][], done: string): void {
  for (const step of steps) {
    const r = run(step);
    if (r.missing) throw new UserError(`${done}, but ${step[0]} is not on this machine: nothing enabled it (run \`${shown(step)}\` where it is)`);
    if (!r.ok) throw new UserError(`${done}, but \`${shown(step)}\` failed: ${r.why}`);
  }
}

export function installService(plan: ServicePlan, home: string): string[] {
  if (!existsSync(homePaths(home).allowlist)) throw new UserError(`${home} is not a Dumbwaiter home yet: run \`dumbwaiter init --home ...\` first`);
  if (plan.file) {
    mkdirSync(path.dirname(plan.file), { recursive: true, mode: 0o700 });
    writeFileAtomic(plan.file, plan.content, 0o644);
  }
  // launchd refuses to bootstrap a label it already has: a second install replaces the first.
  if (plan.kind === 'launchd') run(plan.uninstall[0]!);
  runAll(plan, plan.install, plan.file ? `wrote ${plan.file}` : 'the task was not created');
  const lines = [plan.file ? `Installed ${plan.file}` : `Created the scheduled task "${plan.name}"`, `Enabled and started ${plan.name}: it runs the daemon for ${home} at every login.`];
  const paths = homePaths(home);
  if (isLocked(paths.lock)) lines.push(`A daemon already runs for this home (${describeHolder(readHolder(paths.lockInfo))}): the service's starts when that one stops (it tries every 10 s).`);
  return lines;
}

export function uninstallService(plan: ServicePlan): string[] {
  const installed = plan.file ? existsSync(plan.file) : true;
  if (!installed) return [`No service for this home (${plan.file} is not there): nothing to do.`];
  const stops = plan.uninstall.map(run);
  const stopped = stops.every((r) => r.ok);
  if (plan.file) rmSync(plan.file, { force: true });
  if (plan.kind === 'systemd') run(['systemctl', '--user', 'daemon-reload']);
  const lines = [plan.file ? `Removed ${plan.file}` : `Deleted the scheduled task "${plan.name}"`];
  if (!stopped) lines.push(`${plan.uninstall.map(shown).join('; ')} did not succeed (${stops.find((r) => !r.ok)!.why}): a daemon it started may still run until logout.`);
  return lines;
}

/** Installed, enabled and running, as far as this machine can tell, and who holds the home's lock. */
export function serviceStatus(plan: ServicePlan, home: string): string[] {
  const lines: string[] = [];
  const installed = plan.file ? existsSync(plan.file) : null;
  if (installed !== null) lines.push(installed ? `Installed: ${plan.file}` : `Not installed (no ${plan.file}).`);
  const ask = (argv: string[]) => {
    const r = run(argv);
    if (r.missing) throw new UserError(`${argv[0]} is not on this machine: it cannot say whether ${plan.name} is enabled or running`);
    return r;
  };
  try {
    if (plan.kind === 'systemd') {
      // is-enabled reads the unit files; is-active needs the user manager, which a container or an
      // ssh session without a login may not have.
      const enabled = ask(['systemctl', '--user', 'is-enabled', plan.name]);
      const active = ask(['systemctl', '--user', 'is-active', plan.name]);
      lines.push(`Enabled:   ${enabled.out || 'no'}`);
      lines.push(active.out ? `Running:   ${active.out === 'active' ? 'yes' : `no (${active.out})`}` : `Running:   unknown: systemctl --user cannot reach a user service manager here (${active.why})`);
    } else if (plan.kind === 'launchd') {
      const r = ask(['launchctl', 'print', `gui/${os.userInfo().uid}/${plan.name}`]);
      lines.push(`Loaded:    ${r.ok ? 'yes' : 'no'}`, `Running:   ${/^\s*state = running/m.test(r.out) ? 'yes' : 'no'}`);
    } else {
      const r = ask(['schtasks', '/Query', '/TN', plan.name]);
      lines.push(r.ok ? `Installed: the scheduled task "${plan.name}"` : `Not installed (no scheduled task "${plan.name}").`);
    }
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    lines.push(e.message);
  }
  const paths = homePaths(home);
  lines.push(isLocked(paths.lock) ? `Daemon:    runs for ${home}: ${describeHolder(readHolder(paths.lockInfo))}` : `Daemon:    none runs for ${home}`);
  return lines;
}
