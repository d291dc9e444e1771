// What-if for bench/profile.ts (never used by `npm run bench`): the same command line bundled into one
// CommonJS file with esbuild, run by plain node, so no tsx (and no TypeScript transform) at run time.
// The core is unchanged; import.meta.url is pointed at main/core/ so that it finds package.json and
// the sandbox clients where the sources are. Written to a temporary folder; run with NODE_PATH set.
import { buildSync } from 'esbuild';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '../..');

export function bundleCli(): { script: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-bench-bundle-'));
  const script = path.join(dir, 'dumbwaiter.cjs');
  buildSync({
    stdin: {
      contents: `import { main } from ${JSON.stringify(path.join(ROOT, 'main/cli/main.ts'))};\nmain(process.argv.slice(2)).then((code) => { process.exitCode = code; });`,
      resolveDir: ROOT,
      loader: 'ts',
    },
    outfile: script,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['electron', 'better-sqlite3', 'esbuild'],
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(path.join(ROOT, 'main/core/bundle.js')).href) },
    logLevel: 'error',
  });
  return { script, env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') } };
}
