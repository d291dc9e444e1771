// The component-wise open of checked paths and their handover to the program, with real folders,
// symlinks, FIFOs and processes (Linux: elsewhere the paths are passed as they are).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeSync, fstatSync, mkdirSync, mkdtempSync, openSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { CAN_HAND_OVER, handOver, MAX_HANDLES, openPinned, PathChanged } from '../../../../main/core/exec/pathHandles';
import { startRun } from '../../../../main/core/exec/executor';
import type { RunPlan } from '../../../../main/core/allowlist/plan';
import type { PathSlot } from '../../../../main/core/allowlist/template';
import { fdsInside } from '../../../helpers/fds';

let dir: string;
let deep: string;
let outside: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'dw-handles-')));
  deep = path.join(dir, 'root', 'a', 'b');
  mkdirSync(deep, { recursive: true });
  writeFileSync(path.join(deep, 'f.txt'), 'inside');
  // A copy of the same tree elsewhere: what a swapped-in symlink leads to.
  outside = path.join(dir, 'outside');
  mkdirSync(path.join(outside, 'a', 'b'), { recursive: true });
  writeFileSync(path.join(outside, 'a', 'b', 'f.txt'), 'OUTSIDE');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const openFds = () => fdsInside(dir);
const inoOf = (fd: number) => fstatSync(fd).ino;

