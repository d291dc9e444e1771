// Which spool `--spool` means, and the rules a new spool must meet: a folder of its own, apart from
// the home and from every other spool (a sandbox must never reach another's files or the secrets).
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { findSpool, newSpoolProblem, resolveSpool, selectSpools, spoolForCommand, withSpool, withoutSpool } from '../../../../main/core/spool/registry';
import { settingsSchema, type Settings } from '../../../../main/core/settings';

const HOME = '/home/u/.config/Dumbwaiter';
const settings = (spools: { name: string; dir: string }[]): Settings => settingsSchema.parse({ spools });
const two = settings([
  { name: 'default', dir: '/home/u/Dumbwaiter/spool' },
  { name: 'work', dir: '/home/u/Dumbwaiter/work' },
]);

describe('which spool --spool means', () => {
  it('a name, or the folder of a spool as written or resolved', () => {
    expect(findSpool(two, 'work')?.name).toBe('work');
    expect(findSpool(two, '/home/u/Dumbwaiter/work/')?.name).toBe('work');
    expect(findSpool(two, '/home/u/Dumbwaiter/spool/../work')?.name).toBe('work');
    expect(findSpool(two, 'nope')).toBeNull();
  });

  it('an unknown name or folder is an error that lists the spools, and for a folder how to add it', () => {
    expect(() => resolveSpool(two, 'lab')).toThrow('no spool named "lab" in this home (spools: default (/home/u/Dumbwaiter/spool), work (/home/u/Dumbwaiter/work))');
    expect(() => resolveSpool(two, '/srv/lab')).toThrow("no spool at /srv/lab in this home (spools: default (/home/u/Dumbwaiter/spool), work (/home/u/Dumbwaiter/work)). Add it with: dumbwaiter spools add NAME '/srv/lab'");
    expect(() => resolveSpool(settings([]), 'x')).toThrow('(spools: none yet)');
  });

  it('the daemon serves every spool without --spool, and only the one named with it', () => {
    expect(selectSpools(two, undefined).map((s) => s.name)).toEqual(['default', 'work']);
    expect(selectSpools(two, 'work').map((s) => s.name)).toEqual(['work']);
  });

  it('a command acts on --spool, else `default`, else the only spool, else none', () => {
    expect(spoolForCommand(two, 'work')?.name).toBe('work');
    expect(spoolForCommand(two, undefined)?.name).toBe('default');
    expect(spoolForCommand(settings([{ name: 'lab', dir: '/srv/lab' }]), undefined)?.name).toBe('lab');
    expect(spoolForCommand(settings([{ name: 'a', dir: '/srv/a' }, { name: 'b', dir: '/srv/b' }]), undefined)).toBeNull();
  });
});

describe('a new spool', () => {
  it('needs a valid name and an absolute folder', () => {
    for (const bad of ['', 'Work', '-x', 'a/b', 'a b', 'x'.repeat(33), '..']) expect(newSpoolProblem(two, HOME, bad, '/srv/x')).toContain('is not a spool name');
    expect(newSpoolProblem(two, HOME, 'lab', 'lab')).toBe('lab is a relative path: give the spool folder\'s full path');
    expect(newSpoolProblem(two, HOME, 'lab', '/srv/lab')).toBeNull();
  });

  it('is refused inside the home, or holding it', () => {
    expect(newSpoolProblem(two, HOME, 'lab', path.join(HOME, 'lab'))).toContain('must not contain each other');
    expect(newSpoolProblem(two, HOME, 'lab', '/home/u')).toContain('must not contain each other');
  });

  it('is refused in, around or at another spool\'s folder: each sandbox needs a folder of its own', () => {
    expect(newSpoolProblem(two, HOME, 'lab', '/home/u/Dumbwaiter/work')).toBe('/home/u/Dumbwaiter/work is the folder of spool "work" (/home/u/Dumbwaiter/work): each sandbox needs a folder of its own');
    expect(newSpoolProblem(two, HOME, 'lab', '/home/u/Dumbwaiter/work/inner')).toContain('overlaps the folder of spool "work"');
    expect(newSpoolProblem(two, HOME, 'lab', '/home/u/Dumbwaiter')).toContain('overlaps the folder of spool "default"');
    // A sibling whose name only starts like another's is apart from it.
    expect(newSpoolProblem(two, HOME, 'lab', '/home/u/Dumbwaiter/work2')).toBeNull();
  });

  it('moving a spool is checked against the others only', () => {
    expect(newSpoolProblem(two, HOME, 'work', '/home/u/Dumbwaiter/work/moved')).toBeNull();
  });
});

describe('the list in settings', () => {
  it('adds, moves and removes by name, keeping the order', () => {
    const added = withSpool(two, 'lab', '/srv/lab/');
    expect(added.spools).toEqual([...two.spools, { name: 'lab', dir: '/srv/lab' }]);
    expect(withSpool(added, 'work', '/srv/work').spools.map((s) => `${s.name}=${s.dir}`)).toEqual(['default=/home/u/Dumbwaiter/spool', 'work=/srv/work', 'lab=/srv/lab']);
    expect(withoutSpool(added, 'default').spools.map((s) => s.name)).toEqual(['work', 'lab']);
  });
});
