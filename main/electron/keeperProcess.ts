// The app's run keeper (core/exec/keeperServe.ts): the app's own binary started again with
// KEEPER_FLAG, since it cannot run a script as plain Node (its runAsNode fuse is off) and an Electron
// utility process would end with the app, while the keeper must outlive it (runs left running at a
// quit are picked up at the next start). That process is the keeper and nothing else: no window, no
// tray, no single-instance lock.
import { app } from 'electron';
import type { KeeperCommand } from '../core/exec/keeper';
import { serveKeeper } from '../core/exec/keeperServe';

export const KEEPER_FLAG = '--dumbwaiter-keeper';

/** The app's binary with its own options, and its main script where it was given one (`electron .`
 *  from a checkout, or plain Node with the tests' Electron stand-in); a packaged app has none. */
export function appKeeper(): KeeperCommand {
  const script = process.versions.electron && !process.defaultApp ? [] : [process.argv[1]!];
  return { file: process.execPath, args: [...process.execArgv, ...script, KEEPER_FLAG] };
}

/** This process was started as the keeper: its arguments after the flag (the keeper's folder, and a version). */
export function keeperArgs(): string[] | null {
  const at = process.argv.indexOf(KEEPER_FLAG);
  return at < 0 ? null : process.argv.slice(at + 1);
}

export function serveAsKeeper([dir, version]: string[]): void {
  app.dock?.hide();
  process.stdout.on('error', () => {}); // the daemon that started it died before reading `ready`
  serveKeeper(dir!, version || undefined, (then) => process.stdout.write('ready\n', () => then?.()));
}
