// Where the host keeps its private state. Never inside the spool.
import os from 'node:os';
import path from 'node:path';

export const APP_NAME = 'Dumbwaiter';

/** The desktop app's data folder (what Electron's app.getPath('userData') gives for our product name). */
export function defaultHomeDir(): string {
  const home = os.homedir();
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Application Support', APP_NAME);
  if (process.platform === 'win32') return path.join(process.env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), APP_NAME);
  return path.join(process.env.XDG_CONFIG_HOME ?? path.join(home, '.config'), APP_NAME);
}

export function defaultSpoolDir(): string {
  return path.join(os.homedir(), APP_NAME, 'spool');
}

export function resolveHomeDir(flag?: string): string {
  return path.resolve(flag ?? process.env.DUMBWAITER_HOME ?? defaultHomeDir());
}

export interface HomePaths {
  root: string;
  allowlist: string;
  settings: string;
  ledger: string;
  lock: string;
  lockInfo: string;
  logs: string;
  lastGoodAllowlist: string;
  /** Touched by the command line and the app after a change the daemon must act on (wake.ts). */
  wake: string;
  /** The run keeper's folder: its socket, pid and the ends of runs no daemon has recorded yet (exec/keeperFiles.ts). */
  keeper: string;
}

export function homePaths(root: string): HomePaths {
  return {
    root,
    allowlist: path.join(root, 'allowlist.yaml'),
    settings: path.join(root, 'settings.json'),
    ledger: path.join(root, 'ledger.sqlite'),
    lock: path.join(root, 'daemon.lock'),
    lockInfo: path.join(root, 'daemon.json'),
    logs: path.join(root, 'logs'),
    lastGoodAllowlist: path.join(root, 'allowlist.last-good.yaml'),
    wake: path.join(root, 'wake'),
    keeper: path.join(root, 'keeper'),
  };
}

/** `~` and `~/x` as the user's home, for paths written in the allowlist or on the command line. */
export function expandTilde(p: string): string {
  if (p === '~') return os.homedir();
  if (p.startsWith('~/')) return path.join(os.homedir(), p.slice(2));
  return p;
}
