// The desktop app's first start, in Node against a temporary home: home and spool created once.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { firstRunSetup } from '../../../../main/core/app/firstRun';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-first-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('first run', () => {
  it('creates the home with the example allowlist and the spool, then changes nothing', () => {
    const home = path.join(dir, 'userData');
    const spool = path.join(dir, 'Dumbwaiter', 'spool');
    const first = firstRunSetup(home, spool);
    expect(first.firstRun).toBe(true);
    expect(readFileSync(path.join(home, 'allowlist.yaml'), 'utf8')).toContain('# Dumbwaiter allowlist');
    expect(statSync(spool).mode & 0o777).toBe(0o700);
    expect(existsSync(path.join(spool, 'bin', 'dw.cjs'))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(home, 'settings.json'), 'utf8')).spools).toEqual([{ name: 'default', dir: spool }]);
    const again = firstRunSetup(home, path.join(dir, 'elsewhere'));
    expect(again.firstRun).toBe(false);
    expect(again.spool.root).toBe(spool); // the home's setting wins over the default
    expect(existsSync(path.join(dir, 'elsewhere'))).toBe(false);
  });
});
