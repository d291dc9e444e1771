// Which folders may become a spool (createSpool, spoolRefusal) and which count as one the host made
// (isHostMadeSpool): new or empty folders, the host's own spools (its marker, or an earlier version's
// exact layout); never the file system root, the home or a folder holding it, a relative path, or a
// folder with anyone else's files in it, and a refused folder is left exactly as it was.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SPOOL_DIRS, SPOOL_MARKER, createSpool, isHostMadeSpool, spoolRefusal } from '../../../../main/core/spool/layout';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-layout-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('createSpool', () => {
  it('makes a missing or empty folder a spool with the marker, and takes its own spool again', () => {
    const fresh = path.join(dir, 'a', 'spool');
    createSpool(fresh);
    expect(readdirSync(fresh).sort()).toEqual([SPOOL_MARKER, ...SPOOL_DIRS].sort());
    expect(isHostMadeSpool(fresh)).toBe(true);
    const empty = path.join(dir, 'empty');
    mkdirSync(empty, { mode: 0o700 });
    createSpool(empty);
    expect(isHostMadeSpool(empty)).toBe(true);
    writeFileSync(path.join(fresh, 'host.json'), '{}');
    writeFileSync(path.join(fresh, 'results', 'r1.json'), '{}');
    expect(() => createSpool(fresh)).not.toThrow();
  });

  it("takes an earlier version's spool (only the host's entries) and marks it", () => {
    const old = path.join(dir, 'old');
    mkdirSync(old, { mode: 0o700 });
    for (const d of SPOOL_DIRS) mkdirSync(path.join(old, d), { mode: 0o700 });
    for (const f of ['host.json', 'catalog.json', '.host.json.1234.abcd1234.tmp', 'bin/dw.cjs', 'bin/dw.py']) writeFileSync(path.join(old, f), 'x');
    expect(isHostMadeSpool(old)).toBe(true);
    createSpool(old);
    expect(existsSync(path.join(old, SPOOL_MARKER))).toBe(true);
  });

  it('refuses the root, the home and its parents, a relative path and a folder with user files, leaving it untouched', () => {
    const home = os.homedir();
    expect(spoolRefusal('/')).toContain('the root of the file system');
    expect(spoolRefusal(home)).toContain('your home folder');
    if (path.dirname(home) !== '/') expect(spoolRefusal(path.dirname(home))).toContain('a folder holding your home folder');
    expect(spoolRefusal('../..')).toContain('relative path');
    expect(spoolRefusal('spool')).toContain('relative path');

    const user = path.join(dir, 'user');
    mkdirSync(path.join(user, 'bin'), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(user, 'bin', 'tool'), 'mine');
    expect(() => createSpool(user)).toThrow('it holds files Dumbwaiter did not create');
    expect(readdirSync(user, { recursive: true }).map(String).sort()).toEqual(['bin', path.join('bin', 'tool')]);
    // Exactly the host's layout plus one file of someone else's: not the host's.
    const almost = path.join(dir, 'almost');
    createSpool(almost);
    unlinkSync(path.join(almost, SPOOL_MARKER));
    writeFileSync(path.join(almost, 'notes.txt'), 'mine');
    expect(isHostMadeSpool(almost)).toBe(false);
    expect(() => createSpool(almost)).toThrow('it holds files Dumbwaiter did not create');
    writeFileSync(path.join(almost, 'bin', 'other-tool'), 'mine');
    unlinkSync(path.join(almost, 'notes.txt'));
    expect(isHostMadeSpool(almost)).toBe(false); // bin/ holds more than the host's clients
  });
});
