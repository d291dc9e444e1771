// The spool's marker (.dumbwaiter-spool): written by the host into every spool it makes, it also names
// the one home that serves the spool (the home's id, settings' host_id, decides; its folder is for the
// messages). A second home serving the same spool would claim its sandbox's requests and refuse them
// (it knows none of its keys) and rewrite its catalog.json, host.json and bin/: it is refused instead,
// until an explicit hand-over (`dumbwaiter spools adopt`). The sandbox can rewrite the marker like
// anything in its spool: that decides only which of the person's homes may serve its own spool.
import path from 'node:path';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { visible } from '../../../shared/text/visible';
import { readSpoolJson } from './safeRead';

export const SPOOL_MARKER = '.dumbwaiter-spool';
const MARKER_NOTE = 'A Dumbwaiter spool: the host created this folder and owns what is in it.';
const MAX_MARKER_BYTES = 8192;

/** A home, as a spool's marker names it. */
export interface SpoolOwner {
  home_id: string;
  home: string;
}

/** The home the marker of spool `root` names; null when it names none (a marker of an earlier
 *  version, none at all, or one that is not the host's shape). */
export function readSpoolOwner(root: string): SpoolOwner | null {
  const r = readSpoolJson(path.join(root, SPOOL_MARKER), MAX_MARKER_BYTES);
  if (!r.ok || typeof r.value !== 'object' || r.value === null) return null;
  const { home_id, home } = r.value as Record<string, unknown>;
  return typeof home_id === 'string' && home_id.length > 0 && typeof home === 'string' ? { home_id, home } : null;
}

/** Writes the marker of spool `root`, naming `owner` when given. */
export function writeSpoolMarker(root: string, owner: SpoolOwner | null): void {
  writeJsonAtomic(path.join(root, SPOOL_MARKER), { dumbwaiter: MARKER_NOTE, ...(owner ?? {}) }, 0o644);
}

/** Why home `self` may not serve spool `root`: its marker names another home. Null when it names
 *  `self` or none. */
export function ownerRefusal(root: string, self: SpoolOwner): string | null {
  const owner = readSpoolOwner(root);
  if (!owner || owner.home_id === self.home_id) return null;
  const home = visible(owner.home);
  return (
    `spool ${root} is served by another Dumbwaiter home: ${home} (id ${visible(owner.home_id)}). A spool has one home: ` +
    `use that one (--home '${home}'), or hand the spool over, with that home's daemon stopped: ` +
    `dumbwaiter spools adopt NAME '${root}' --from-home '${home}' --yes`
  );
}

/** Spool `root` served by `self` from now on (ownerRefusal allowed it): its marker names it. True
 *  when it named no home before (a spool an earlier version made: the first home to serve it takes it). */
export function claimSpool(root: string, self: SpoolOwner): boolean {
  const owner = readSpoolOwner(root);
  if (owner?.home_id !== self.home_id || owner.home !== self.home) writeSpoolMarker(root, self); // new, adopted, or its home moved
  return owner === null;
}

/** Home `root` with these settings, as a marker names it. */
export function homeAsOwner(root: string, settings: { host_id: string }): SpoolOwner {
  return { home_id: settings.host_id, home: root };
}
