// The desktop app's first start: a home in the app's data folder with the example allowlist, and a
// spool in ~/Dumbwaiter/spool. Later starts find both in place and change nothing.
import { existsSync } from 'node:fs';
import { homePaths } from '../home';
import { initHome, type InitResult } from '../setup';

export function firstRunSetup(homeDir: string, defaultSpool: string): InitResult & { firstRun: boolean } {
  const firstRun = !existsSync(homePaths(homeDir).settings);
  return { ...initHome(homeDir, undefined, defaultSpool), firstRun };
}
