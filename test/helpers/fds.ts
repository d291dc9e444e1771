// The descriptors this process holds on anything inside a folder (Linux). Not a count of all of them:
// the worker's own parts (vitest, libuv's thread pool) open and close theirs at any moment.
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { isInside } from '../../main/core/allowlist/pathArg';

/** Their targets, sorted: the numbers say nothing, a closed descriptor's may be reused. */
export function fdsInside(folder: string): string[] {
  const real = realpathSync(folder);
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return []; // closed since the listing, the listing's own among them
    }
    return isInside(real, target.replace(/ \(deleted\)$/, '')) ? [target] : [];
  }).sort();
}
