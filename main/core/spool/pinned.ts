// The sandbox can rename, delete or replace any folder inside the spool at any moment, for example
// swap results/ for a symlink to the user's home between our check and our write. So the host pins
// each spool folder: it opens the folder once, without following a symlink, and from then on reaches
// it through /proc/self/fd/N, which the kernel resolves to that very folder whatever its name now
// points to. Where /proc/self/fd is missing (macOS, Windows) the plain paths are used and a swap is
// caught by the check before each scan only.
import { closeSync, constants, fstatSync, lstatSync, openSync } from 'node:fs';
import path from 'node:path';
import { HAS_PROC_FD } from '../fs/linuxFd';
import { SPOOL_DIRS, ensurePrivateDir, spoolPaths, type SpoolPaths } from './layout';

export const CAN_PIN = HAS_PROC_FD;

/** Where a spool's paths lead while its folders are not pinned: nothing can be created, listed or
 *  opened below a device (ENOTDIR), so a write meant for the spool fails (and is retried) instead of
 *  landing anywhere. Where folders cannot be pinned, the plain paths are all there is. */
const NOWHERE = '/dev/null';

export interface PinnedDir {
  /** The path to use for every operation: /proc/self/fd/N where pinning works. */
  path: string;
  /** The folder's name, to check it still names the pinned folder. */
  plain: string;
  fd: number | null;
  dev: number;
  ino: number;
}

export function pinDir(plain: string, via = plain): PinnedDir {
  if (!CAN_PIN) {
    const st = lstatSync(plain);
    return { path: plain, plain, fd: null, dev: st.dev, ino: st.ino };
  }
  const fd = openSync(via, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  const st = fstatSync(fd);
  return { path: `/proc/self/fd/${fd}`, plain, fd, dev: st.dev, ino: st.ino };
}

export function unpin(p: PinnedDir): void {
  if (p.fd !== null) closeSync(p.fd);
}

/** Whether the folder's name still leads to the pinned folder itself (not a symlink, not a stand-in). */
export function stillPinned(p: PinnedDir): boolean {
  try {
    const st = lstatSync(p.plain);
    return st.isDirectory() && st.dev === p.dev && st.ino === p.ino;
  } catch {
    return false;
  }
}

export interface PinOptions {
  /** Also pin claimed/<hostId>/ (created when missing): the host's own claims, see `claimedMine`. */
  hostId?: string;
  /** Pin nothing yet (the spool may be unusable at start): the paths lead nowhere until repin(). */
  later?: boolean;
}

/**
 * Every folder of a spool, pinned. `paths` has the same shape as plain SpoolPaths and is one object
 * for the pins' lifetime: a repin updates it in place and closes the old pins, so a caller reads
 * `paths.x` (or `claimedMine`) at each use and never keeps such a path across an await, after which
 * its fd number may lead to something else.
 */
export class PinnedSpool {
  private pins: PinnedDir[] = [];
  readonly paths: SpoolPaths;
  /** claimed/<hostId>/, pinned (with `hostId`). */
  claimedMine: string;

  constructor(
    readonly plain: SpoolPaths,
    private readonly opts: PinOptions = {},
  ) {
    this.paths = CAN_PIN ? spoolPaths(NOWHERE) : { ...plain };
    this.claimedMine = this.mineIn(this.paths.claimed);
    if (!opts.later) this.repin();
  }

  /** Whether the folders are pinned (always, unless made `later` and not yet repinned). */
  get pinned(): boolean {
    return this.pins.length > 0;
  }

  private mineIn(claimed: string): string {
    return path.join(claimed, this.opts.hostId ?? '');
  }

  /** All or nothing: a folder that cannot be pinned (swapped for a symlink meanwhile) leaves the pins
   *  as they were, so the swapped folders are still reported by replaced() until a repin succeeds. */
  private pinAll(): { pins: PinnedDir[]; paths: SpoolPaths; mine: string } {
    const pins: PinnedDir[] = [];
    try {
      const root = pinDir(this.plain.root);
      pins.push(root);
      const paths = spoolPaths(root.path);
      for (const d of SPOOL_DIRS) {
        const pin = pinDir(this.plain[d], path.join(root.path, d));
        pins.push(pin);
        paths[d] = pin.path;
      }
      let mine = this.mineIn(paths.claimed);
      if (this.opts.hostId) {
        // Created and opened through the pinned claimed/, so a claimed/ swapped meanwhile is never followed.
        ensurePrivateDir(mine);
        const pin = pinDir(this.mineIn(this.plain.claimed), mine);
        pins.push(pin);
        mine = pin.path;
      }
      return { pins, paths, mine };
    } catch (e) {
      for (const p of pins) unpin(p);
      throw e;
    }
  }

  /** The folders whose names no longer lead to what was pinned (swapped, moved or deleted). */
  replaced(): string[] {
    return this.pins.filter((p) => !stillPinned(p)).map((p) => p.plain);
  }

  /** After the spool was checked safe again: pin what its names lead to now, and let go of the old pins. */
  repin(): void {
    const { pins, paths, mine } = this.pinAll();
    const old = this.pins;
    this.pins = pins;
    Object.assign(this.paths, paths);
    this.claimedMine = mine;
    for (const p of old) unpin(p);
  }

  close(): void {
    for (const p of this.pins) unpin(p);
    this.pins = [];
  }
}
