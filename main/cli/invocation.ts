// How the user can type this command again: `dumbwaiter` where one is on PATH (a global install),
// else through npx (a checkout or a project's local install, where the bare name is not found). A
// project's node_modules/.bin does not count: npm puts it on PATH only for what it runs (npx, scripts).
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export function commandName(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const names = platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').map((ext) => `dumbwaiter${ext.toLowerCase()}`) : ['dumbwaiter'];
  const runByNpm = (dir: string) => path.basename(dir) === '.bin' && path.basename(path.dirname(dir)) === 'node_modules';
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter((d) => d && !runByNpm(d))) {
    for (const name of names) {
      const file = path.join(dir, name);
      try {
        if (!statSync(file).isFile()) continue;
        if (platform !== 'win32') accessSync(file, constants.X_OK);
        return 'dumbwaiter';
      } catch {
        /* not here */
      }
    }
  }
  return 'npx dumbwaiter';
}
