// Reading a file the sandbox may have replaced by anything: only a regular file is read, of at most the
// cap; a FIFO, a link (to a FIFO or to a host file), a folder, a device, a leased file, a huge or
// growing file are refused at once, with the reason. Each case is made for real on the filesystem.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

const CAN_MKNOD = process.platform === 'linux' && spawnSync('mknod', [path.join(os.tmpdir(), `dw-mknod-probe-${process.pid}`), 'c', '1', '3']).status === 0;
if (CAN_MKNOD) rmSync(path.join(os.tmpdir(), `dw-mknod-probe-${process.pid}`));

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

  it.skipIf(!CAN_MKNOD)('refuses a device node (made like /dev/null)', () => {
    spawnSync('mknod', [file(), 'c', '1', '3']);
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

  it('refuses a FIFO swapped in after the first look: what was opened is checked again', () => {
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
