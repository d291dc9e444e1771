// The file the daemon makes for a run's log and the run keeper writes: made anew (never through what is
// at its name, nothing there touched), named by its identity, and opened for writing only while it is
// that very file, on Linux through the daemon's descriptor whatever has since happened to its name, and
// by its plain name (never followed) once that descriptor went with a daemon killed meanwhile.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, fstatSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeShared, openShared, TAKEN, type HeldFile } from '../../../../main/core/exec/sharedFile';
import { HAS_PROC_FD } from '../../../../main/core/fs/linuxFd';
import { track } from '../../../helpers/processes';

let dir: string;
let name: string;
let precious: string;
const held: HeldFile[] = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-shared-'));
  name = path.join(dir, 'req-1.log');
  precious = path.join(dir, 'precious.txt');
  writeFileSync(precious, 'do not touch\n');
});

afterEach(() => {
  for (const f of held.splice(0)) f.close();
  rmSync(dir, { recursive: true, force: true });
});

function make(file = name): HeldFile {
  const f = makeShared(file);
  if (f === null || f === TAKEN) throw new Error(`could not make ${file}: ${f}`);
  held.push(f);
  return f;
}

/** Removes, then hard-links, what is at argv[1], in a loop; says "ready" once it runs. */
const RACER = `
import os, sys
name = sys.argv[1]
other = name + ".kept"
print("ready", flush=True)
while True:
    try:
        os.link(name, other)
        os.unlink(other)
    except OSError:
        pass
    try:
        os.unlink(name)
    except OSError:
        pass
`;

/** Writes `text` through a descriptor openShared gave, and closes it. */
function writeThrough(fd: number, text: string): void {
  writeSync(fd, text);
  closeSync(fd);
}

const PLANTS: Record<string, () => void> = {
  'a symlink to a host file': () => symlinkSync(precious, name),
  'a hard link to a host file': () => linkSync(precious, name),
  'a FIFO': () => expect(spawnSync('mkfifo', [name]).status).toBe(0),
  'a folder': () => mkdirSync(name),
  'a file of forged text': () => writeFileSync(name, 'All tests PASSED\n'),
};

describe('makeShared (in the daemon)', () => {
  it('makes an empty regular file with one name, and names it by its identity', () => {
    const f = make();
    const st = lstatSync(name);
    expect(st.isFile() && st.size === 0 && st.nlink === 1).toBe(true);
    expect(st.mode & 0o022).toBe(0); // nobody else may write it
    expect({ dev: f.shared.dev, ino: f.shared.ino }).toEqual({ dev: st.dev, ino: st.ino });
    if (HAS_PROC_FD) {
      expect(f.shared.path).toMatch(new RegExp(`^/proc/${process.pid}/fd/\\d+$`));
      expect(readlinkSync(f.shared.path)).toBe(name);
    } else expect(f.shared.path).toBe(name);
  });

  it.each(Object.keys(PLANTS))('leaves %s at its name alone, and says the name is taken', (kind) => {
    PLANTS[kind]!();
    const before = lstatSync(name);
    expect(makeShared(name)).toBe(TAKEN);
    expect(lstatSync(name).ino).toBe(before.ino);
    expect(readFileSync(precious, 'utf8')).toBe('do not touch\n');
    expect(statSync(precious).nlink).toBe(kind.startsWith('a hard link') ? 2 : 1);
  });

  it('makes the file all the same when the sandbox removes or links its name the moment it is made', async () => {
    // A sandbox that races the host: it removes whatever is at the name, and hard-links it, as fast as it can.
    const racer = track(spawn('python3', ['-c', RACER, name], { stdio: ['ignore', 'pipe', 'inherit'] }));
    try {
      await new Promise((resolve) => racer.stdout!.once('data', resolve));
      const made = Array.from({ length: 3000 }, () => {
        const f = makeShared(name);
        if (f !== null && f !== TAKEN) f.close();
        rmSync(name, { force: true });
        return f === null ? 'nothing' : f === TAKEN ? 'taken' : 'made';
      });
      expect(made.filter((m) => m === 'nothing')).toEqual([]);
    } finally {
      racer.kill('SIGKILL');
    }
  });

  it('makes nothing where its folder is missing', () => {
    expect(makeShared(path.join(dir, 'missing', 'req-1.log'))).toBeNull();
  });
});

describe('openShared (in the keeper)', () => {
  it('opens the file made, for writing', () => {
    const f = make();
    writeThrough(openShared(f.shared)!, 'logged\n');
    expect(readFileSync(name, 'utf8')).toBe('logged\n');
  });

  it.runIf(HAS_PROC_FD).each(Object.keys(PLANTS))('reaches the file made after it was renamed away and %s put at its name', (kind) => {
    const f = make();
    const moved = path.join(dir, 'moved.log');
    renameSync(name, moved);
    PLANTS[kind]!();
    writeThrough(openShared(f.shared)!, 'logged\n');
    expect(readFileSync(moved, 'utf8')).toBe('logged\n');
    expect(readFileSync(precious, 'utf8')).toBe('do not touch\n');
  });

  it.runIf(HAS_PROC_FD)('reaches the file made after its name was removed', () => {
    const f = make();
    rmSync(name);
    const fd = openShared(f.shared)!;
    expect(fstatSync(fd).nlink).toBe(0);
    writeThrough(fd, 'unseen\n');
    expect(lstatSync(name, { throwIfNoEntry: false })).toBeUndefined();
  });

  it('opens nothing that is not the file made: another file, or a descriptor number given to something else', () => {
    const f = make();
    writeFileSync(path.join(dir, 'other.log'), '');
    expect(openShared({ ...f.shared, path: path.join(dir, 'other.log') })).toBeNull();
    expect(openShared({ ...f.shared, ino: f.shared.ino + 1 })).toBeNull();
    expect(readFileSync(path.join(dir, 'other.log'), 'utf8')).toBe('');
  });

  it.runIf(HAS_PROC_FD)('reaches the file made by its name in its folder once the daemon is gone, before the keeper opened it', () => {
    const f = makeShared(name, dir) as HeldFile;
    f.close(); // the daemon's descriptor: gone with the daemon
    writeThrough(openShared(f.shared)!, 'logged\n');
    expect(readFileSync(name, 'utf8')).toBe('logged\n');
  });

  it.runIf(HAS_PROC_FD)('enters no other folder by that name: one swapped for a link elsewhere, holding a file of the same name', () => {
    const f = makeShared(name, dir) as HeldFile;
    f.close();
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'dw-elsewhere-'));
    try {
      renameSync(dir, `${dir}.moved`);
      symlinkSync(elsewhere, dir);
      writeFileSync(path.join(elsewhere, 'req-1.log'), 'do not touch\n');
      expect(openShared(f.shared)).toBeNull();
      expect(readFileSync(path.join(elsewhere, 'req-1.log'), 'utf8')).toBe('do not touch\n');
    } finally {
      rmSync(dir, { force: true });
      renameSync(`${dir}.moved`, dir);
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('opens nothing once the daemon has closed it and its name was taken away (the run has no log)', () => {
    const f = make();
    renameSync(name, path.join(dir, 'moved.log'));
    symlinkSync(precious, name);
    held.pop()!.close();
    expect(openShared(f.shared)).toBeNull();
    expect(readFileSync(precious, 'utf8')).toBe('do not touch\n');
  });
});
