// `dumbwaiter init`: the home (private) and the spool (shared), both created safely and idempotently.
import { existsSync, lstatSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { homePaths, type HomePaths } from './home';
import { createSpool, isHostMadeSpool, type SpoolPaths } from './spool/layout';
import { homeAsOwner, readSpoolOwner } from './spool/marker';
import { readSettings, writeSettings, type Settings } from './settings';
import { DEFAULT_SPOOL } from '../../shared/protocol/ids';
import { findSpool, newSpoolProblem, withSpool } from './spool/registry';
import { folderCreationProblem, spoolAllowlistProblem, spoolParentProblem } from './spool/folderChecks';
import { HostCore } from './hostCore';
import { writeFileAtomic } from './fs/atomicWrite';
import { chmodPrivateDir, mkdirPrivate } from './fs/privateDir';
import { exampleAllowlistFor } from './allowlist/example';
import { UserError } from './errors';
import { placeSandboxClients } from './sandboxClients';

export interface InitResult {
  home: HomePaths;
  /** The spool's name in this home, and its folder. */
  name: string;
  spool: SpoolPaths;
  settings: Settings;
  created: string[];
  /** The spool named no home (an earlier version made it): this one took it. */
  adopted: boolean;
}

/** A folder of the home: created private, or checked to be ours and made private (it holds key secrets). */
function ensureHomeDir(dir: string, created: string[]): void {
  if (!existsSync(dir)) {
    mkdirPrivate(dir, true);
    created.push(dir);
    return;
  }
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new UserError(`${dir} exists and is not a folder`);
  if ((st.mode & 0o077) !== 0) chmodPrivateDir(dir); // checks the owner too
  else if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new UserError(`${dir} is not owned by you`);
}

/**
 * The home, and spool `spoolName` (by default `default`) at `spoolFlag` (a folder, or the name of a spool
 * of this home), else where it already is, else at `defaultSpool`. A folder for an existing spool moves it.
 * The spool's folder is made, not the folders above it: those only with `parents`, or for the default
 * place (Dumbwaiter's own ~/Dumbwaiter at a first start).
 */
export function initHome(homeDir: string, spoolFlag: string | undefined, defaultSpool: string, spoolName = DEFAULT_SPOOL, opts: { parents?: boolean } = {}): InitResult {
  const home = homePaths(path.resolve(homeDir));
  const created: string[] = [];
  ensureHomeDir(home.root, created);
  ensureHomeDir(home.logs, created);

  let settings = readSettings(home.settings);
  const named = spoolFlag === undefined ? null : findSpool(settings, spoolFlag);
  if (named) spoolName = named.name;
  const configured = named?.dir ?? spoolFlag ?? settings.spools.find((s) => s.name === spoolName)?.dir;
  const spoolDir = path.resolve(configured ?? defaultSpool);
  const problem =
    newSpoolProblem(settings, home.root, spoolName, spoolDir) ??
    spoolParentProblem(spoolDir, opts.parents === true || configured === undefined) ??
    spoolAllowlistProblem(settings, home, spoolName, spoolDir);
  if (problem) throw new UserError(problem);
  const adopted = isHostMadeSpool(spoolDir) && readSpoolOwner(spoolDir) === null;
  let spool: SpoolPaths;
  try {
    spool = createSpool(spoolDir, homeAsOwner(home.root, settings)); // refused when another home serves it
  } catch (e) {
    const said = folderCreationProblem(e);
    throw said ? new UserError(said) : e;
  }
  if (!existsSync(home.settings) || settings.spools.find((s) => s.name === spoolName)?.dir !== spoolDir) {
    settings = withSpool(settings, spoolName, spoolDir);
    writeSettings(home.settings, settings);
    created.push(home.settings);
  }
  if (!existsSync(home.allowlist)) {
    writeFileAtomic(home.allowlist, exampleAllowlistFor(os.homedir()));
    created.push(home.allowlist);
  }
  if (!existsSync(home.ledger)) created.push(home.ledger);
  HostCore.open(home.root).close(); // the ledger made (or brought up to date) as every face opens it
  placeSandboxClients(spool);
  return { home, name: spoolName, spool, settings, created, adopted };
}
