// The home's spools: one folder per sandbox, named in settings.json. Which one a command or the daemon
// acts on (`--spool NAME|DIR`), and the rules a new one must meet (its own folder, apart from the
// others and from the home: a sandbox must never reach another's files or the host's secrets).
import path from 'node:path';
import { UserError } from '../errors';
import { isInside } from '../allowlist/pathArg';
import type { Settings, SpoolEntry } from '../settings';
import { DEFAULT_SPOOL, SPOOL_NAME, SPOOL_NAME_RULE } from '../../../shared/protocol/ids';

/** The spool `nameOrDir` means: a spool's name, or the folder of one (as written, or resolved). */
export function findSpool(settings: Settings, nameOrDir: string): SpoolEntry | null {
  const byName = settings.spools.find((s) => s.name === nameOrDir);
  if (byName) return byName;
  const abs = path.resolve(nameOrDir);
  return settings.spools.find((s) => path.resolve(s.dir) === abs) ?? null;
}

/** Like findSpool, or a UserError that lists the spools there are. */
export function resolveSpool(settings: Settings, nameOrDir: string): SpoolEntry {
  const s = findSpool(settings, nameOrDir);
  if (s) return s;
  const known = settings.spools.map((x) => `${x.name} (${x.dir})`).join(', ') || 'none yet';
  const looksLikeDir = nameOrDir.includes('/') || nameOrDir.includes(path.sep);
  throw new UserError(
    `no spool ${looksLikeDir ? `at ${path.resolve(nameOrDir)}` : `named "${nameOrDir}"`} in this home (spools: ${known}).` +
      (looksLikeDir ? ` Add it with: dumbwaiter spools add NAME '${path.resolve(nameOrDir)}'` : ''),
  );
}

/** The spools a process acts on: the one `--spool` names, else every spool of the home. */
export function selectSpools(settings: Settings, flag: string | undefined): SpoolEntry[] {
  return flag === undefined ? settings.spools : [resolveSpool(settings, flag)];
}

/** The spool a command acts on when one is needed: `--spool`, else `default`, else the only one. */
export function spoolForCommand(settings: Settings, flag: string | undefined): SpoolEntry | null {
  if (flag !== undefined) return resolveSpool(settings, flag);
  return settings.spools.find((s) => s.name === DEFAULT_SPOOL) ?? (settings.spools.length === 1 ? settings.spools[0]! : null);
}

/** Why `dir` cannot be added as spool `name` to this home, or null. Looks at names and folders only
 *  (spoolRefusal in spool/layout.ts looks at what is in the folder). */
export function newSpoolProblem(settings: Settings, homeRoot: string, name: string, dir: string): string | null {
  if (!SPOOL_NAME.test(name)) return `"${name}" is not a spool name: ${SPOOL_NAME_RULE}`;
  if (!path.isAbsolute(dir)) return `${dir} is a relative path: give the spool folder's full path`;
  const abs = path.resolve(dir);
  if (isInside(homeRoot, abs) || isInside(abs, homeRoot)) return `the spool (${abs}) and the home (${homeRoot}) must not contain each other: the home holds secrets`;
  for (const s of settings.spools) {
    if (s.name === name) continue; // the same spool (init moving `default`) is checked by the caller
    const other = path.resolve(s.dir);
    // Each sandbox sees only its own spool: one inside another would let one read the other's results.
    if (isInside(other, abs) || isInside(abs, other)) return `${abs} ${abs === other ? 'is' : 'overlaps'} the folder of spool "${s.name}" (${other}): each sandbox needs a folder of its own`;
  }
  return null;
}

/** `settings` with spool `name` at `dir` (added, or moved when it exists). */
export function withSpool(settings: Settings, name: string, dir: string): Settings {
  const entry = { name, dir: path.resolve(dir) };
  const i = settings.spools.findIndex((s) => s.name === name);
  const spools = i < 0 ? [...settings.spools, entry] : settings.spools.map((s, j) => (j === i ? entry : s));
  return { ...settings, spools };
}

export function withoutSpool(settings: Settings, name: string): Settings {
  return { ...settings, spools: settings.spools.filter((s) => s.name !== name) };
}
