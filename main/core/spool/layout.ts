// The spool folder: creation with safe permissions, and the safety check made at start and before each scan.
import { chmodSync, lstatSync, mkdirSync, type Stats } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors';

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

/** Why `dir` is not a safe folder for the host to own, or null when it is. */
function unsafeReason(dir: string, st: Stats): string | null {
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
  return null;
}

/** Throws a UserError saying what is wrong and how to fix it. */
export function checkSpool(root: string): SpoolPaths {
  const paths = spoolPaths(root);
  for (const dir of [root, ...SPOOL_DIRS.map((d) => paths[d])]) {
    const st = lstatOrNull(dir);
    if (!st) throw new UserError(`the spool is incomplete: ${dir} is missing. Run: dumbwaiter init --spool '${root}'`);
    const why = unsafeReason(dir, st);
    if (why) throw new UserError(`unsafe spool: ${why}`);
  }
  return paths;
}

/** A host-owned folder inside the spool: created 0700, or checked like the spool's own folders. */
export function ensurePrivateDir(dir: string): void {
  const st = lstatOrNull(dir);
  if (!st) {
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o700);
    return;
  }
  const why = unsafeReason(dir, st);
  if (why) throw new UserError(`unsafe spool: ${why}`);
}

/** Creates the spool (0700) and its folders; harmless when they exist and are safe. */
export function createSpool(root: string): SpoolPaths {
  const paths = spoolPaths(root);
  const st = lstatOrNull(root);
  if (st) {
    const why = unsafeReason(root, st);
    if (why) throw new UserError(`refusing to use this spool: ${why}`);
  } else {
    mkdirSync(path.dirname(root), { recursive: true });
    mkdirSync(root, { mode: 0o700 });
    chmodSync(root, 0o700); // mkdir's mode is filtered by the umask
  }
  for (const d of SPOOL_DIRS) ensurePrivateDir(paths[d]);
  return paths;
}
