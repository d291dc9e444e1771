// Builds the native spawner (native/src/spawn.c) at `npm install` where it can: Linux with a C
// compiler. Anywhere else, or when the build fails, it says so and exits 0: runs then start with Node's
// spawn (main/core/exec/nativeSpawn.ts), and the install goes on. node-gyp is npm's own (npm hands its
// path to scripts) or the one in node_modules; Node's headers are taken from beside this Node where they
// are installed (e.g. /usr/include/node), else node-gyp fetches them.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ADDON = path.join(HERE, 'build', 'Release', 'dw_spawn.node');

function say(line) {
  process.stderr.write(`dumbwaiter: ${line}\n`);
}

function nodeGyp() {
  const local = path.join(HERE, '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  for (const p of [process.env.npm_config_node_gyp, local]) if (p && existsSync(p)) return p;
  return null;
}

/** The prefix whose include/node holds this Node's headers, when they are installed beside it. */
function localNodedir() {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) ? prefix : null;
}

function build() {
  if (process.platform !== 'linux') return `not built on ${process.platform}: runs start with Node's spawn`;
  const gyp = nodeGyp();
  if (!gyp) return "not built (no node-gyp found): runs start with Node's spawn";
  const env = { ...process.env };
  const nodedir = env.npm_config_nodedir ?? localNodedir();
  if (nodedir) env.npm_config_nodedir = nodedir;
  const r = spawnSync(process.execPath, [gyp, 'rebuild'], { cwd: HERE, env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (r.status === 0 && existsSync(ADDON)) return `built ${path.relative(process.cwd(), ADDON)}: runs start with posix_spawn`;
  rmSync(ADDON, { force: true }); // a half-built addon must not be loaded
  const why = `${r.stderr ?? ''}${r.error?.message ?? ''}`.trim().split('\n').filter((l) => /error|not found/i.test(l)).slice(-3).join('; ');
  return `not built (${why || `node-gyp exited with ${r.status}`}; a C compiler, make and Python 3 build it): runs start with Node's spawn`;
}

say(`native spawner ${build()}`);
