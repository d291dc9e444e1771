// Builds the desktop app into dist/: the main process (the core + the Electron layer), the sandboxed
// preload, the renderer pages, and the sandbox clients. esbuild only; Electron is not needed to build.
import { build } from 'esbuild';
import { copyFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSandboxClients, faultsOff } from './build-host.mjs';
import { generateIcons } from './icons';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The core finds package.json and its resources relative to its own file (import.meta.url), which a
 *  CommonJS bundle has not: its own file's URL stands in for it. */
const OWN_URL = {
  define: { 'import.meta.url': '__dumbwaiter_url' },
  banner: { js: "const __dumbwaiter_url = require('node:url').pathToFileURL(__filename).href;" },
};

export async function buildApp(outDir = path.join(ROOT, 'dist')): Promise<string[]> {
  const out = (...p: string[]) => path.join(outDir, ...p);
  await Promise.all([
    build({
      entryPoints: [path.join(ROOT, 'main/electron/main.ts')],
      outfile: out('main', 'index.cjs'),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      // Native or build-time modules stay outside the bundle (better-sqlite3 is unpacked from the archive).
      external: ['electron', 'better-sqlite3', 'esbuild'],
      ...OWN_URL,
      plugins: [faultsOff],
      logLevel: 'error',
    }),
    build({
      entryPoints: [path.join(ROOT, 'preload/index.ts')],
      outfile: out('preload', 'index.cjs'),
      bundle: true,
      // A sandboxed preload may require nothing but 'electron': everything else is bundled in.
      platform: 'browser',
      format: 'cjs',
      external: ['electron'],
      logLevel: 'error',
    }),
    buildRenderer(out('renderer')),
    buildSandboxClients(outDir),
  ]);
  generateIcons(path.join(ROOT, 'build', 'icons')); // the tray and packaging read them from build/icons
  return ['main/index.cjs', 'preload/index.cjs', 'renderer/main.js', 'renderer/main.css', 'renderer/approval.js', 'renderer/approval.css', 'renderer/index.html', 'renderer/approval.html', 'sandbox/dw.cjs', 'sandbox/dw.py'].map((f) => out(f));
}

/** The renderer's pages: React bundles (with the CSS they import) and the HTML that loads them. */
export async function buildRenderer(outDir: string, minify = true): Promise<void> {
  await build({
    entryPoints: RENDERER_PAGES.map((n) => path.join(ROOT, 'renderer', `${n}.tsx`)),
    outdir: outDir,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'chrome130',
    jsx: 'automatic',
    minify,
    sourcemap: minify ? false : 'inline',
    define: { 'process.env.NODE_ENV': JSON.stringify(minify ? 'production' : 'development') },
    logLevel: 'error',
  });
  for (const f of readdirSync(path.join(ROOT, 'renderer')).filter((n) => n.endsWith('.html'))) {
    copyFileSync(path.join(ROOT, 'renderer', f), path.join(outDir, f));
  }
}

const RENDERER_PAGES = ['main', 'approval'];

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = await buildApp(process.argv[2]);
  console.log(`built ${files.length} files into ${path.dirname(path.dirname(files[0]!))}`);
}
