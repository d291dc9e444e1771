// Which Chromium the renderer's tests drive, in this order: $CHROMIUM_PATH; a Chromium or Chrome
// installed on this machine; else the headless Chromium that @sparticuz/chromium ships inside its npm
// tarball (Linux x64 only), unpacked once into node_modules/.cache. Nothing is downloaded from anywhere.
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';

export interface TestBrowser {
  executablePath: string;
  /** Extra environment for the browser process (fonts and libraries of the npm Chromium). */
  env: Record<string, string>;
}

const ROOT = path.resolve(import.meta.dirname, '../..');

const INSTALLED: Partial<Record<NodeJS.Platform, string[]>> = {
  // chromium-browser last: on Ubuntu it is a wrapper that may only offer to install the snap.
  linux: ['/usr/bin/chromium', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable', '/usr/bin/chromium-browser'],
  darwin: ['/Applications/Google Chrome.app/Contents/MacOS/Google Chrome', '/Applications/Chromium.app/Contents/MacOS/Chromium'],
  win32: [
    'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
    'C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe',
    ...(process.env.LOCALAPPDATA ? [path.join(process.env.LOCALAPPDATA, 'Google', 'Chrome', 'Application', 'chrome.exe')] : []),
  ],
};

let found: Promise<TestBrowser> | null = null;

export function testBrowser(): Promise<TestBrowser> {
  found ??= locate();
  return found;
}

async function locate(): Promise<TestBrowser> {
  const chosen = process.env.CHROMIUM_PATH;
  if (chosen) {
    if (!existsSync(chosen)) throw new Error(`CHROMIUM_PATH is ${chosen}, which does not exist`);
    return { executablePath: chosen, env: {} };
  }
  const installed = (INSTALLED[process.platform] ?? []).find((p) => existsSync(p));
  if (installed) return { executablePath: installed, env: {} };
  if (process.platform === 'linux' && process.arch === 'x64') return unpackNpmChromium();
  throw new Error(
    `No Chromium or Chrome found for the renderer's tests (looked at ${(INSTALLED[process.platform] ?? []).join(', ') || 'nothing on this platform'}). ` +
      'Install Google Chrome or Chromium, or set CHROMIUM_PATH to its executable.',
  );
}

/** Unpacks @sparticuz/chromium's browser, fonts and libraries into a cache folder named for its version.
 *  It is unpacked into a fresh folder and renamed into place, so an interrupted or concurrent unpack
 *  never leaves a half-written browser where the next run would use it. */
async function unpackNpmChromium(): Promise<TestBrowser> {
  const req = createRequire(import.meta.url);
  const pkgRoot = path.resolve(path.dirname(req.resolve('@sparticuz/chromium')), '..', '..');
  const version = (JSON.parse(readFileSync(path.join(pkgRoot, 'package.json'), 'utf8')) as { version: string }).version;
  const cache = path.join(ROOT, 'node_modules', '.cache');
  const dir = path.join(cache, `dumbwaiter-chromium-${version}`);
  if (!existsSync(path.join(dir, 'fonts.conf'))) {
    mkdirSync(cache, { recursive: true });
    clearAbandonedUnpacks(cache);
    const staging = mkdtempSync(path.join(cache, '.chromium-'));
    try {
      const bin = (f: string) => createReadStream(path.join(pkgRoot, 'bin', f));
      // tar-fs is the package's own dependency: resolved from the package, as it resolves it.
      const { extract } = createRequire(path.join(pkgRoot, 'package.json'))('tar-fs') as { extract: (dir: string) => NodeJS.WritableStream };
      await Promise.all([
        pipeline(bin('chromium.br'), createBrotliDecompress(), createWriteStream(path.join(staging, 'chromium'), { mode: 0o755 })),
        pipeline(bin('fonts.tar.br'), createBrotliDecompress(), extract(staging)), // fonts/Open_Sans/*.ttf
        pipeline(bin('al2023.tar.br'), createBrotliDecompress(), extract(staging)), // lib/: NSS and expat
      ]);
      // The package's fonts.conf names Lambda's folders: ours adds its fonts to the system's, if any.
      writeFileSync(
        path.join(staging, 'fonts.conf'),
        `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
          `  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n` +
          `  <dir>${path.join(dir, 'fonts')}</dir>\n  <cachedir>${path.join(dir, 'fontconfig-cache')}</cachedir>\n</fontconfig>\n`,
      );
      renameSync(staging, dir);
    } catch (e) {
      rmSync(staging, { recursive: true, force: true });
      // Another worker renamed its unpack into place first: use that one.
      if (!existsSync(path.join(dir, 'fonts.conf'))) throw e;
    }
  }
  const executablePath = path.join(dir, 'chromium');
  const env: Record<string, string> = { FONTCONFIG_FILE: path.join(dir, 'fonts.conf') };
  // NSS and expat come from the system where it has them, else from the package's copies.
  const ldd = spawnSync('ldd', [executablePath], { encoding: 'utf8' });
  if (ldd.status !== 0 || ldd.stdout.includes('not found')) env.LD_LIBRARY_PATH = [path.join(dir, 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  return { executablePath, env };
}

/** An unpack takes seconds: a staging folder much older was left by one that was interrupted. */
function clearAbandonedUnpacks(cache: string): void {
  for (const name of readdirSync(cache).filter((n) => n.startsWith('.chromium-'))) {
    const dir = path.join(cache, name);
    if (Date.now() - statSync(dir).mtimeMs > 10 * 60_000) rmSync(dir, { recursive: true, force: true });
  }
}
