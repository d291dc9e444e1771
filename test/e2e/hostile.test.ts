// Hostile entries in spool/queue/ (protocol-v1 section 1), written for real against one real daemon:
// symlinks, FIFOs, folders, oversized files, hard links, bad names and unreadable content. Each is
// refused, recorded in the audit log, moved out of the queue without being followed or read, and
// never blocks the requests behind it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import {
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import type { KeyFile, ResultDoc } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let daemon: DaemonProcess;
/** A folder outside the spool, on the same file system: symlink targets and hard links' other names. */
let outside: string;
/** Where entries are made before they are renamed into queue/ (same file system as the spool). */
let stage: string;

/** An atime far in the past: any read of the file (even under relatime) would move it forward. */
const OLD_ATIME = new Date('2001-02-03T04:05:06Z');

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

function queueNames(): string[] {
  return readdirSync(path.join(host.spool, 'queue'));
}

/** The entry in quarantine/ that is the same inode as the one we put in the queue. */
function quarantinedByIno(ino: number): { name: string; st: Stats } | undefined {
  const dir = path.join(host.spool, 'quarantine');
  for (const name of readdirSync(dir)) {
    const st = lstatSync(path.join(dir, name));
    if (st.ino === ino) return { name, st };
  }
  return undefined;
}

function rejectedAudits(query: string) {
  return host.audit(query, 'rejected');
}

/** Waits for the daemon's `rejected` audit entry about this request id. */
function auditForId(id: string, mustMatch: RegExp) {
  return eventually(`a rejected audit entry for ${id} matching ${mustMatch}`, () =>
    rejectedAudits(id).find((a) => a.request_id === id && mustMatch.test(a.message)),
  );
}

/** Waits for the daemon's `rejected` audit entry about a queue entry with this (invalid) name. */
function auditForName(name: string, mustMatch: RegExp) {
  return eventually(`a rejected audit entry for ${JSON.stringify(name)}`, () =>
    rejectedAudits('').find((a) => a.message.includes(JSON.stringify(name)) && mustMatch.test(a.message)),
  );
}

function startedAudits(id: string) {
  return host.audit(id, 'started').filter((a) => a.request_id === id);
}

/** Sets an old atime and returns the full stat to compare with afterwards. */
function freezeAtime(file: string): Stats {
  const st = statSync(file);
  utimesSync(file, OLD_ATIME, st.mtime);
  return statSync(file);
}

/**
 * Makes an entry outside the spool (same file system), notes its stat, then renames it into queue/
 * in one step: the daemon may take it at once, so it is never looked at in queue/ by the test.
 */
function place(name: string, make: (p: string) => void): Stats {
  const staged = path.join(stage, name);
  make(staged);
  const st = lstatSync(staged);
  renameSync(staged, host.queuePath(name));
  return st;
}

function mkfifo(p: string): void {
  const mk = spawnSync('mkfifo', [p], { encoding: 'utf8' });
  if (mk.status !== 0) throw new Error(`mkfifo ${p} failed: ${mk.stderr}`);
}

/** Whether this file system records reads in atime at all (it does under relatime; not under noatime). */
let atimeRecordsReads = false;

/** The checks shared by every refused entry that has a valid `<id>.json` name. */
async function expectRefusedWithResult(name: string, id: string, reason: RegExp): Promise<ResultDoc> {
  const r = await host.waitResult(id);
  expect(r).toMatchObject({ v: 1, id, op: null, state: 'rejected', exit_code: null, started_at: null });
  expect(r.error?.code).toBe('bad_envelope');
  expect(r.error?.message).toMatch(reason);
  const a = await auditForId(id, reason);
  expect(a.message).toMatch(/^bad_envelope: /);
  await eventually(`${name} to leave queue/`, () => (lstatOrNull(host.queuePath(name)) === null ? true : undefined));
  await eventually(`${name} not to linger in claimed/`, () => (lstatOrNull(path.join(host.spool, 'claimed', name)) === null ? true : undefined));
  expect(startedAudits(id)).toEqual([]);
  return r;
}

const NODE = JSON.stringify(process.execPath);

beforeAll(async () => {
  host = new TestHost(`version: 1
operations:
  - name: echo
    command: [${NODE}, "-e", "process.stdout.write(process.argv[1])", "{msg}"]
    cwd: ${JSON.stringify(path.dirname(process.execPath))}
    args:
      msg: {type: string, max_length: 200}
    scope: read
    approval: never
    timeout_s: 30
    concurrency: 4
`);
  key = host.createKey('hostile-tests', 'read');
  outside = path.join(host.root, 'outside');
  mkdirSync(outside);
  stage = path.join(host.root, 'stage');
  mkdirSync(stage);

  // Control: does a read of a file with an old atime move its atime here? (ext4/tmpfs relatime: yes)
  const control = path.join(outside, 'atime-control');
  writeFileSync(control, 'x');
  const before = freezeAtime(control);
  readFileSync(control);
  atimeRecordsReads = statSync(control).atimeMs !== before.atimeMs;

  daemon = await host.startDaemon();
});

