#!/usr/bin/env node
// `npm start`: builds and opens the desktop app. Where Electron's binary is missing (installed with
// ELECTRON_SKIP_BINARY_DOWNLOAD=1, as on build machines), it says so and runs the headless host instead.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = (args) => spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' }).status ?? 1;

let electron = null;
try {
  electron = createRequire(import.meta.url)('electron'); // the path of Electron's binary
} catch {
  /* not installed */
}

if (typeof electron === 'string' && existsSync(electron)) {
  const built = run(['--import', 'tsx', 'scripts/build-app.ts']);
  if (built !== 0) process.exit(built);
  const app = spawn(electron, ['.'], { cwd: root, stdio: 'inherit' });
  app.on('exit', (code) => process.exit(code ?? 0));
} else {
  console.error('Electron is not installed here (was it installed with ELECTRON_SKIP_BINARY_DOWNLOAD=1?): running the headless host.');
  const init = run(['bin/dumbwaiter.js', 'init']);
  if (init !== 0) process.exit(init);
  process.exit(run(['bin/dumbwaiter.js', 'daemon']));
}
