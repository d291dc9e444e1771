// Pinned spool folders: opened once without following a symlink and reached through /proc/self/fd/N
// from then on, so that a folder the sandbox swaps (for a symlink to the user's files, or for another
// folder) never redirects the host's writes; replaced() says which names no longer lead to the pin.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CAN_PIN, PinnedSpool, pinDir, stillPinned, unpin, type PinnedDir } from '../../../../main/core/spool/pinned';
import { SPOOL_DIRS, createSpool, type SpoolPaths } from '../../../../main/core/spool/layout';
import { fdsInside } from '../../../helpers/fds';

let root: string;
let plain: SpoolPaths;
/** The user's files, outside the spool: where a swapped-in symlink points. */
let victim: string;
const pins: PinnedDir[] = [];
const spools: PinnedSpool[] = [];

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'dw-pinned-'));
  plain = createSpool(path.join(root, 'spool'));
  victim = path.join(root, 'victim');
  mkdirSync(victim);
  writeFileSync(path.join(victim, 'precious.txt'), 'do not touch\n');
});

afterEach(() => {
  for (const p of pins.splice(0)) unpin(p);
  for (const s of spools.splice(0)) s.close();
  rmSync(root, { recursive: true, force: true });
});

const pin = (dir: string) => {
  const p = pinDir(dir);
  pins.push(p);
  return p;
};
const pinSpool = () => {
  const s = new PinnedSpool(plain);
  spools.push(s);
  return s;
};

/** Moves `dir` aside (to `<dir>-old`) and puts a symlink to the victim folder in its place. */
function swapForSymlink(dir: string): string {
  renameSync(dir, `${dir}-old`);
  symlinkSync(victim, dir);
  return `${dir}-old`;
}

/** Moves `dir` aside (to `<dir>-old`) and puts a new, empty, safe folder in its place. */
function swapForFolder(dir: string): string {
  renameSync(dir, `${dir}-old`);
  mkdirSync(dir, { mode: 0o700 });
  return `${dir}-old`;
}

const victimUntouched = () => expect(readdirSync(victim)).toEqual(['precious.txt']);
const sameFolder = (a: string, b: string) => statSync(a).ino === statSync(b).ino && statSync(a).dev === statSync(b).dev;

describe.skipIf(!CAN_PIN)('pinDir', () => {
  it('reaches the pinned folder through /proc/self/fd even after its name is swapped for a symlink', () => {
    const p = pin(plain.results);
    expect(p.path).toMatch(/^\/proc\/self\/fd\/\d+$/);
    const old = swapForSymlink(plain.results);
    writeFileSync(path.join(p.path, 'req-1.json'), '{}');
    expect(readdirSync(old)).toEqual(['req-1.json']);
    victimUntouched();
  });

  it('refuses to pin a symlink', () => {
    swapForSymlink(plain.results);
    expect(() => pin(plain.results)).toThrow();
  });
});

describe('stillPinned', () => {
  it('holds while the name leads to the pinned folder, also after it was moved away and back', () => {
    const p = pin(plain.results);
    expect(stillPinned(p)).toBe(true);
    renameSync(plain.results, `${plain.results}-away`);
    expect(stillPinned(p)).toBe(false);
    renameSync(`${plain.results}-away`, plain.results);
    expect(stillPinned(p)).toBe(true);
  });

  it('fails once the folder is swapped for another folder', () => {
    const p = pin(plain.results);
    swapForFolder(plain.results);
    expect(stillPinned(p)).toBe(false);
  });

  it('fails once the folder is swapped for a symlink, even one to the pinned folder itself', () => {
    const p = pin(plain.results);
    renameSync(plain.results, `${plain.results}-old`);
    symlinkSync(`${plain.results}-old`, plain.results);
    expect(stillPinned(p)).toBe(false);
  });

  it('fails once the folder is deleted', () => {
    const p = pin(plain.inbox);
    rmSync(plain.inbox, { recursive: true });
    expect(stillPinned(p)).toBe(false);
  });
});

