// Reading a file the sandbox may have replaced by anything: only a regular file is read, of at most the
// cap; a FIFO, a link (to a FIFO or to a host file), a folder, a device, a leased file, a huge or
// growing file are refused at once, with the reason. Each case is made for real on the filesystem.
// On Linux what is swapped in after the first look is never opened at all: an inotify watch on the
// stand-in itself sees every open of it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HAS_PROC_FD } from '../../../../main/core/fs/linuxFd';
import { isMissing, openSpoolFile, readSpoolFile, readSpoolJson } from '../../../../main/core/spool/safeRead';
import { eventually } from '../../../helpers/host';
import { track } from '../../../helpers/processes';

let dir: string;
let outside: string;
const file = () => path.join(dir, 'host.json');

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-saferead-'));
  outside = mkdtempSync(path.join(os.tmpdir(), 'dw-saferead-outside-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

function mkfifo(p: string): void {
  const r = spawnSync('mkfifo', [p]);
  if (r.status !== 0) throw new Error(`mkfifo failed: ${r.stderr}`);
}

/** Why no device node like /dev/null (char 1,3) can be made and opened in the temporary folder, or null. */
const NO_DEVICE_NODES = ((): string | null => {
  if (process.platform !== 'linux') return 'device nodes are made with mknod on Linux only here';
  const probe = path.join(os.tmpdir(), `dw-mknod-probe-${process.pid}`);
  if (spawnSync('mknod', [probe, 'c', '1', '3']).status !== 0) return 'mknod is not allowed (needs root with CAP_MKNOD)';
  try {
    closeSync(openSync(probe, constants.O_WRONLY));
    return null;
  } catch {
    return 'a device node in the temporary folder cannot be opened (mounted nodev)';
  } finally {
    rmSync(probe);
  }
})();
const mknodNull = (p: string) => {
  const r = spawnSync('mknod', [p, 'c', '1', '3']);
  if (r.status !== 0) throw new Error(`mknod failed: ${r.stderr}`);
};

// Prints "watching", then one line per open of the watched inode and per close (for reading or for
// writing). The watch follows the inode through renames and never opens it.
const WATCH_OPENS = `import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init()
if libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20 | 0x10 | 0x08) < 0:
    sys.exit('inotify_add_watch: ' + os.strerror(ctypes.get_errno()))
print('watching', flush=True)
while True:
    buf = os.read(fd, 4096)
    i = 0
    while i < len(buf):
        _, mask, _, n = struct.unpack_from('iIII', buf, i)
        print('open' if mask & 0x20 else 'close-write' if mask & 0x08 else 'close-read', flush=True)
        i += 16 + n
`;
const NO_WATCHER = process.platform !== 'linux' ? 'inotify is Linux only' : spawnSync('python3', ['-c', 'import ctypes']).status !== 0 ? 'python3 (for the inotify watch) is missing' : null;

async function watchOpens(p: string): Promise<{ events: () => string[]; stop: () => void }> {
  const watcher = track(spawn('python3', ['-c', WATCH_OPENS, p], { stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  watcher.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const events = () => out.split('\n').filter((l) => l !== '' && l !== 'watching');
  try {
    await eventually('the inotify watch to be set', () => (out.startsWith('watching\n') ? true : undefined));
  } catch (e) {
    watcher.kill('SIGKILL');
    throw e;
  }
  return { events, stop: () => watcher.kill('SIGKILL') };
}

describe('readSpoolFile', () => {
  it('reads a regular file, and one of exactly the cap', () => {
    writeFileSync(file(), '{"v":1}');
    expect(readSpoolFile(file(), 7)).toEqual({ ok: true, bytes: Buffer.from('{"v":1}') });
  });

  it('refuses a FIFO without waiting for a writer', () => {
    mkfifo(file());
    expect(readSpoolFile(file(), 1024)).toEqual({ ok: false, reason: 'is a FIFO' });
  });

  it('refuses a symlink without following it: to a FIFO, to a host file, to a folder', () => {
    const fifo = path.join(outside, 'fifo');
    mkfifo(fifo);
    const secret = path.join(outside, 'secret');
    writeFileSync(secret, 'host secret');
    for (const target of [fifo, secret, outside]) {
      rmSync(file(), { force: true });
      symlinkSync(target, file());
      expect(readSpoolFile(file(), 1024)).toEqual({ ok: false, reason: 'is a symbolic link' });
    }
  });

  it('refuses a folder', () => {
    mkdirSync(file());
    expect(readSpoolFile(file(), 1024)).toEqual({ ok: false, reason: 'is a folder' });
  });

  it('refuses a device node (made like /dev/null)', ({ skip }) => {
    skip(NO_DEVICE_NODES !== null, NO_DEVICE_NODES ?? '');
    mknodNull(file());
    expect(readSpoolFile(file(), 1024)).toEqual({ ok: false, reason: 'is a device' });
  });

  it('refuses a huge (sparse) file by its size, without reading it', () => {
    writeFileSync(file(), '');
    truncateSync(file(), 10 * 1024 ** 3);
    expect(readSpoolFile(file(), 64 * 1024)).toEqual({ ok: false, reason: `is ${10 * 1024 ** 3} bytes, over the limit of ${64 * 1024}` });
  });

  // A regular file whose size says 0 but which holds more: what a file growing under the read looks like.
  it.skipIf(!existsSync('/proc/kallsyms'))('stops at the cap when a file holds more than its size said', () => {
    expect(statSync('/proc/kallsyms').size).toBe(0);
    expect(readSpoolFile('/proc/kallsyms', 4096)).toEqual({ ok: false, reason: 'grew past the limit of 4096 bytes' });
  });

  // The sandbox racing the host: it renames a stand-in over the name right after the host's first look
  // (the caller's check runs on that look). On Linux the look holds the object itself, so the read gets
  // the file that was looked at, and the stand-in is never opened. The test's own open of the stand-in
  // for writing comes last: its close-write marks the end of what the read could have done.
  for (const [kind, make, cannot] of [
    ['a FIFO', mkfifo, null],
    ['a device node (made like /dev/null)', mknodNull, NO_DEVICE_NODES],
  ] as const) {
    it(`never opens ${kind} swapped in after the first look: the file looked at is the file read`, async ({ skip }) => {
      skip(!HAS_PROC_FD, 'without /proc/self/fd what was opened is checked instead (the next test)');
      skip(cannot !== null || NO_WATCHER !== null, cannot ?? NO_WATCHER ?? '');
      writeFileSync(file(), '{}');
      const standIn = path.join(dir, 'stand-in');
      make(standIn);
      const watch = await watchOpens(standIn);
      try {
        let looks = 0;
        const swapOnFirstLook = () => {
          if (looks++ === 0) renameSync(standIn, file());
          return null;
        };
        expect(readSpoolFile(file(), 1024, swapOnFirstLook)).toEqual({ ok: true, bytes: Buffer.from('{}') });
        expect(looks).toBe(2); // the caller's check ran on the look and on what was opened
        expect(statSync(file()).isFile()).toBe(false); // the stand-in holds the name now
        closeSync(openSync(file(), constants.O_RDWR | constants.O_NONBLOCK));
        await eventually('the test\'s own open to be seen', () => (watch.events().includes('close-write') ? true : undefined));
        expect(watch.events()).toEqual(['open', 'close-write']);
      } finally {
        watch.stop();
      }
    });
  }

  it('refuses a FIFO swapped in after the first look where there is no O_PATH: what was opened is checked again', ({ skip }) => {
    skip(HAS_PROC_FD, 'with /proc/self/fd the swapped-in FIFO is never opened (the tests above)');
    writeFileSync(file(), '{}');
    const fifo = path.join(dir, 'stand-in');
    mkfifo(fifo);
    let looks = 0;
    // The caller's check runs on the first look (lstat) and again on what was opened (fstat): the
    // swap happens in between, as a sandbox racing the host would do it.
    const swapOnFirstLook = () => {
      if (looks++ === 0) renameSync(fifo, file());
      return null;
    };
    expect(readSpoolFile(file(), 1024, swapOnFirstLook)).toEqual({ ok: false, reason: 'is a FIFO' });
    expect(looks).toBe(1); // the kind check refused it before the caller's check was asked again
  });

  it('applies the caller\'s own refusal', () => {
    writeFileSync(file(), '{}');
    expect(readSpoolFile(file(), 1024, (st) => (st.size > 1 ? 'too big for this caller' : null))).toEqual({ ok: false, reason: 'too big for this caller' });
  });

  it('tells a missing file from an unreadable one', () => {
    const missing = readSpoolFile(file(), 1024);
    expect(!missing.ok && isMissing(missing)).toBe(true);
    mkfifo(file());
    const fifo = readSpoolFile(file(), 1024);
    expect(!fifo.ok && isMissing(fifo)).toBe(false);
  });

  // A process that holds a write lease makes every other open wait for up to lease-break-time (45 s by
  // default); the non-blocking open answers at once instead.
  it.skipIf(process.platform !== 'linux' || spawnSync('python3', ['-c', 'import fcntl']).status !== 0)('refuses a file another process holds a lease on, without waiting for it', async () => {
    writeFileSync(file(), '{}');
    const holder = track(
      spawn('python3', [
        '-c',
        'import fcntl, os, signal, sys\nsignal.signal(signal.SIGIO, signal.SIG_IGN)\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)\nprint("leased", flush=True)\nsys.stdin.read()',
        file(),
      ], { stdio: ['pipe', 'pipe', 'inherit'] }),
    );
    try {
      let out = '';
      holder.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      await eventually('the lease to be taken', () => (out.includes('leased') ? true : undefined));
      expect(readSpoolFile(file(), 1024)).toEqual({ ok: false, reason: 'is leased by another process' });
    } finally {
      holder.kill('SIGKILL');
    }
  });
});

describe('openSpoolFile', () => {
  it('hands over an open regular file with its stat, for reads of a range', () => {
    writeFileSync(file(), 'abc');
    const r = openSpoolFile(file());
    expect(r.ok && r.st.size).toBe(3);
    if (r.ok) closeSync(r.fd); // the caller owns it
  });
});

describe('readSpoolJson', () => {
  it('parses JSON, and says when it is not', () => {
    writeFileSync(file(), '{"heartbeat_at":"2026-01-01T00:00:00Z"}');
    expect(readSpoolJson(file(), 1024)).toEqual({ ok: true, value: { heartbeat_at: '2026-01-01T00:00:00Z' } });
    writeFileSync(file(), '{"cut');
    expect(readSpoolJson(file(), 1024)).toEqual({ ok: false, reason: 'is not valid JSON' });
  });
});
