// The durable replace behind every file the host publishes (results, host.json, settings, key files):
// a reader sees the old file or the new one, never a part of one; a failure leaves the old file and no
// temp file; the file gets the mode asked for; a symlink at the name is replaced, not written through.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fsyncDir, writeFileAtomic, writeJsonAtomic } from '../../../../main/core/fs/atomicWrite';
import { isInProgressName } from '../../../../shared/protocol/ids';
import { track } from '../../../helpers/processes';
import { eventually } from '../../../helpers/host';
import { outputOf, projectFile, spawnTsx } from '../../../helpers/processes';

let dir: string;
let file: string;
const children: ChildProcess[] = [];

// The mode asked for is filtered by the umask, as for any new file: fix it so the expected modes hold.
let savedUmask: number;
beforeAll(() => {
  savedUmask = process.umask(0o022);
});
afterAll(() => {
  process.umask(savedUmask);
});

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-atomic-'));
  file = path.join(dir, 'data.json');
});

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const modeOf = (p: string) => statSync(p).mode & 0o777;

describe('writeFileAtomic', () => {
  it('writes a new file, leaving nothing else in the folder', () => {
    writeFileAtomic(file, 'héllo wörld\n');
    expect(readFileSync(file, 'utf8')).toBe('héllo wörld\n');
    expect(readdirSync(dir)).toEqual(['data.json']);
  });

  it('replaces an existing file with a new one, byte for byte', () => {
    writeFileSync(file, 'old content that is longer than the new one');
    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 0, 10]);
    writeFileAtomic(file, bytes);
    expect(readFileSync(file)).toEqual(bytes);
    expect(readdirSync(dir)).toEqual(['data.json']);
  });

  it('writes an empty file', () => {
    writeFileAtomic(file, '');
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it('creates the file 0600 unless another mode is asked for', () => {
    writeFileAtomic(file, 'secret');
    expect(modeOf(file)).toBe(0o600);
    writeFileAtomic(path.join(dir, 'public.json'), '{}', 0o644);
    expect(modeOf(path.join(dir, 'public.json'))).toBe(0o644);
    writeFileAtomic(path.join(dir, 'dw.cjs'), '', 0o755);
    expect(modeOf(path.join(dir, 'dw.cjs'))).toBe(0o755);
  });

  it('gives the new mode, not the old file’s, when it replaces a more open file', () => {
    writeFileSync(file, 'was public');
    chmodSync(file, 0o666);
    writeFileAtomic(file, 'now private');
    expect(modeOf(file)).toBe(0o600);
  });

  it('replaces a symlink at the name instead of writing through it', () => {
    const target = path.join(dir, 'precious.txt');
    writeFileSync(target, 'do not touch\n');
    symlinkSync(target, file);
    writeFileAtomic(file, 'new');
    expect(lstatSync(file).isFile()).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('new');
    expect(readFileSync(target, 'utf8')).toBe('do not touch\n');
  });

  it('throws when the name is a folder, leaving the folder as it was and no temp file', () => {
    mkdirSync(file);
    writeFileSync(path.join(file, 'inside'), 'kept');
    expect(() => writeFileAtomic(file, 'x')).toThrow();
    expect(readFileSync(path.join(file, 'inside'), 'utf8')).toBe('kept');
    expect(readdirSync(dir)).toEqual(['data.json']);
  });

  it('returns the file in place as a later look at its name finds it (same inode, size and times, the change time included)', () => {
    const st = writeFileAtomic(file, 'versioned');
    const later = lstatSync(file, { bigint: true });
    expect([st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs, st.nlink]).toEqual([later.dev, later.ino, later.size, later.mtimeNs, later.ctimeNs, later.nlink]);
    expect(st.size).toBe(BigInt('versioned'.length));
  });

  it('throws when the folder does not exist', () => {
    expect(() => writeFileAtomic(path.join(dir, 'missing', 'x.json'), 'x')).toThrow(/ENOENT/);
  });

  it('a write that fails half-way (file size limit) leaves the old file whole and no temp file', async () => {
    writeFileSync(file, 'the old version\n');
    // A file size limit far below the 1 MiB to write (SIGXFSZ ignored, so the write fails with EFBIG).
    const child = spawnTsx(
      `
      import { writeFileAtomic } from ${JSON.stringify(projectFile('main/core/fs/atomicWrite.ts'))};
      try {
        writeFileAtomic(${JSON.stringify(file)}, Buffer.alloc(1 << 20, 0x78));
        process.stdout.write('written');
      } catch (e) {
        process.stdout.write(e.code);
      }
      `,
      { shellPrefix: 'trap "" XFSZ; ulimit -f 128' },
    );
    children.push(child);
    const out = await outputOf(child);
    expect(out.stdout, out.stderr).toBe('EFBIG');
    expect(readFileSync(file, 'utf8')).toBe('the old version\n');
    expect(readdirSync(dir)).toEqual(['data.json']);
  });

  it('a concurrent reader only ever sees a whole old or whole new file, and no other name but hidden temp files', async () => {
    const size = 256 * 1024;
    const a = Buffer.alloc(size, 0x61);
    const b = Buffer.alloc(size, 0x62);
    const folder = path.join(dir, 'published');
    mkdirSync(folder);
    const target = path.join(folder, 'data.json');
    writeFileAtomic(target, a);
    const ready = path.join(dir, 'reader.ready');
    const stop = path.join(dir, 'reader.stop');
    // Reads in a loop until told to stop; the folder is listed too, to see what else ever appears in it.
    const reader = `
      const fs = require('fs');
      const [file, folder, size, ready, stop] = process.argv.slice(1);
      const a = Buffer.alloc(+size, 0x61), b = Buffer.alloc(+size, 0x62);
      let reads = 0, bad = 0;
      const names = new Set();
      while (!fs.existsSync(stop)) {
        for (const n of fs.readdirSync(folder)) names.add(n);
        let buf = null;
        try { buf = fs.readFileSync(file); } catch {}
        reads++;
        if (!buf || !(buf.equals(a) || buf.equals(b))) bad++;
        if (reads === 1) fs.writeFileSync(ready, '');
      }
      process.stdout.write(JSON.stringify({ reads, bad, names: [...names] }));
    `;
    const child = track(spawn(process.execPath, ['-e', reader, '--', target, folder, String(size), ready, stop]));
    children.push(child);
    const out = outputOf(child);
    await eventually('the reader to start', () => {
      if (child.exitCode !== null) throw new Error('the reader exited before it started reading');
      return existsSync(ready) ? true : undefined;
    });
    for (let i = 0; i < 60; i++) writeFileAtomic(target, i % 2 ? a : b);
    writeFileSync(stop, '');
    const o = await out;
    const r = JSON.parse(o.stdout) as { reads: number; bad: number; names: string[] };
    expect(r.bad).toBe(0);
    expect(r.names.filter((n) => n !== 'data.json' && !isInProgressName(n))).toEqual([]);
    expect(readdirSync(folder)).toEqual(['data.json']);
  });
});

describe('writeJsonAtomic', () => {
  it('writes indented JSON with a final newline, 0600 by default', () => {
    writeJsonAtomic(file, { a: 1, b: ['x'] });
    expect(readFileSync(file, 'utf8')).toBe('{\n  "a": 1,\n  "b": [\n    "x"\n  ]\n}\n');
    expect(modeOf(file)).toBe(0o600);
    writeJsonAtomic(file, null, 0o644);
    expect(readFileSync(file, 'utf8')).toBe('null\n');
    expect(modeOf(file)).toBe(0o644);
  });
});

describe('fsyncDir', () => {
  it('syncs a folder, and quietly does nothing for one it cannot open', () => {
    expect(() => fsyncDir(dir)).not.toThrow();
    expect(() => fsyncDir(path.join(dir, 'missing'))).not.toThrow();
  });
});
