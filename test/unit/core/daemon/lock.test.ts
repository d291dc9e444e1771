// The home lock says "held" by a code the desktop app decides on, not by the words of its message.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { acquireHomeLock } from '../../../../main/core/daemon/lock';
import { UserError } from '../../../../main/core/errors';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('acquireHomeLock', () => {
  it('refuses a second holder with the home_locked code, and frees the home on release', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'dw-lock-'));
    dirs.push(home);
    const files = [path.join(home, 'daemon.lock'), path.join(home, 'daemon.json')] as const;
    const first = acquireHomeLock(...files, 'the first');
    let refused: unknown = null;
    try {
      acquireHomeLock(...files, 'the second').release();
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(UserError);
    expect((refused as UserError).code).toBe('home_locked');
    first.release();
    acquireHomeLock(...files, 'the third').release();
  });
});