afterAll(async () => {
  await host?.cleanup();
});

describe('hostile entries in queue/', () => {
  it('refuses a symlink without reading through it, even to a valid signed request', async () => {
    const target = path.join(outside, 'valid-request.json');
    const content = host.envelope(key, 'hs-symlink', 'echo', { msg: 'read through the symlink' });
    writeFileSync(target, content);
    const before = freezeAtime(target);
    const { ino } = place('hs-symlink.json', (p) => symlinkSync(target, p));

    await expectRefusedWithResult('hs-symlink.json', 'hs-symlink', /symbolic link/);

    // The link itself (not its target) was moved to quarantine/, still pointing where it did.
    const q = quarantinedByIno(ino);
    expect(q).toBeDefined();
    expect(q!.st.isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(host.spool, 'quarantine', q!.name))).toBe(target);
    // The target is untouched: same place, same inode, same times (never read), same content.
    const after = statSync(target);
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.size).toBe(before.size);
    if (atimeRecordsReads) expect(after.atimeMs).toBe(before.atimeMs);
    expect(readFileSync(target, 'utf8')).toBe(content);
  });

  it('refuses a FIFO without blocking on it', async () => {
    const st = place('hs-fifo.json', mkfifo);
    expect(st.isFIFO()).toBe(true);
    const ino = st.ino;

    await expectRefusedWithResult('hs-fifo.json', 'hs-fifo', /FIFO/);
    expect(quarantinedByIno(ino)?.st.isFIFO()).toBe(true);

    // Nobody ever writes to the FIFO: a daemon stuck opening or reading it would not run this.
    host.submit(key, 'hs-after-fifo', 'echo', { msg: 'not blocked' });
    const r = await host.waitResult('hs-after-fifo');
    expect(r.state).toBe('succeeded');
    expect(r.stdout).toBe('not blocked');
  });

  it('refuses a folder named like a request', async () => {
    const { ino } = place('hs-dir.json', (p) => {
      mkdirSync(p);
      writeFileSync(path.join(p, 'inside.txt'), 'kept');
    });

    await expectRefusedWithResult('hs-dir.json', 'hs-dir', /folder/);
    const q = quarantinedByIno(ino);
    expect(q?.st.isDirectory()).toBe(true);
    expect(readFileSync(path.join(host.spool, 'quarantine', q!.name, 'inside.txt'), 'utf8')).toBe('kept');
  });

  it('refuses a file over 64 KiB, even one that would otherwise be a valid request', async () => {
    // A valid signed envelope padded with whitespace (still valid JSON) to 1 MB.
    const env = host.envelope(key, 'hs-big', 'echo', { msg: 'too big to read' });
    const big = Buffer.alloc(1024 * 1024, 0x20);
    big.write(env, 0, 'utf8');
    const { ino } = place('hs-big.json', (p) => writeFileSync(p, big));

    const r = await expectRefusedWithResult('hs-big.json', 'hs-big', /1048576 bytes, over the limit/);
    expect(r.error?.message).toContain('65536');
    const q = quarantinedByIno(ino);
    expect(q?.st.isFile()).toBe(true);
    expect(q?.st.size).toBe(1024 * 1024);
  });

  it('refuses a hard link (nlink 2) and leaves its other name untouched', async () => {
    const other = path.join(outside, 'other-name.json');
    const content = host.envelope(key, 'hs-hardlink', 'echo', { msg: 'read through the hard link' });
    writeFileSync(other, content);
    const before = freezeAtime(other);
    const st = place('hs-hardlink.json', (p) => linkSync(other, p));
    expect(st.nlink).toBe(2);
    expect(st.ino).toBe(before.ino);

    await expectRefusedWithResult('hs-hardlink.json', 'hs-hardlink', /hard link/);
    const q = quarantinedByIno(before.ino);
    expect(q?.st.isFile()).toBe(true);
    const after = statSync(other);
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.size).toBe(before.size);
    if (atimeRecordsReads) expect(after.atimeMs).toBe(before.atimeMs);
    expect(readFileSync(other, 'utf8')).toBe(content);
  });

  it('refuses entries whose names are not <id>.json, with an audit entry and no result', async () => {
    const resultsBefore = readdirSync(path.join(host.spool, 'results')).sort();
    const names = [
      'bad name!.json',
      'noextension',
      'hs-wrong-ext.txt',
      '-starts-with-dash.json',
      '_starts-with-underscore.json',
      'ends-in.tmp.json',
      'ünïcödé.json',
      `${'a'.repeat(129)}.json`,
    ];
    const bad = names;
    const inos = new Map<string, number>();
    for (const n of bad) {
      // Each carries a valid signed request for the id its name would give, so accepting the name would run it.
      const id = n.endsWith('.json') ? n.slice(0, -5) : n;
      const env = host.envelope(key, id, 'echo', { msg: 'RUN-FROM-A-BAD-NAME' });
      inos.set(n, place(n, (p) => writeFileSync(p, env)).ino);
    }
    for (const n of bad) {
      const a = await auditForName(n, /not <id>\.json with a valid id/);
      expect(a.message).toMatch(/^bad_envelope: /);
      expect(a.request_id).toBeNull();
      await eventually(`${n} to leave queue/`, () => (lstatOrNull(host.queuePath(n)) === null ? true : undefined));
      expect(quarantinedByIno(inos.get(n)!)?.st.isFile()).toBe(true);
    }
    // A request behind them goes through (so the scan that saw them has finished), and none of the
    // bad names produced a result file.
    host.submit(key, 'hs-after-names', 'echo', { msg: 'after bad names' });
    expect((await host.waitResult('hs-after-names')).state).toBe('succeeded');
    const resultsAfter = readdirSync(path.join(host.spool, 'results')).filter((n) => !n.startsWith('hs-after-names.'));
    expect(resultsAfter.sort()).toEqual(resultsBefore);
    expect(host.audit('', 'started').filter((s) => s.message.includes('RUN-FROM-A-BAD-NAME'))).toEqual([]);
  });

  // Listing queue/ as text would turn 0xFF 0xFE into U+FFFD, and such an entry could never be found
  // again to be moved away: the daemon lists folders as raw bytes.
  it('refuses an entry whose name is not valid UTF-8 (a legal Linux file name)', async () => {
    const rawName = Buffer.concat([Buffer.from('hs-raw-'), Buffer.from([0xff, 0xfe]), Buffer.from('.json')]);
    const staged = Buffer.concat([Buffer.from(stage + '/'), rawName]);
    writeFileSync(staged, 'x');
    const ino = lstatSync(staged).ino;
    renameSync(staged, Buffer.concat([Buffer.from(path.join(host.spool, 'queue') + '/'), rawName]));
    const stillThere = () => readdirSync(path.join(host.spool, 'queue'), { encoding: 'buffer' }).some((b) => b.equals(rawName));
    // Moved out of the queue and recorded, like every other bad name (the daemon may have done so already),
    // by the rescan: an event naming no request asks for nothing, and while events work the rescan
    // comes every 30 ticks (6 s here).
    await eventually('the non-UTF-8 name to leave queue/', () => (stillThere() ? undefined : true), 20_000);
    expect(quarantinedByIno(ino)).toBeDefined();
    await eventually('a rejected audit entry for the non-UTF-8 name', () => rejectedAudits('hs-raw').find((a) => a.request_id === null), 5000);
  });

  it('rejects a valid-id file whose content is garbage', async () => {
    host.writeQueueFile('hs-garbage.json', 'GET / HTTP/1.1\r\n{{{ this is not a request');
    await expectRefusedWithResult('hs-garbage.json', 'hs-garbage', /not JSON/);
  });

  it('rejects a file that is not valid UTF-8, even where lossy decoding would leave valid JSON', async () => {
    const env = host.envelope(key, 'hs-utf8', 'echo', { msg: 'MARK' });
    const [a, b] = env.split('MARK');
    // 0xC3 0x28 is an invalid two-byte sequence, inside a JSON string.
    host.writeQueueFile('hs-utf8.json', Buffer.concat([Buffer.from(a!), Buffer.from([0xc3, 0x28]), Buffer.from(b!)]));
    await expectRefusedWithResult('hs-utf8.json', 'hs-utf8', /UTF-8/);
  });

  it('rejects an empty file', async () => {
    host.writeQueueFile('hs-empty.json', '');
    await expectRefusedWithResult('hs-empty.json', 'hs-empty', /not JSON/);
  });

  it('leaves the result of an already bound id unchanged when a hostile entry reuses its name', async () => {
    host.submit(key, 'hs-bound', 'echo', { msg: 'the real one' });
    const good = await host.waitResult('hs-bound');
    expect(good.state).toBe('succeeded');
    const text = readFileSync(path.join(host.spool, 'results', 'hs-bound.json'), 'utf8');

    const target = path.join(outside, 'bound-target.json');
    writeFileSync(target, host.envelope(key, 'hs-bound', 'echo', { msg: 'the real one' }));
    place('hs-bound.json', (p) => symlinkSync(target, p));
    await eventually('a rejected audit entry for the symlinked hs-bound', () =>
      rejectedAudits('hs-bound').find((a) => a.request_id === 'hs-bound' && /symbolic link/.test(a.message)),
    );
    await eventually('hs-bound.json to leave queue/', () => (lstatOrNull(host.queuePath('hs-bound.json')) === null ? true : undefined));

    host.writeQueueFile('hs-bound.json', 'garbage');
    await eventually('a rejected audit entry for garbage hs-bound', () =>
      rejectedAudits('hs-bound').find((a) => a.request_id === 'hs-bound' && /not JSON/.test(a.message)),
    );
    await eventually('hs-bound.json to leave queue/', () => (lstatOrNull(host.queuePath('hs-bound.json')) === null ? true : undefined));
    expect(readFileSync(path.join(host.spool, 'results', 'hs-bound.json'), 'utf8')).toBe(text);
  });

  it('still runs a valid request after all of them, and the daemon is still up', async () => {
    host.submit(key, 'hs-final', 'echo', { msg: 'still serving' });
    const r = await host.waitResult('hs-final');
    expect(r.state).toBe('succeeded');
    expect(r.stdout).toBe('still serving');
    expect(daemon.proc.exitCode).toBeNull();
    expect(daemon.proc.signalCode).toBeNull();
    const hostJson = JSON.parse(readFileSync(path.join(host.spool, 'host.json'), 'utf8')) as { heartbeat_at: string; up: boolean };
    expect(hostJson.up).toBe(true);
    expect(Date.now() - Date.parse(hostJson.heartbeat_at)).toBeLessThan(10_000);
    // Nothing above made the daemon throw.
    expect(host.audit('', 'internal_error')).toEqual([]);
    expect(daemon.stderr).not.toMatch(/while handling/);
  });
});

