// Claiming queue entries: an atomic rename into the host's own claimed/ folder (so one claimer wins),
// and everything that is not a plain <id>.json file of sane size moved to quarantine/ as it is,
// without being followed, opened or read. readClaimed checks the claimed file again as it opens it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { claim, entryPath, firstEntries, readClaimed, readyEntries, type Entry } from '../../../../main/core/spool/claim';
import { createSpool, ensurePrivateDir, type SpoolPaths } from '../../../../main/core/spool/layout';
import { MAX_REQUEST_BYTES } from '../../../../shared/protocol/types';
import { eventually } from '../../../helpers/host';
import { AS_USER, outputOf, projectFile, spawnTsx } from '../../../helpers/processes';

let root: string;
let paths: SpoolPaths;
/** This host's folder under claimed/, and another host's (two hosts can share a spool). */
let mine: string;
let theirs: string;
/** A folder outside the spool, same file system: symlink targets and hard links' other names. */
let outside: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'dw-claim-'));
  paths = createSpool(path.join(root, 'spool'));
  mine = path.join(paths.claimed, 'host-a');
  theirs = path.join(paths.claimed, 'host-b');
  ensurePrivateDir(mine);
  ensurePrivateDir(theirs);
  outside = path.join(root, 'outside');
  mkdirSync(outside);
});

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

const inQueue = (name: string) => path.join(paths.queue, name);
const entry = (name: string | Buffer): Entry => {
  const raw = Buffer.isBuffer(name) ? name : Buffer.from(name);
  return { raw, name: raw.toString('utf8') };
};

function mkfifo(p: string): void {
  const mk = spawnSync('mkfifo', [p], { encoding: 'utf8' });
  if (mk.status !== 0) throw new Error(`mkfifo ${p} failed: ${mk.stderr}`);
}

describe('readyEntries', () => {
  it('lists entries in byte order and skips writes in progress (.name and name.tmp)', () => {
    for (const n of ['b.json', 'a.json', '.hidden.json', 'c.json.tmp', 'B.json']) writeFileSync(inQueue(n), '{}');
    expect(readyEntries(paths.queue).map((e) => e.name)).toEqual(['B.json', 'a.json', 'b.json']);
  });

  it('finds a name that is not valid UTF-8 again by its raw bytes', () => {
    const raw = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('.json')]);
    writeFileSync(entryPath(paths.queue, entry(raw)), 'x');
    const [e] = readyEntries(paths.queue);
    expect(e!.raw).toEqual(raw);
    expect(e!.name).toBe('\ufffd\ufffd.json');
    expect(lstatSync(entryPath(paths.queue, e!)).isFile()).toBe(true);
  });
});

describe('firstEntries', () => {
  it('returns the first entries by name, at most the limit, and says whether some were left', () => {
    const names = Array.from({ length: 50 }, (_, i) => `r-${String(i).padStart(2, '0')}.json`);
    for (const n of [...names].reverse()) writeFileSync(inQueue(n), '{}');
    writeFileSync(inQueue('.r-00.json.tmp'), ''); // a write in progress: never listed
    for (const limit of [1, 3, 7, 24, 25, 49]) {
      const { entries, more } = firstEntries(paths.queue, limit);
      expect(entries.map((e) => e.name)).toEqual(names.slice(0, limit));
      expect(more).toBe(true);
    }
    expect(firstEntries(paths.queue, 50)).toMatchObject({ more: false });
    expect(firstEntries(paths.queue, 1000).entries.map((e) => e.name)).toEqual(names);
  });
});

