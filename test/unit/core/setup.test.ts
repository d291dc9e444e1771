// `init`'s home and spool (initHome), on the real filesystem: the spool's folder is made on purpose, its
// missing parents only when asked for (or for the default place, Dumbwaiter's own ~/Dumbwaiter), and a
// folder that cannot be made is one clear line with nothing left half made.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initHome } from '../../../main/core/setup';
import { UserError } from '../../../main/core/errors';

const root = mkdtempSync(path.join(os.tmpdir(), 'dw-setup-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const spoolsOf = (home: string) => (JSON.parse(readFileSync(path.join(home, 'settings.json'), 'utf8')) as { spools: { name: string; dir: string }[] }).spools;

describe('initHome: the spool folder made on purpose', () => {
  it('a spool folder given whose parent is missing: refused, naming the missing folder, and nothing of the spool made', () => {
    const home = path.join(root, 'h1');
    const spool = path.join(root, 'not', 'mounted', 'spool');
    expect(() => initHome(home, spool, path.join(root, 'unused'))).toThrow(new UserError(`${path.join(root, 'not', 'mounted')} does not exist: check the path (a typo? a share or synced folder not mounted?), or pass --parents to create it and the 1 missing folder above it`));
    expect(existsSync(path.join(root, 'not'))).toBe(false);
  });

  it('with parents, every missing folder is made', () => {
    const home = path.join(root, 'h2');
    const spool = path.join(root, 'p', 'q', 'spool');
    expect(initHome(home, spool, path.join(root, 'unused'), undefined, { parents: true }).spool.root).toBe(spool);
    expect(existsSync(path.join(spool, 'queue'))).toBe(true);
    expect(spoolsOf(home)).toEqual([{ name: 'default', dir: spool }]);
  });

  it('the default place gets its missing parents without asking (the first start makes ~/Dumbwaiter/spool)', () => {
    const home = path.join(root, 'h3');
    const spool = path.join(root, 'user', 'Dumbwaiter', 'spool');
    expect(initHome(home, undefined, spool).spool.root).toBe(spool);
    expect(existsSync(path.join(spool, 'queue'))).toBe(true);
  });

  it('a spool of the settings whose folder went missing with its parent (a share not mounted): refused, not made again locally', () => {
    const home = path.join(root, 'h4');
    const spool = path.join(root, 'share', 'spool');
    initHome(home, spool, spool, undefined, { parents: true });
    rmSync(path.join(root, 'share'), { recursive: true });
    expect(() => initHome(home, undefined, path.join(root, 'unused'))).toThrow(`${path.join(root, 'share')} does not exist`);
    expect(existsSync(path.join(root, 'share'))).toBe(false);
  });

  it.runIf(process.platform === 'linux')('/proc/spool and /etc/passwd/spool: one line each, and the settings left as they were', () => {
    const home = path.join(root, 'h5');
    initHome(home, path.join(root, 's5'), path.join(root, 's5'));
    expect(() => initHome(home, '/proc/spool', '/proc/spool')).toThrow(new UserError('cannot create the folder /proc/spool: this filesystem (/proc) does not allow new folders there'));
    expect(() => initHome(home, '/etc/passwd/spool', '/etc/passwd/spool')).toThrow(new UserError('/etc/passwd is a file, not a folder: the spool /etc/passwd/spool cannot be made in it. Give a path made of folders'));
    expect(spoolsOf(home)).toEqual([{ name: 'default', dir: path.join(root, 's5') }]);
  });
});
