// The run keeper's folder in the home (<home>/keeper/): the socket of each keeper that runs (named by
// its version, so that a keeper of another version is found and drained, never mistaken for this
// one), the pid of the current one, and `ended/`: the ends of runs that no daemon has recorded, written
// durably by a keeper that had no daemon to tell, read by the next daemon (with or without a keeper).
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { APP_VERSION } from '../version';
import { KEEPER_PROTOCOL, type KeptEnd } from './keeperProtocol';

/** What a keeper speaks: the app's version and the protocol's (a keeper of any other is drained). */
export const KEEPER_VERSION = `${APP_VERSION}+k${KEEPER_PROTOCOL}`;

const SOCKET = '.sock';

export function socketPath(dir: string, version: string): string {
  return path.join(dir, `${version}${SOCKET}`);
}

/** The sockets in the folder: each keeper's that runs (or that died without removing it), by version. */
export function socketsIn(dir: string): { version: string; path: string }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith(SOCKET)).map((n) => ({ version: n.slice(0, -SOCKET.length), path: path.join(dir, n) }));
}

export function pidFile(dir: string): string {
  return path.join(dir, 'pid');
}

/** The folder, private to the user: whoever reaches the socket can start runs. */
export function makeKeeperDir(dir: string): void {
  mkdirSync(path.join(dir, 'ended'), { recursive: true, mode: 0o700 });
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
  try {
    unlinkSync(endFile(dir, key));
  } catch {
    /* gone already: a keeper and a daemon may both remove it */
  }
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
