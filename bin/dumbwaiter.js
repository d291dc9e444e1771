#!/usr/bin/env node
// The headless host's command line: runs the bundle (dist/host/cli.mjs) that `npm install` and `npm run
// build` make, with plain Node. In a checkout, a bundle older than one of its sources is rebuilt first.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';

// The daemon keeps V8's young generation at its first size (main/core/daemon/memory.ts, which sets
// this and more once the bundle runs): set here too, as loading the bundle would already have doubled
// it, 2 MiB that a daemon then holds while it idles.
// The command is the first word that is not an option or --home's or --spool's value (main/cli/args.ts).
const command = process.argv.slice(2).find((a, i, all) => !a.startsWith('-') && !['--home', '--spool'].includes(all[i - 1]));
if (command === 'daemon') v8.setFlagsFromString('--semi-space-growth-factor=1');

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundle = path.join(root, 'dist', 'host', 'cli.mjs');

/** A checkout (its sources are here, unlike an installed package's) whose bundle is missing or older
 *  than a source it was built from. */
function stale() {
  if (!existsSync(path.join(root, 'main'))) return false;
  let inputs;
  try {
    inputs = JSON.parse(readFileSync(path.join(root, 'dist', 'host', 'inputs.json'), 'utf8'));
  } catch {
    return true;
  }
  const built = statSync(bundle, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return inputs.some((f) => (statSync(path.join(root, f), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) > built);
}

if (stale()) {
  const { buildHost } = await import('../scripts/build-host.mjs');
  await buildHost();
}
await import(pathToFileURL(bundle).href);
