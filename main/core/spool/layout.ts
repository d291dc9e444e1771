// The spool folder: creation with safe permissions, and the safety check made at start and before each scan.
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../errors';
import { mkdirParents, mkdirPrivate } from '../fs/privateDir';
import { isInside } from '../allowlist/pathArg';
import { SPOOL_MARKER, claimSpool, ownerRefusal, writeSpoolMarker, type SpoolOwner } from './marker';

export { SPOOL_MARKER };

export const SPOOL_DIRS = ['tmp', 'queue', 'claimed', 'results', 'inbox', 'quarantine', 'bin'] as const;
export type SpoolDir = (typeof SPOOL_DIRS)[number];

export interface SpoolPaths {
  root: string;
  tmp: string;
  queue: string;
  claimed: string;
  results: string;
  inbox: string;
  /** Host extension: where hostile or malformed files are moved out of the way. */
  quarantine: string;
  bin: string;
  hostJson: string;
  catalogJson: string;
}

export function spoolPaths(root: string): SpoolPaths {
  const p = (d: string) => path.join(root, d);
  return {
    root,
    tmp: p('tmp'),
    queue: p('queue'),
    claimed: p('claimed'),
    results: p('results'),
    inbox: p('inbox'),
    quarantine: p('quarantine'),
    bin: p('bin'),
    hostJson: p('host.json'),
    catalogJson: p('catalog.json'),
  };
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** Why `dir` is not a safe folder for the host to own, or null when it is. `access`: also that its
 *  owner (the host) may list, enter and write it, which anyone who can write the spool can take away. */
function unsafeReason(dir: string, st: Stats, access = true): string | null {
  if (st.isSymbolicLink()) {
    return `${dir} is a symbolic link. Use the real folder it points to, so that nobody can redirect it later.`;
  }
  if (!st.isDirectory()) return `${dir} is not a folder. Move it away or choose another spool.`;
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    return `${dir} is owned by uid ${st.uid}, not by you (uid ${process.getuid()}). Fix it with: chown $(id -u) '${dir}'`;
  }
  if (process.platform !== 'win32' && (st.mode & 0o022) !== 0) {
    return `${dir} can be written by other users (mode ${(st.mode & 0o777).toString(8)}). Fix it with: chmod 700 '${dir}'`;
  }
  if (access && process.platform !== 'win32' && (st.mode & 0o700) !== 0o700) {
    return `${dir} cannot be listed, entered and written by you (mode ${(st.mode & 0o777).toString(8)}). Fix it with: chmod 700 '${dir}'`;
  }
  return null;
}

/**
 * Throws a UserError saying what is wrong and how to fix it. `rootOnly`: only what a human set up,
 * the folder itself, and not whether it may be entered (what is inside, and its mode, anyone who can
 * write the spool can break; the daemon waits for those to be fixed instead of refusing to start).
 */
export function checkSpool(root: string, opts: { rootOnly?: boolean } = {}): SpoolPaths {
  const paths = spoolPaths(root);
  for (const dir of opts.rootOnly ? [root] : [root, ...SPOOL_DIRS.map((d) => paths[d])]) {
    let st: Stats | null;
    try {
      st = lstatOrNull(dir);
    } catch (e) {
      // EACCES: a folder above it may not be entered (the spool's own mode, say).
      const code = (e as NodeJS.ErrnoException).code ?? String(e);
      throw new UserError(`unusable spool: ${dir} cannot be looked at (${code}). Check the modes of the folders above it (chmod 700 '${path.dirname(dir)}')`);
    }
    if (!st) throw new UserError(`the spool is incomplete: ${dir} is missing. Run: dumbwaiter init --spool '${root}'`);
    const why = unsafeReason(dir, st, !opts.rootOnly);
    if (why) throw new UserError(`unsafe spool: ${why}`);
  }
  return paths;
}

/** A host-owned folder inside the spool: created 0700, or checked like the spool's own folders. */
export function ensurePrivateDir(dir: string): void {
  if (!checkPrivateDir(dir)) mkdirPrivate(dir);
}

/** Checks a host-owned folder inside the spool like the spool's own folders, without creating it:
 *  false when it is missing. */
