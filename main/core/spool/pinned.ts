// The sandbox can rename, delete or replace any folder inside the spool at any moment, for example
// swap results/ for a symlink to the user's home between our check and our write. So the host pins
// each spool folder: it opens the folder once, without following a symlink, and from then on reaches
// it through /proc/self/fd/N, which the kernel resolves to that very folder whatever its name now
// points to. Where /proc/self/fd is missing (macOS, Windows) the plain paths are used and a swap is
// caught by the check before each scan only.
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync } from 'node:fs';
import path from 'node:path';
import { SPOOL_DIRS, spoolPaths, type SpoolPaths } from './layout';

export const CAN_PIN = process.platform === 'linux' && existsSync('/proc/self/fd');

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

/** Every folder of a spool, pinned. `paths` has the same shape as plain SpoolPaths. */
export class PinnedSpool {
  private pins: PinnedDir[] = [];
  /** Folders pinned before a repin: kept open, so that a path someone still holds never reaches a reused fd. */
  private retired: PinnedDir[] = [];
  /** One object for the daemon's lifetime: a repin updates it in place. */
  readonly paths: SpoolPaths;

  constructor(readonly plain: SpoolPaths) {
    const { pins, paths } = this.pinAll();
    this.pins = pins;
    this.paths = paths;
  }

  /** All or nothing: a folder that cannot be pinned (swapped for a symlink meanwhile) leaves the pins
   *  as they were, so the swapped folders are still reported by replaced() until a repin succeeds. */
  private pinAll(): { pins: PinnedDir[]; paths: SpoolPaths } {
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
      return { pins, paths };
    } catch (e) {
      for (const p of pins) unpin(p);
      throw e;
    }
  }

  /** The folders whose names no longer lead to what was pinned (swapped, moved or deleted). */
  replaced(): string[] {
    return this.pins.filter((p) => !stillPinned(p)).map((p) => p.plain);
  }

  /** After the spool was checked safe again: pin what its names lead to now. */
  repin(): void {
    const { pins, paths } = this.pinAll();
    this.retired.push(...this.pins);
    this.pins = pins;
    Object.assign(this.paths, paths);
  }

  close(): void {
    for (const p of [...this.pins, ...this.retired]) unpin(p);
    this.pins = [];
    this.retired = [];
  }
}
