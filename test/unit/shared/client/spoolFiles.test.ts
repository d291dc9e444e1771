// Safe reads of spool files: whatever a writer of the spool put at a name, a read never blocks, never
// follows a link and takes only a regular file of bounded size.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSpoolFile, readSpoolFile } from '../../../../shared/client/spoolFiles';

const dir = mkdtempSync(path.join(os.tmpdir(), 'spool-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readSpoolFile', () => {
  it('reads a regular file', () => {
    writeFileSync(path.join(dir, 'a.json'), '{"a":1}');
    expect(readSpoolFile(path.join(dir, 'a.json'), 100)).toEqual({ ok: true, data: Buffer.from('{"a":1}') });
    expect(readSpoolFile(path.join(dir, 'none.json'), 100)).toEqual({ ok: false, why: 'missing' });
  });

  it.skipIf(process.platform === 'win32')('refuses a FIFO without blocking, a link to a readable file and a folder', () => {
    expect(spawnSync('mkfifo', [path.join(dir, 'fifo.json')]).status).toBe(0);
    writeFileSync(path.join(dir, 'secret'), 'the sandbox\'s own file');
    symlinkSync(path.join(dir, 'secret'), path.join(dir, 'link.json'));
    mkdirSync(path.join(dir, 'folder.json'));
    for (const name of ['fifo.json', 'link.json', 'folder.json']) {
      expect(readSpoolFile(path.join(dir, name), 100)).toEqual({ ok: false, why: 'not_a_file' });
      expect(openSpoolFile(path.join(dir, name))).toBeNull();
    }
  });

  it('refuses a file over the cap', () => {
    writeFileSync(path.join(dir, 'big.json'), 'x'.repeat(101));
    expect(readSpoolFile(path.join(dir, 'big.json'), 100)).toEqual({ ok: false, why: 'too_big' });
    expect(readSpoolFile(path.join(dir, 'big.json'), 101)).toMatchObject({ ok: true });
  });
});
