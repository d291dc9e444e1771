// The settings file: an earlier version's single spool is read as the spool named `default`, and the
// list of spools is checked as a whole (names and folders unique); spools never change like a setting;
// what a stop does with running work is a choice of two, and leaving it running asks first.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loosens, readSettings, settingsSchema, withSetting } from '../../../main/core/settings';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-settings-'));
const file = path.join(dir, 'settings.json');
afterEach(() => rmSync(file, { force: true }));
const write = (doc: unknown) => writeFileSync(file, JSON.stringify(doc));

describe('reading settings.json', () => {
  it("an earlier version's `spool` is the spool named default; its null means none", () => {
    write({ spool: '/srv/spool', host_id: 'h' });
    expect(readSettings(file).spools).toEqual([{ name: 'default', dir: '/srv/spool' }]);
    write({ spool: null, host_id: 'h' });
    expect(readSettings(file).spools).toEqual([]);
  });

  it('both `spool` and `spools` is an error naming the unknown key, not a guess', () => {
    write({ spool: '/srv/a', spools: [{ name: 'default', dir: '/srv/b' }] });
    expect(() => readSettings(file)).toThrow(/spool/);
  });

  it('refuses two spools of one name or one folder, a relative folder and a bad name', () => {
    write({ spools: [{ name: 'a', dir: '/srv/a' }, { name: 'a', dir: '/srv/b' }] });
    expect(() => readSettings(file)).toThrow('spool names must be unique');
    write({ spools: [{ name: 'a', dir: '/srv/a' }, { name: 'b', dir: '/srv/a/' }] });
    expect(() => readSettings(file)).toThrow('two spools cannot share a folder');
    write({ spools: [{ name: 'a', dir: 'srv/a' }] });
    expect(() => readSettings(file)).toThrow('a spool folder must be an absolute path');
    write({ spools: [{ name: 'A', dir: '/srv/a' }] });
    expect(() => readSettings(file)).toThrow('a spool name is 1-32 lowercase letters');
  });
});

describe('config set', () => {
  it('never changes the spools: they have their own commands', () => {
    const s = settingsSchema.parse({});
    for (const name of ['spool', 'spools']) expect(() => withSetting(s, name, [])).toThrow('use `dumbwaiter spools add NAME DIR`');
  });

  it("runs_on_stop is 'stop' unless set, takes only 'stop' or 'leave', and 'leave' counts as loosening (the app asks first)", () => {
    const s = settingsSchema.parse({});
    expect(s.runs_on_stop).toBe('stop');
    const leave = withSetting(s, 'runs_on_stop', 'leave');
    expect(leave.runs_on_stop).toBe('leave');
    expect(() => withSetting(s, 'runs_on_stop', 'kill')).toThrow('invalid value for runs_on_stop');
    expect(loosens('runs_on_stop', s, leave)).toBe(true);
    expect(loosens('runs_on_stop', leave, s)).toBe(false);
  });
});
