// The run keeper's folder in the home (<home>/keeper/): the socket of each keeper that runs (named by
// its version, so that a keeper of another version is found and drained, never mistaken for this
// one), the pid of the current one, `ended/`: the ends of runs that no daemon has recorded, written
// durably by a keeper that had no daemon to tell, read by the next daemon (with or without a keeper),
// and `exited-<instance>`: a keeper that exited by itself, its ends all written (so that what it does
// not hold is known never to have reached it, as if it still answered).
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../fs/atomicWrite';
import { APP_VERSION } from '../version';
import { KEEPER_PROTOCOL, type KeptEnd } from './keeperProtocol';

/** What a keeper speaks: the app's version and the protocol's (a keeper of any other is drained). */
export const KEEPER_VERSION = `${APP_VERSION}+k${KEEPER_PROTOCOL}`;

const SOCKET = '.sock';
/** Windows has no sockets in folders: a keeper there listens on a named pipe (named after its folder)
 *  and lists it in the folder with a file of the socket's name. */
const WINDOWS = process.platform === 'win32';

/** Where the keeper of `version` for the folder `dir` listens. */
export function socketPath(dir: string, version: string): string {
  if (!WINDOWS) return listingPath(dir, version);
  return `\\\\.\\pipe\\dumbwaiter-${createHash('sha256').update(dir).digest('hex').slice(0, 16)}-${version}`;
}

/** What in the folder says a keeper of `version` listens: its socket, or on Windows the file naming its pipe. */
export function listingPath(dir: string, version: string): string {
  return path.join(dir, `${version}${SOCKET}`);
}

/** The listing a keeper makes once it listens: nothing to do but on Windows (a socket lists itself). */
export function listKeeper(dir: string, version: string): void {
  if (WINDOWS) writeFileSync(listingPath(dir, version), '');
}

/** Its listing taken away by the keeper (a socket is removed by its closing; a file is not). */
export function unlistKeeper(dir: string, version: string): void {
  if (WINDOWS) removeListing(dir, version);
}

/** The listing of a keeper that is gone (a dead one's socket, or its file on Windows). */
export function removeListing(dir: string, version: string): void {
  removeQuietly(listingPath(dir, version));
}

/** Whether a socket with nobody listening stays behind to be removed (no: a pipe goes with its server). */
export const STALE_SOCKETS = !WINDOWS;

/** The keepers listed in the folder: each one's that runs (or that died without removing its
 *  listing), by version, and where it listens. */
export function socketsIn(dir: string): { version: string; path: string }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith(SOCKET)).map((n) => {
    const version = n.slice(0, -SOCKET.length);
    return { version, path: socketPath(dir, version) };
  });
}

export function pidFile(dir: string): string {
  return path.join(dir, 'pid');
}

/** The folder, private to the user: whoever reaches the socket can start runs. */
export function makeKeeperDir(dir: string): void {
  mkdirSync(path.join(dir, 'ended'), { recursive: true, mode: 0o700 });
}

const EXITED = 'exited-';

/** Durably, as a keeper's last act once its ends are written. */
export function markExited(dir: string, instance: string): void {
  writeFileAtomic(path.join(dir, `${EXITED}${instance}`), '');
}

/** The instances of the keepers that exited by themselves since the marks were last cleared. */
export function exitedIn(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => n.startsWith(EXITED)).map((n) => n.slice(EXITED.length));
  } catch {
    return [];
  }
}

export function clearExited(dir: string, instances: string[]): void {
  for (const i of instances) removeQuietly(path.join(dir, `${EXITED}${i}`));
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* gone already: a keeper and a daemon may both remove it */
  }
}

/** A key (a request's handle) as a file name: hashed, whatever characters it has. */
function endFile(dir: string, key: string): string {
  return path.join(dir, 'ended', `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
}

/** Durably: the record must outlive the keeper, and a power cut. */
export function writeEnd(dir: string, end: KeptEnd): void {
  writeJsonAtomic(endFile(dir, end.key), end);
}

export function removeEnd(dir: string, key: string): void {
  removeQuietly(endFile(dir, key));
}

/** The ends written and not yet removed; a file that cannot be read is left for a person to look at. */
export function readEnds(dir: string): KeptEnd[] {
  let names: string[];
  try {
    names = readdirSync(path.join(dir, 'ended'));
  } catch {
    return [];
  }
  const out: KeptEnd[] = [];
  for (const n of names) {
    if (!n.endsWith('.json') || n.startsWith('.')) continue;
    try {
      const end = JSON.parse(readFileSync(path.join(dir, 'ended', n), 'utf8')) as KeptEnd;
      if (typeof end.key === 'string' && end.outcome && typeof end.outcome === 'object') out.push(end);
    } catch {
      /* a torn write cannot happen (rename); anything else is not ours to guess at */
    }
  }
  return out;
}