describe('claim', () => {
  it("claims a request by renaming it into the claimer's folder: gone from the queue, same file", () => {
    writeFileSync(inQueue('req-1.json'), '{"v":1}');
    const ino = statSync(inQueue('req-1.json')).ino;
    const c = claim(paths, entry('req-1.json'), mine);
    expect(c).toEqual({ kind: 'claimed', id: 'req-1', file: path.join(mine, 'req-1.json') });
    expect(existsSync(inQueue('req-1.json'))).toBe(false);
    expect(statSync(path.join(mine, 'req-1.json')).ino).toBe(ino);
    expect(readFileSync(path.join(mine, 'req-1.json'), 'utf8')).toBe('{"v":1}');
  });

  it('a second claimer of the same entry loses: it is told the file is gone', () => {
    writeFileSync(inQueue('req-2.json'), '{}');
    const seenByBoth = readyEntries(paths.queue)[0]!; // both hosts listed the queue before either claimed
    expect(claim(paths, seenByBoth, mine).kind).toBe('claimed');
    expect(claim(paths, seenByBoth, theirs)).toEqual({ kind: 'gone' });
    expect(readdirSync(theirs)).toEqual([]);
    expect(readdirSync(paths.quarantine)).toEqual([]);
  });

  it('accepts a request of exactly the size limit', () => {
    writeFileSync(inQueue('req-max.json'), Buffer.alloc(MAX_REQUEST_BYTES, 0x20));
    expect(claim(paths, entry('req-max.json'), mine).kind).toBe('claimed');
  });

  it('two claimers racing in two processes over one queue take every request exactly once', async () => {
    const n = 400;
    for (let i = 0; i < n; i++) writeFileSync(inQueue(`race-${String(i).padStart(4, '0')}.json`), '{}');
    const worker = (claimedDir: string) =>
      spawnTsx(`
        import { writeFileSync } from 'node:fs';
        import { claim, readyEntries } from ${JSON.stringify(projectFile('main/core/spool/claim.ts'))};
        import { spoolPaths } from ${JSON.stringify(projectFile('main/core/spool/layout.ts'))};
        const paths = spoolPaths(${JSON.stringify(paths.root)});
        process.stdin.once('data', () => {
          const claimed = [];
          for (const e of readyEntries(paths.queue)) {
            const c = claim(paths, e, ${JSON.stringify(claimedDir)});
            if (c.kind === 'claimed') claimed.push(c.id);
            else if (c.kind !== 'gone') throw new Error('refused ' + e.name);
          }
          process.stdout.write(JSON.stringify(claimed));
        });
        writeFileSync(${JSON.stringify(claimedDir + '.ready')}, '');
      `);
    const a = worker(mine);
    const b = worker(theirs);
    children.push(a, b);
    const outs = [outputOf(a), outputOf(b)];
    // Both are started and waiting before either is let go, so that their claims overlap.
    await eventually('both claimers to be ready', () => {
      if (a.exitCode !== null || b.exitCode !== null) throw new Error('a claimer exited before it was ready');
      return existsSync(`${mine}.ready`) && existsSync(`${theirs}.ready`) ? true : undefined;
    });
    a.stdin!.end('go');
    b.stdin!.end('go');
    const results = (await Promise.all(outs)).map((o) => {
      expect(o.code, o.stderr).toBe(0);
      return JSON.parse(o.stdout) as string[];
    });
    // Where both saw an entry, the loser was told it was gone; either way each request has one claimer.
    const all = results.flat();
    expect(all.length).toBe(n);
    expect(new Set(all).size).toBe(n);
    expect(readdirSync(paths.queue)).toEqual([]);
    expect(readdirSync(mine).length + readdirSync(theirs).length).toBe(n);
  });

  it('says an entry is gone when it vanished before the claim', () => {
    expect(claim(paths, entry('vanished.json'), mine)).toEqual({ kind: 'gone' });
  });

  describe('refuses and quarantines, as it is and without blocking', () => {
    /** Claims `name`, expects it refused for `reason` and moved (the same inode) to quarantine/. */
    function expectQuarantined(name: string | Buffer, reason: RegExp, id: string | null) {
      const e = entry(name);
      const before = lstatSync(entryPath(paths.queue, e));
      const c = claim(paths, e, mine);
      if (c.kind !== 'refused') throw new Error(`expected a refusal, got ${JSON.stringify(c)}`);
      expect(c.reason).toMatch(reason);
      expect(c.id).toBe(id);
      expect(c.name).toBe(e.name);
      expect(path.dirname(c.movedTo!)).toBe(paths.quarantine);
      const after = lstatSync(c.movedTo!);
      expect(after.ino).toBe(before.ino);
      expect(readdirSync(paths.queue)).toEqual([]);
      expect(readdirSync(mine)).toEqual([]);
      return { movedTo: c.movedTo!, st: after };
    }

    it('a symlink, even to a valid file: the link is moved, its target untouched', () => {
      const target = path.join(outside, 'request.json');
      writeFileSync(target, '{"looks":"valid"}');
      symlinkSync(target, inQueue('req-link.json'));
      const q = expectQuarantined('req-link.json', /^is a symbolic link$/, 'req-link');
      expect(q.st.isSymbolicLink()).toBe(true);
      expect(readlinkSync(q.movedTo)).toBe(target);
      expect(readFileSync(target, 'utf8')).toBe('{"looks":"valid"}');
    });

    it('a FIFO, without opening it (nobody ever writes to it)', () => {
      mkfifo(inQueue('req-fifo.json'));
      expect(expectQuarantined('req-fifo.json', /^is a FIFO$/, 'req-fifo').st.isFIFO()).toBe(true);
    });

    it('a folder named like a request, with what is inside it', () => {
      mkdirSync(inQueue('req-dir.json'));
      writeFileSync(path.join(inQueue('req-dir.json'), 'inside.txt'), 'kept');
      const q = expectQuarantined('req-dir.json', /^is a folder$/, 'req-dir');
      expect(readFileSync(path.join(q.movedTo, 'inside.txt'), 'utf8')).toBe('kept');
    });

    it('a unix socket', async () => {
      const server = net.createServer();
      await new Promise<void>((r) => server.listen(inQueue('req-sock.json'), r));
      try {
        expect(expectQuarantined('req-sock.json', /^is a socket$/, 'req-sock').st.isSocket()).toBe(true);
      } finally {
        await new Promise((r) => server.close(r));
      }
    });

    it('a hard link: its other name keeps its content', () => {
      const other = path.join(outside, 'other.json');
      writeFileSync(other, '{"other":"name"}');
      linkSync(other, inQueue('req-hard.json'));
      expectQuarantined('req-hard.json', /^is a hard link \(2 names\)$/, 'req-hard');
      expect(readFileSync(other, 'utf8')).toBe('{"other":"name"}');
    });

    it('a file one byte over the size limit', () => {
      writeFileSync(inQueue('req-big.json'), Buffer.alloc(MAX_REQUEST_BYTES + 1, 0x20));
      expectQuarantined('req-big.json', new RegExp(`^is ${MAX_REQUEST_BYTES + 1} bytes, over the limit of ${MAX_REQUEST_BYTES}$`), 'req-big');
    });

    it.each(['notes.txt', 'noextension', '-dash.json', 'sp ace.json', 'ends-in.tmp.json', `${'a'.repeat(129)}.json`])(
      'a badly named file: %s (no id)',
      (name) => {
        writeFileSync(inQueue(name), '{}');
        const q = expectQuarantined(name, /not <id>\.json/, null);
        expect(path.basename(q.movedTo).endsWith(`-${encodeURIComponent(name).slice(0, 120)}`)).toBe(true);
      },
    );

    it('a name that is not valid UTF-8 (moved by its raw bytes)', () => {
      const raw = Buffer.concat([Buffer.from('bad-'), Buffer.from([0xc3, 0x28]), Buffer.from('.json')]);
      writeFileSync(entryPath(paths.queue, entry(raw)), '{}');
      expectQuarantined(raw, /not <id>\.json/, null);
    });

    it('the name is checked first: a FIFO with a bad name is moved without being opened either', () => {
      mkfifo(inQueue('bad name.json'));
      expect(expectQuarantined('bad name.json', /not <id>\.json/, null).st.isFIFO()).toBe(true);
    });
  });
});

