// Private folders get their mode through a descriptor opened without following links: a symlink at
// the path (planted before, or swapped in between the mkdir and the mode change, as the sandbox could
// inside the spool) never has its target chmod-ed. The race itself is a window of one system call,
// which no outside process hits reliably; what is at the path when the mode is set is tested here.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chmodPrivateDir, mkdirPrivate } from '../../../../main/core/fs/privateDir';
import { ensurePrivateDir } from '../../../../main/core/spool/layout';
import { UserError } from '../../../../main/core/errors';

const modeOf = (p: string) => statSync(p).mode & 0o777;

let dir: string;
/** A folder of the user's that a symlink could lead to: mode 0755, which must stay. */
let target: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-private-'));
  target = path.join(dir, 'users-folder');
  mkdirSync(target);
  chmodSync(target, 0o755);
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(process.platform === 'win32')('private folders', () => {
  it('mkdirPrivate makes 0700 whatever the umask lets through', () => {
    const old = process.umask(0o277); // mkdir alone would give 0500
    try {
      mkdirPrivate(path.join(dir, 'a'));
      mkdirPrivate(path.join(dir, 'b', 'c', 'd'), true);
    } finally {
      process.umask(old);
    }
    expect(modeOf(path.join(dir, 'a'))).toBe(0o700);
    expect(modeOf(path.join(dir, 'b', 'c', 'd'))).toBe(0o700);
  });

  it('a symlink at the path is refused and its target never chmod-ed', () => {
    const link = path.join(dir, 'link');
    symlinkSync(target, link);
    expect(() => chmodPrivateDir(link)).toThrow(UserError);
    expect(() => chmodPrivateDir(link)).toThrow('is not a folder (it was replaced, e.g. by a symbolic link)');
    expect(() => ensurePrivateDir(link)).toThrow('symbolic link');
    expect(modeOf(target)).toBe(0o755);
    const file = path.join(dir, 'file');
    writeFileSync(file, 'x');
    expect(() => chmodPrivateDir(file)).toThrow('is not a folder');
  });

  it.skipIf(process.getuid?.() !== 0)("a folder of another user's is refused, its mode left as it is", () => {
    chownSync(target, 65534, 65534);
    expect(() => chmodPrivateDir(target)).toThrow('is owned by uid 65534, not by you');
    expect(modeOf(target)).toBe(0o755);
  });
});
