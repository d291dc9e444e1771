// The sandbox-side clients the host places in the spool's bin/ folder: dw.cjs (one bundled file for
// Node 18+) and dw.py (standard library only), both built into dist/sandbox/ with the host
// (scripts/build-host.mjs), and the guide for the agent. The host only writes them (atomically); it never
// executes anything from the spool.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from './fs/atomicWrite';
import { isHostMadeSpool, type SpoolPaths } from './spool/layout';
import { UserError } from './errors';
import { agentGuide } from './spool/agentGuide';
import type { CatalogDoc } from '../../shared/protocol/types';

const BUILT = fileURLToPath(new URL('../../dist/sandbox/', import.meta.url));

/** dist/sandbox/<name>, which the host's build made (at `npm install`, `npm run build`, in the app). */
export function sandboxClient(name: 'dw.cjs' | 'dw.py'): string {
  const file = path.join(BUILT, name);
  if (!existsSync(file)) throw new UserError(`the sandbox clients are not built (${file} is missing): run \`npm run build\``);
  return file;
}

/** The spool's bin/, where the host may write: bin/ of a folder the host did not make a spool may be
 *  someone's own, never overwritten. Each file is replaced by rename, so a link the sandbox planted at
 *  its name is replaced, never followed. */
function hostBin(spool: SpoolPaths): string {
  if (!isHostMadeSpool(spool.root)) throw new UserError(`${spool.root} was not made a spool by Dumbwaiter: its bin/ is left alone`);
  return spool.bin;
}

export function placeSandboxClients(spool: SpoolPaths): void {
  const bin = hostBin(spool);
  for (const name of ['dw.cjs', 'dw.py'] as const) writeFileAtomic(path.join(bin, name), readFileSync(sandboxClient(name)), 0o755);
}

/** bin/AGENTS.md and bin/SKILL.md, from the catalog the host publishes with them. */
export function placeAgentGuide(spool: SpoolPaths, catalog: CatalogDoc): void {
  const bin = hostBin(spool);
  const guide = agentGuide(catalog);
  writeFileAtomic(path.join(bin, 'AGENTS.md'), guide.agents, 0o644);
  writeFileAtomic(path.join(bin, 'SKILL.md'), guide.skill, 0o644);
}