const asUser = AS_USER;

describe.skipIf(asUser === null)('claim, by a host without the power to override permissions', () => {
  /** Claims every queue entry in a child process as such a host; what each claim returned, or threw. */
  async function claimAllAsUser(): Promise<Record<string, { kind: string; reason?: string } | { threw: string }>> {
    const child = spawnTsx(
      `
      import { claim, readyEntries } from ${JSON.stringify(projectFile('main/core/spool/claim.ts'))};
      import { spoolPaths } from ${JSON.stringify(projectFile('main/core/spool/layout.ts'))};
      const paths = spoolPaths(${JSON.stringify(paths.root)});
      const out = {};
      for (const e of readyEntries(paths.queue)) {
        try {
          out[e.name] = claim(paths, e, ${JSON.stringify(mine)});
        } catch (err) {
          out[e.name] = { threw: err.code };
        }
      }
      process.stdout.write(JSON.stringify(out));
      `,
      { wrapper: asUser! },
    );
    children.push(child);
    const o = await outputOf(child);
    expect(o.code, o.stderr).toBe(0);
    return JSON.parse(o.stdout) as Record<string, { kind: string; reason?: string } | { threw: string }>;
  }

  it('moves a folder it may not write to (moving a folder needs write permission on it)', async () => {
    mkdirSync(inQueue('req-ro.json'), { mode: 0o500 });
    expect((await claimAllAsUser())['req-ro.json']).toMatchObject({ kind: 'refused', reason: 'is a folder' });
    expect(readdirSync(paths.queue)).toEqual([]);
  });

  // A folder the sandbox made mode 000 cannot be opened to be read; on Linux it is opened with O_PATH
  // and chmod-ed through /proc/self/fd, elsewhere it cannot be moved (see docs/SECURITY.md).
  it.skipIf(process.platform !== 'linux')('moves a folder it may not even read (mode 000)', async () => {
    mkdirSync(inQueue('req-none.json'), { mode: 0o000 });
    expect((await claimAllAsUser())['req-none.json']).toMatchObject({ kind: 'refused', reason: 'is a folder' });
    expect(readdirSync(paths.queue)).toEqual([]);
  });
});