describe.skipIf(!CAN_PIN)('PinnedSpool', () => {
  it('pins the root and every spool folder: each path leads to that folder', () => {
    const s = pinSpool();
    expect(s.paths.root).toMatch(/^\/proc\/self\/fd\/\d+$/);
    for (const d of SPOOL_DIRS) {
      expect(s.paths[d]).toMatch(/^\/proc\/self\/fd\/\d+$/);
      expect(sameFolder(s.paths[d], plain[d])).toBe(true);
    }
    expect(path.dirname(s.paths.hostJson)).toBe(s.paths.root);
    expect(s.replaced()).toEqual([]);
  });

  it('writes land in the pinned folder after results/ is swapped for a symlink to a user folder, and replaced() names it', () => {
    const s = pinSpool();
    const old = swapForSymlink(plain.results);
    writeFileSync(path.join(s.paths.results, 'req-1.json'), '{}');
    expect(readdirSync(old)).toEqual(['req-1.json']);
    victimUntouched();
    expect(s.replaced()).toEqual([plain.results]);
  });

  it('replaced() names exactly the folders that were swapped, moved or deleted', () => {
    const s = pinSpool();
    swapForFolder(plain.queue);
    swapForSymlink(plain.inbox);
    rmSync(plain.bin, { recursive: true });
    expect(s.replaced().sort()).toEqual([plain.bin, plain.inbox, plain.queue].sort());
  });

  it('replaced() names the root and every folder when the whole spool is moved', () => {
    const s = pinSpool();
    renameSync(plain.root, `${plain.root}-moved`);
    expect(s.replaced().sort()).toEqual([plain.root, ...SPOOL_DIRS.map((d) => plain[d])].sort());
  });

  it('repin() moves the same paths object to the new folders and closes the old pins', () => {
    const s = pinSpool();
    const paths = s.paths;
    const held = s.paths.results;
    swapForFolder(plain.results);
    s.repin();
    expect(s.paths).toBe(paths);
    expect(s.replaced()).toEqual([]);
    writeFileSync(path.join(s.paths.results, 'new.json'), '{}');
    expect(readdirSync(plain.results)).toEqual(['new.json']);
    // Nothing may keep a path from before a repin: its fd is closed (and its number may be reused).
    expect(s.paths.results).not.toBe(held);
    expect(() => statSync(held)).toThrow();
  });

  it('keeps its fds bounded however often its folders are swapped (each repin closes the old pins)', () => {
    const s = pinSpool();
    const fds = () => fdsInside(root);
    s.repin();
    const before = fds();
    for (let i = 0; i < 200; i++) {
      rmSync(plain.tmp, { recursive: true });
      mkdirSync(plain.tmp, { mode: 0o700 });
      expect(s.replaced()).toEqual([plain.tmp]);
      s.repin();
    }
    expect(fds()).toEqual(before);
    expect(sameFolder(s.paths.tmp, plain.tmp)).toBe(true);
  });

  it('repin() refuses a folder that is now a symlink', () => {
    const s = pinSpool();
    swapForSymlink(plain.results);
    expect(() => s.repin()).toThrow();
    victimUntouched();
  });

  // The sandbox wins the race between the daemon's check and its repin: the failed repin must leave
  // the pins as they were, so the swapped folder is still reported and repinned once the spool is safe.
  it('still reports a swapped folder after a repin() that failed half-way', () => {
    const s = pinSpool();
    const old = swapForFolder(plain.results);
    rmSync(plain.results, { recursive: true });
    symlinkSync(victim, plain.results); // swapped again before the repin
    expect(() => s.repin()).toThrow();
    rmSync(plain.results);
    mkdirSync(plain.results, { mode: 0o700 }); // a real folder again: the spool is safe
    writeFileSync(path.join(s.paths.results, 'req-1.json'), '{}');
    expect(readdirSync(old)).toEqual(['req-1.json']); // where it went: the folder that no name leads to
    expect(s.replaced()).toEqual([plain.results]);
    s.repin();
    expect(s.replaced()).toEqual([]);
  });

  it('close() releases every pinned folder', () => {
    const s = pinSpool();
    const held = Object.values(s.paths).filter((p) => /^\/proc\/self\/fd\/\d+$/.test(p));
    const folderOf = new Map(held.map((p) => [p, statSync(p).ino]));
    s.close();
    for (const [p, ino] of folderOf) {
      // The fd is closed (or already reused by something else): it no longer leads to that folder.
      let now: number | null = null;
      try {
        now = statSync(p).ino;
      } catch {
        /* closed */
      }
      expect(now).not.toBe(ino);
    }
  });

  it('with a host id, pins claimed/<host_id>/ too (creating it 0700) and repins it when it is replaced', () => {
    const mine = path.join(plain.claimed, 'host-a');
    const s = new PinnedSpool(plain, { hostId: 'host-a' });
    spools.push(s);
    expect(statSync(mine).mode & 0o777).toBe(0o700);
    expect(s.claimedMine).toMatch(/^\/proc\/self\/fd\/\d+$/);
    expect(sameFolder(s.claimedMine, mine)).toBe(true);
    const old = swapForFolder(mine);
    expect(s.replaced()).toEqual([mine]);
    writeFileSync(path.join(s.claimedMine, 'req-1.json'), '{}');
    expect(readdirSync(old)).toEqual(['req-1.json']);
    rmSync(mine, { recursive: true }); // deleted: the repin makes it again
    s.repin();
    expect(sameFolder(s.claimedMine, mine)).toBe(true);
  });

  it('made `later`, pins nothing: every path leads nowhere until a repin succeeds', () => {
    const s = new PinnedSpool(plain, { hostId: 'host-a', later: true });
    spools.push(s);
    expect(s.pinned).toBe(false);
    expect(s.replaced()).toEqual([]);
    for (const p of [s.paths.results, s.paths.queue, s.paths.hostJson, s.claimedMine]) {
      expect(() => writeFileSync(path.join(p, 'x.json'), '{}')).toThrow(/ENOTDIR/);
      expect(() => readdirSync(p)).toThrow(/ENOTDIR/);
    }
    s.repin();
    expect(s.pinned).toBe(true);
    expect(sameFolder(s.paths.results, plain.results)).toBe(true);
  });
});