export function checkPrivateDir(dir: string): boolean {
  const st = lstatOrNull(dir);
  if (!st) return false;
  const why = unsafeReason(dir, st);
  if (why) throw new UserError(`unsafe spool: ${why}`);
  return true;
}

/** Everything the host itself puts at a spool's top level. */
const HOST_ENTRIES = new Set<string>([...SPOOL_DIRS, SPOOL_MARKER, 'host.json', 'catalog.json']);
const HOST_CLIENTS = new Set(['dw.cjs', 'dw.py']);

/** Whether every entry of `dir` is one of `names`, or a leftover of the host's atomic write of one. */
function holdsOnly(dir: string, names: Set<string>): boolean {
  return readdirSync(dir).every((n) => names.has(n) || names.has(n.replace(/^\.(.+)\.\d+\.[0-9a-f]+\.tmp$/, '$1')));
}

/** A spool made by an earlier version (before the marker): all of the host's folders, its clients in
 *  bin/, and nothing else. Any other entry means someone else's folder. */
function isLegacySpool(root: string): boolean {
  return SPOOL_DIRS.every((d) => lstatOrNull(path.join(root, d))?.isDirectory()) && holdsOnly(root, HOST_ENTRIES) && holdsOnly(path.join(root, 'bin'), HOST_CLIENTS);
}

/** Whether the host made `root` a spool (its marker, or an earlier version's layout): only then does
 *  it write its clients into bin/ or delete anything there. */
export function isHostMadeSpool(root: string): boolean {
  try {
    return lstatOrNull(path.join(root, SPOOL_MARKER))?.isFile() === true || isLegacySpool(root);
  } catch {
    return false;
  }
}

const AGAIN = 'Choose a new or empty folder, e.g. ~/Dumbwaiter/spool.';

/** spoolRefusal's part that looks at the path alone (never at the disk): absolute, neither the root of
 *  the file system nor a folder holding the home. Its answer tells nothing of what exists there. */
export function spoolPlaceRefusal(root: string): string | null {
  if (!path.isAbsolute(root)) return `${root} is a relative path: give the spool folder's full path.`;
  if (path.parse(root).root === root) return `refusing to use ${root}, the root of the file system, as the spool. ${AGAIN}`;
  const home = os.homedir();
  if (isInside(root, home)) return `refusing to use ${root}, ${root === path.resolve(home) ? 'your home folder' : `a folder holding your home folder (${home})`}, as the spool. ${AGAIN}`;
  return null;
}

/** Why `root` cannot become a spool, or null when it can: it must be absolute, neither the root of the
 *  file system nor a folder holding the home, and either missing, empty or already a spool the host
 *  made (never one holding files the host did not write: it places its clients in bin/ and retention
 *  deletes in tmp/, queue/, results/...), and served by no home but `home` (spool/marker.ts). Looks
 *  only: nothing is created or changed. */
export function spoolRefusal(root: string, home?: SpoolOwner): string | null {
  const placed = spoolPlaceRefusal(root);
  if (placed) return placed;
  const st = lstatOrNull(root);
  if (!st) return null;
  const why = unsafeReason(root, st);
  if (why) return `refusing to use this spool: ${why}`;
  if (readdirSync(root).length > 0 && !isHostMadeSpool(root)) {
    return `refusing to use ${root} as the spool: it holds files Dumbwaiter did not create, and the host writes and deletes files in its spool. ${AGAIN}`;
  }
  return home ? ownerRefusal(root, home) : null;
}

/** Creates the spool (0700), its folders and its marker, where spoolRefusal allows it; the marker names
 *  `home` as the one that serves it (without one, as in tests, it names none). */
export function createSpool(root: string, home?: SpoolOwner): SpoolPaths {
  const refused = spoolRefusal(root, home);
  if (refused) throw new UserError(refused);
  const paths = spoolPaths(root);
  if (!lstatOrNull(root)) {
    mkdirParents(path.dirname(root));
    mkdirPrivate(root);
  }
  for (const d of SPOOL_DIRS) ensurePrivateDir(paths[d]);
  if (home) claimSpool(root, home);
  else if (!lstatOrNull(path.join(root, SPOOL_MARKER))) writeSpoolMarker(root, null);
  return paths;
}