describe('a burst of hostile and valid entries at once', () => {
  it('runs every valid request of 20, between 20 hostile entries', async () => {
    const burstStage = path.join(host.root, 'burst-stage');
    mkdirSync(burstStage);
    const hostileIds: string[] = [];
    const badNames: string[] = [];
    const okIds: string[] = [];
    const kinds = ['symlink', 'fifo', 'dir', 'big', 'hardlink', 'garbage', 'badname'] as const;
    for (let i = 0; i < 20; i++) {
      const n = String(i).padStart(2, '0');
      const kind = kinds[i % kinds.length]!;
      const id = `burst-${n}-${kind}`;
      const staged = path.join(burstStage, `${id}.json`);
      const env = host.envelope(key, id, 'echo', { msg: `hostile ${kind}` });
      switch (kind) {
        case 'symlink': {
          const t = path.join(outside, `${id}-target.json`);
          writeFileSync(t, env);
          symlinkSync(t, staged);
          break;
        }
        case 'fifo':
          mkfifo(staged);
          break;
        case 'dir':
          mkdirSync(staged);
          break;
        case 'big': {
          const big = Buffer.alloc(1024 * 1024, 0x20);
          big.write(env, 0, 'utf8');
          writeFileSync(staged, big);
          break;
        }
        case 'hardlink': {
          const o = path.join(outside, `${id}-other.json`);
          writeFileSync(o, env);
          linkSync(o, staged);
          break;
        }
        case 'garbage':
          writeFileSync(staged, '\u0000\u0001 not json');
          break;
        case 'badname':
          break;
      }
      if (kind === 'badname') {
        const name = `burst ${n} bad name!.json`;
        writeFileSync(path.join(burstStage, name), env);
        badNames.push(name);
      } else hostileIds.push(id);
      const okId = `burst-${n}-ok`;
      writeFileSync(path.join(burstStage, `${okId}.json`), host.envelope(key, okId, 'echo', { msg: `ok ${n}` }));
      okIds.push(okId);
    }
    // Everything into queue/ at once (renames within one file system).
    for (const name of readdirSync(burstStage)) renameSync(path.join(burstStage, name), host.queuePath(name));

    for (const id of okIds) {
      const r = await host.waitResult(id, undefined, 30_000);
      expect(r.state, `${id}: ${JSON.stringify(r.error)}`).toBe('succeeded');
      expect(r.stdout).toBe(`ok ${id.slice(6, 8)}`);
    }
    for (const id of hostileIds) {
      const r = await host.waitResult(id);
      expect(r.state, id).toBe('rejected');
      expect(r.error?.code, id).toBe('bad_envelope');
      expect(startedAudits(id), id).toEqual([]);
    }
    for (const name of badNames) await auditForName(name, /not <id>\.json/);
    await eventually('queue/ to be empty of the burst', () => (queueNames().some((n) => n.startsWith('burst')) ? undefined : true));
    expect(daemon.proc.exitCode).toBeNull();
    expect(host.audit('', 'internal_error')).toEqual([]);
  });
});
