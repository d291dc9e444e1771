// A new spool's folder is made on purpose: the folders above it must be there (else one line naming the
// first missing one and suggesting --parents), a file among them or a folder that cannot be made is
// said in one line. On the real filesystem, /proc and /etc/passwd included.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { folderCreationProblem, spoolParentProblem } from '../../../../main/core/spool/folderChecks';

const root = mkdtempSync(path.join(os.tmpdir(), 'dw-spool-folders-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('spoolParentProblem', () => {
  it('none when the folder above is there, whether or not the spool folder is', () => {
    mkdirSync(path.join(root, 'there'));
    expect(spoolParentProblem(path.join(root, 'new-spool'), false)).toBeNull();
    expect(spoolParentProblem(path.join(root, 'there'), false)).toBeNull();
  });

  it('a missing folder above: named, with the hint of a typo or an unmounted share, and --parents for it and the ones above it', () => {
    expect(spoolParentProblem(path.join(root, 'typo', 'spool'), false)).toBe(
      `${path.join(root, 'typo')} does not exist: check the path (a typo? a share or synced folder not mounted?), or pass --parents to create it`,
    );
    expect(spoolParentProblem(path.join(root, 'does', 'not', 'exist', 'spool'), false)).toBe(
      `${path.join(root, 'does', 'not', 'exist')} does not exist: check the path (a typo? a share or synced folder not mounted?), or pass --parents to create it and the 2 missing folders above it`,
    );
    expect(spoolParentProblem(path.join(root, 'a', 'b', 'spool'), false)).toContain('and the 1 missing folder above it');
  });

  it('with parents, missing folders above are no problem', () => {
    expect(spoolParentProblem(path.join(root, 'does', 'not', 'exist', 'spool'), true)).toBeNull();
  });

  it('a file among the folders above is said, with parents or not', () => {
    const file = path.join(root, 'a-file');
    writeFileSync(file, 'x');
    for (const parents of [false, true]) {
      expect(spoolParentProblem(path.join(file, 'spool'), parents)).toBe(`${file} is a file, not a folder: the spool ${path.join(file, 'spool')} cannot be made in it. Give a path made of folders`);
      expect(spoolParentProblem(path.join(file, 'deeper', 'spool'), parents)).toContain(`${file} is a file, not a folder`);
    }
  });

  it.runIf(process.platform === 'linux')('/etc/passwd/spool: /etc/passwd is a file', () => {
    expect(spoolParentProblem('/etc/passwd/spool', false)).toContain('/etc/passwd is a file, not a folder');
  });
});

describe('folderCreationProblem', () => {
  const failure = (dir: string): unknown => {
    try {
      mkdirSync(dir);
    } catch (e) {
      return e;
    }
    throw new Error(`${dir} was made`);
  };

  it.runIf(process.platform === 'linux')('/proc/spool: the filesystem does not allow new folders there, in one line', () => {
    expect(folderCreationProblem(failure('/proc/spool'))).toBe('cannot create the folder /proc/spool: this filesystem (/proc) does not allow new folders there');
  });

  it.runIf(process.platform !== 'win32' && process.getuid?.() !== 0)('a folder you may not write in', () => {
    const locked = path.join(root, 'locked');
    mkdirSync(locked, { mode: 0o500 });
    expect(folderCreationProblem(failure(path.join(locked, 'spool')))).toBe(`cannot create the folder ${path.join(locked, 'spool')}: you may not create folders in ${locked}`);
  });

  it('not an error of making a folder: left to the caller', () => {
    expect(folderCreationProblem(new Error('something else'))).toBeNull();
    expect(folderCreationProblem('a string')).toBeNull();
  });
});