describe('readClaimed (the entry may have been swapped after the claim)', () => {
  const file = () => path.join(mine, 'req-1.json');

  it('reads a plain file', () => {
    writeFileSync(file(), '{"v":1}');
    expect(readClaimed(file())).toEqual({ ok: true, bytes: Buffer.from('{"v":1}') });
  });

  it('refuses a symlink without following it, even to a FIFO', () => {
    const fifo = path.join(outside, 'fifo');
    mkfifo(fifo);
    symlinkSync(fifo, file());
    expect(readClaimed(file())).toEqual({ ok: false, reason: 'is a symbolic link' });
  });

  it('refuses a FIFO without blocking on it', () => {
    mkfifo(file());
    expect(readClaimed(file())).toEqual({ ok: false, reason: 'is a FIFO' });
  });

  it('refuses a folder', () => {
    mkdirSync(file());
    expect(readClaimed(file())).toEqual({ ok: false, reason: 'is a folder' });
  });

  it('refuses a file that became a hard link', () => {
    writeFileSync(file(), '{}');
    linkSync(file(), path.join(outside, 'second-name'));
    expect(readClaimed(file())).toEqual({ ok: false, reason: 'is a hard link (2 names)' });
  });

  it('refuses a file over the limit, and reads one of exactly the limit', () => {
    writeFileSync(file(), Buffer.alloc(MAX_REQUEST_BYTES + 1, 0x20));
    expect(readClaimed(file())).toEqual({ ok: false, reason: `is ${MAX_REQUEST_BYTES + 1} bytes, over the limit of ${MAX_REQUEST_BYTES}` });
    writeFileSync(file(), Buffer.alloc(MAX_REQUEST_BYTES, 0x20));
    const r = readClaimed(file());
    expect(r.ok && r.bytes.length).toBe(MAX_REQUEST_BYTES);
  });

  it('says why a file that is gone cannot be read', () => {
    expect(readClaimed(file())).toEqual({ ok: false, reason: 'cannot be opened (ENOENT)' });
  });

  // A regular file whose size says 0 but which holds megabytes: what a file growing under the read looks like.
  it.skipIf(!existsSync('/proc/kallsyms'))('stops reading at the limit when a file holds more than its size said', () => {
    expect(statSync('/proc/kallsyms').size).toBe(0);
    expect(readClaimed('/proc/kallsyms')).toEqual({ ok: false, reason: `grew past the limit of ${MAX_REQUEST_BYTES} bytes` });
  });
});