describe.skipIf(!CAN_HAND_OVER)('openPinned', () => {
  it('opens a file: the descriptor is that very file', () => {
    const p = openPinned(path.join(deep, 'f.txt'));
    try {
      expect(p).toMatchObject({ rest: [], isDir: false });
      expect(inoOf(p.fd)).toBe(statSync(path.join(deep, 'f.txt')).ino);
    } finally {
      closeSync(p.fd);
    }
  });

  it('opens a folder', () => {
    const p = openPinned(deep);
    try {
      expect(p).toMatchObject({ rest: [], isDir: true });
      expect(inoOf(p.fd)).toBe(statSync(deep).ino);
    } finally {
      closeSync(p.fd);
    }
  });

  it('a missing leaf pins its folder and names what is missing', () => {
    const p = openPinned(path.join(deep, 'new', 'x.txt'));
    try {
      expect(p).toMatchObject({ rest: ['new', 'x.txt'], isDir: true });
      expect(inoOf(p.fd)).toBe(statSync(deep).ino);
    } finally {
      closeSync(p.fd);
    }
  });

  it('refuses when any component, at any level, was swapped for a symlink (even one leading to a same-looking tree)', () => {
    const target = path.join(deep, 'f.txt');
    const levels = [path.join(dir, 'root'), path.join(dir, 'root', 'a'), deep, target];
    for (const level of levels) {
      const rel = path.relative(path.join(dir, 'root'), level);
      const aside = `${level}.aside`;
      renameSync(level, aside);
      symlinkSync(path.join(outside, rel), level);
      const before = openFds();
      expect(() => openPinned(target), level).toThrow(PathChanged);
      expect(openFds(), 'no descriptor left open after a refusal').toEqual(before);
      rmSync(level);
      renameSync(aside, level);
    }
    const p = openPinned(target); // put back: opens again
    closeSync(p.fd);
  });

  it('a FIFO leaf is pinned without being opened for reading (no writer: it would block)', () => {
    const fifo = path.join(deep, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const p = openPinned(fifo);
    try {
      expect(fstatSync(p.fd).isFIFO()).toBe(true);
    } finally {
      closeSync(p.fd);
    }
  });

  it('refuses a path that is not absolute and normal (a real path has no "..")', () => {
    expect(() => openPinned(`${deep}/../b/f.txt`)).toThrow(PathChanged);
    expect(() => openPinned('root/a')).toThrow(PathChanged);
  });
});

describe.skipIf(!CAN_HAND_OVER)('handOver', () => {
  it('names a file /dev/fd/N, a folder /dev/fd/N/. and a missing name inside its pinned folder, also inside a larger element', () => {
    const file = path.join(deep, 'f.txt');
    const out = `--out=${path.join(deep, 'new.txt')}`;
    const h = handOver(['prog', file, deep, out, `${deep}:${file}`], [slot(1, 0, file.length), slot(2, 0, deep.length), slot(3, 6, out.length, true), slot(4, 0, deep.length), slot(4, deep.length + 1, deep.length + 1 + file.length)], dir);
    try {
      expect(h.argv).toEqual(['prog', '/dev/fd/3', '/dev/fd/4/.', '--out=/dev/fd/5/new.txt', '/dev/fd/7/.:/dev/fd/6']);
      expect(h.fds.map(inoOf)).toEqual([statSync(file).ino, statSync(deep).ino, statSync(deep).ino, statSync(file).ino, statSync(deep).ino, statSync(dir).ino]);
      expect(h.cwd).toBe('/proc/self/fd/8');
    } finally {
      h.close();
    }
  });

  it('refuses more paths than it may hold descriptors for, before opening any', () => {
    const before = openFds();
    const many = Array.from({ length: MAX_HANDLES + 1 }, () => deep);
    expect(() => handOver(['ls', ...many], many.map((p, i) => slot(i + 1, 0, p.length)), dir)).toThrow(`this run names ${MAX_HANDLES + 1} paths; at most ${MAX_HANDLES} can be handed to a program`);
    expect(openFds()).toEqual(before);
    const h = handOver(['ls', ...many.slice(1)], many.slice(1).map((p, i) => slot(i + 1, 0, p.length)), dir);
    expect(h.fds).toHaveLength(MAX_HANDLES + 1); // and the working folder
    h.close();
  });

  it('the working folder is the one pinned, even when its name leads elsewhere by the time the program starts', () => {
    const h = handOver(['/bin/sh'], [], deep);
    try {
      renameSync(deep, `${deep}.aside`);
      symlinkSync(path.join(outside, 'a', 'b'), deep);
      const r = spawnSync('/bin/sh', ['-c', 'pwd -P; cat f.txt'], { cwd: h.cwd, stdio: ['ignore', 'pipe', 'pipe', ...h.fds], encoding: 'utf8' });
      expect(r.stdout).toBe(`${deep}.aside\ninside`);
    } finally {
      h.close();
    }
  });

  it('refuses a checked file that is missing at the handover: a link planted at its name would be opened by name', () => {
    const file = path.join(deep, 'f.txt');
    renameSync(file, `${file}.aside`);
    const before = openFds();
    expect(() => handOver(['cat', file], [slot(1, 0, file.length)], dir)).toThrow(/f\.txt no longer exists/);
    expect(openFds()).toEqual(before);
    // A name to create (must_exist: false) may be missing, as its last name only.
    handOver(['touch', file], [slot(1, 0, file.length, true)], dir).close();
    const nested = path.join(deep, 'new', 'x.txt');
    expect(() => handOver(['touch', nested], [slot(1, 0, nested.length, true)], dir)).toThrow(/new is missing: only the last name/);
    expect(openFds()).toEqual(before);
  });

  it('never follows a link in a working folder shared with the sandbox (it could lead to the home); the author\'s own links elsewhere are followed', () => {
    const shared = path.join(dir, 'root', 'shared');
    symlinkSync(path.join(outside, 'a'), shared);
    expect(() => handOver(['/bin/sh'], [], shared, true)).toThrow(PathChanged);
    handOver(['/bin/sh'], [], shared, false).close();
  });

  it('refuses when a checked folder became a symlink, and leaves no descriptor open', () => {
    const file = path.join(deep, 'f.txt');
    renameSync(path.join(dir, 'root', 'a'), path.join(dir, 'a.aside'));
    symlinkSync(path.join(outside, 'a'), path.join(dir, 'root', 'a'));
    const before = openFds();
    expect(() => handOver(['cat', file], [slot(1, 0, file.length)], dir)).toThrow(/became a symlink/);
    expect(openFds()).toEqual(before);
  });
});

describe.skipIf(!CAN_HAND_OVER)('a run gets the objects that were checked', () => {
  const plan = (argv: string[], paths: PathSlot[], cwd = dir): RunPlan => ({ op: 't', argv, paths, cwd, env: {}, timeout_s: 30, max_output_bytes: 65536, concurrency: 1, cost: 0, scope: 'read', approval: 'never' });
  const log = () => openSync(path.join(dir, 'run.log'), 'w');

  it('reads the file and lists the folder through the handles; the host keeps none of them open', async () => {
    const file = path.join(deep, 'f.txt');
    const before = openFds();
    const o = await startRun('r1', plan(['/bin/sh', '-c', 'cat "$0"; echo; ls "$1"; pwd -P', file, deep], [slot(3, 0, file.length), slot(4, 0, deep.length)], deep), log(), 200).done;
    expect(o).toMatchObject({ exit_code: 0, error: null });
    expect(o.stdout).toBe(`inside\nf.txt\n${deep}\n`);
    expect(openFds()).toEqual(before);
  });

  it('creates a new file in the checked folder', async () => {
    const target = path.join(deep, 'made.txt');
    const o = await startRun('r2', plan(['/usr/bin/touch', target], [slot(1, 0, target.length, true)]), log(), 200).done;
    expect(o).toMatchObject({ exit_code: 0, error: null });
    expect(existsSync(target)).toBe(true);
  });

  it('a folder swapped for a symlink after the check: the run does not start, nothing outside is touched', async () => {
    const target = path.join(deep, 'made.txt');
    renameSync(deep, `${deep}.aside`);
    symlinkSync(path.join(outside, 'a', 'b'), deep);
    const o = await startRun('r3', plan(['/usr/bin/touch', target], [slot(1, 0, target.length, true)]), log(), 200).done;
    expect(o).toMatchObject({ exit_code: null, error: { code: 'spawn_failed', message: expect.stringContaining('became a symlink after it was checked') } });
    expect(existsSync(path.join(outside, 'a', 'b', 'made.txt'))).toBe(false);
  });

  it('a working folder that is gone fails cleanly', async () => {
    const o = await startRun('r4', plan(['/bin/true'], [], path.join(dir, 'missing')), log(), 200).done;
    expect(o.error?.code).toBe('spawn_failed');
  });
});

function slot(element: number, start: number, end: number, mayBeMissing = false): PathSlot {
  return { element, start, end, ...(mayBeMissing ? { may_be_missing: true as const } : {}) };
}
