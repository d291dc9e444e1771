// The run keeper with its real process (keeperMain.ts through tsx): a run started there ends with the
// outcome, output and log the in-process executor gives; terminate() reaches its process group; the
// keeper's cwd is nobody's folder. It outlives its daemon: a run left in its hands goes on, and the next
// daemon finds it (still running, or ended while no daemon was connected, its end then on disk); a
// keeper of another version is drained and replaced. When the keeper dies, a run it started rejects
// with KeeperLost (its processes go on, to be found by pid), and the next start gets a new keeper.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IN_PROCESS, Keeper, KEEPER_V8_FLAGS, KeeperLost, nodeKeeper, type RunStarter } from '../../../../main/core/exec/keeper';
import { pidFile } from '../../../../main/core/exec/keeperFiles';
import { makeShared, TAKEN, type HeldFile } from '../../../../main/core/exec/sharedFile';
import { startRun } from '../../../../main/core/exec/executor';
import type { RunPlan } from '../../../../main/core/allowlist/plan';
import { OUTPUT_EXCERPT_BYTES } from '../../../../shared/protocol/types';
import { eventually } from '../../../helpers/host';
import { alive, groupRunning, stopGroups, trackGroup } from '../../../helpers/processes';

const GRACE_MS = 200;
let dir: string;
/** The keeper's folder (a home's keeper/). */
let kdir: string;
let keeper: Keeper;
/** Keepers this test made, stopped after it; and keeper processes, killed after it (they outlive the Keeper). */
const keepers: Keeper[] = [];
const keeperPids = new Set<number>();

/** A Keeper (`idleMs`, `version`: its idle time and version; `folder`: its keeper folder, by default
 *  the test's: one Keeper at a time there, as one daemon at a time holds a home), stopped after the test. */
function keeperFor(idleMs?: number, version?: string, folder = kdir): Keeper {
  const k = new Keeper(folder, nodeKeeper(), idleMs, version);
  keepers.push(k);
  return k;
}

/** The pid of the keeper `k` is connected to, remembered for the cleanup. */
function pidOf(k: Keeper): number {
  keeperPids.add(k.pid!);
  return k.pid!;
}

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-keeper-'));
  kdir = path.join(dir, 'keeper');
  keeper = keeperFor();
});

afterEach(async () => {
  await Promise.all(keepers.splice(0).map((k) => k.stop()));
  stopGroups();
  for (const pid of keeperPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  keeperPids.clear();
  rmSync(dir, { recursive: true, force: true });
});

function plan(argv: string[], o: Partial<RunPlan> = {}): RunPlan {
  return { op: 'test', argv, cwd: dir, env: {}, timeout_s: 60, max_output_bytes: 64 * 1024, concurrency: 1, cost: 1, scope: 'read', approval: 'never', ...o };
}

const digestOf = (file: string) => {
  const bytes = readFileSync(file);
  return { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
};

/** The run's log as the daemon makes it (sharedFile.ts). */
function made(file: string): HeldFile {
  const f = makeShared(file);
  if (f === null || f === TAKEN) throw new Error(`could not make ${file}`);
  return f;
}

/** Where a held file's descriptor leads in this process, or null once it is closed. */
const heldTarget = (f: HeldFile) => {
  try {
    return readlinkSync(f.shared.path);
  } catch {
    return null;
  }
};

/** A run that waits for the file `go` in `d`, writing nothing. */
const gatedIn = (d: string) => ['/bin/sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.05; done', path.join(d, 'go')];

describe('the keeper process', () => {
  it('runs with a small young generation and without V8 background tasks (cheaper forks and runs)', async () => {
    const h = await keeper.start('req-flags', plan(['/bin/true']), null, GRACE_MS);
    await h.done;
    const argv = readFileSync(`/proc/${pidOf(keeper)}/cmdline`, 'utf8').split('\0');
    for (const flag of KEEPER_V8_FLAGS) expect(argv).toContain(flag);
  });

  it.runIf(process.platform === 'linux')('runs in a session of its own, its pid in the folder, which only its user can enter', async () => {
    await (await keeper.start('req-sid', plan(['/bin/true']), null, GRACE_MS)).done;
    const pid = pidOf(keeper);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const sid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
    expect(sid).toBe(pid);
    expect(readFileSync(pidFile(kdir), 'utf8').trim()).toBe(String(pid));
    expect(statSync(kdir).mode & 0o777).toBe(0o700);
  });
});

describe('a run started by the keeper', () => {
  it('ends with the outcome, output and log of the same run in the daemon process', async () => {
    // stdout alone: the log interleaves the streams in the order their pipes are read, which differs
    // between two runs (stderr's way through the keeper is shown below, without a log).
    const argv = ['/bin/sh', '-c', 'echo out; printf "%s" "$DUMBWAITER_REQUEST_ID"; exit 3'];
    const there = path.join(dir, 'there.log');
    const here = path.join(dir, 'here.log');
    const h = await keeper.start('req-s', plan(argv, { max_output_bytes: 6 }), made(there), GRACE_MS);
    expect(h.pid).not.toBeNull();
    expect(h.pid).not.toBe(process.pid);
    expect(h.marker).toMatch(/^[0-9a-f]{32}$/);
    const o = await h.done;
    const local = await startRun('req-s', plan(argv, { max_output_bytes: 6 }), openSync(here, 'wx'), GRACE_MS).done;
    expect(o).toMatchObject({ exit_code: 3, signal: null, error: null, terminated: null, stdout: local.stdout, stderr: local.stderr, stdout_truncated: local.stdout_truncated });
    expect(o.stdout_truncated).toBe(true);
    expect(readFileSync(there, 'utf8')).toBe(readFileSync(here, 'utf8'));
    expect(o.log).toEqual(digestOf(there));
  });

  it('carries output of any bytes as the executor kept it: control bytes, invalid UTF-8, characters of every width', async () => {
    const argv = ['/bin/sh', '-c', 'printf "a\\000b\\001\\033[2J\\377\\376 é € 😀\\n"; printf "\\000\\200z" >&2'];
    const o = await (await keeper.start('req-b', plan(argv), null, GRACE_MS)).done;
    const local = await startRun('req-b', plan(argv), null, GRACE_MS).done;
    expect(o.stdout).toBe('a\0b\x01\x1b[2J\ufffd\ufffd é € 😀\n');
    expect(o).toMatchObject({ stdout: local.stdout, stderr: local.stderr });
    expect(o.stderr).toBe('\0\ufffdz');
  });

  it('survives 64 MiB of NUL bytes on stdout and stderr under a 64 MiB limit: the excerpts come back, the log holds it all', async () => {
    const argv = ['/bin/sh', '-c', 'head -c 67108864 /dev/zero; head -c 67108864 /dev/zero >&2'];
    const log = path.join(dir, 'zeros.log');
    const h = await keeper.start('req-z', plan(argv, { max_output_bytes: 64 * 1024 * 1024 }), made(log), GRACE_MS);
    const pid = pidOf(keeper);
    const o = await h.done;
    expect(o).toMatchObject({ exit_code: 0, stdout_truncated: true, stderr_truncated: true });
    expect(o.stdout).toBe('\0'.repeat(OUTPUT_EXCERPT_BYTES));
    expect(o.stderr).toBe('\0'.repeat(OUTPUT_EXCERPT_BYTES));
    expect(o.log).toEqual(digestOf(log));
    expect(keeper.pid).toBe(pid);
    expect(alive(pid)).toBe(true);
  });

  it('writes the log made in a folder reached through a descriptor of the daemon (a pinned results folder)', async () => {
    const results = path.join(dir, 'results');
    mkdirSync(results);
    const fd = openSync(results, 'r');
    try {
      const o = await (await keeper.start('req-p', plan(['/bin/echo', 'pinned']), made(`/proc/self/fd/${fd}/req-p.log`), GRACE_MS)).done;
      expect(readFileSync(path.join(results, 'req-p.log'), 'utf8')).toBe('pinned\n');
      expect(o.log).toEqual(digestOf(path.join(results, 'req-p.log')));
    } finally {
      closeSync(fd);
    }
  });

  it('ends the run with its process group on terminate()', async () => {
    const h = await keeper.start('req-t', plan(['/bin/sh', '-c', 'sleep 300 & wait']), made(path.join(dir, 'req-t.log')), GRACE_MS);
    trackGroup(h.pid!);
    await eventually('the run to have a child', () => (groupRunning(h.pid!) ? true : undefined));
    h.terminate('cancel');
    expect(await h.done).toMatchObject({ terminated: 'cancel', error: null });
    expect(groupRunning(h.pid!)).toBe(false);
  });

  it('fails a program that cannot start as spawn_failed, and the keeper goes on', async () => {
    const o = await (await keeper.start('req-f', plan([path.join(dir, 'missing')]), null, GRACE_MS)).done;
    expect(o.error).toMatchObject({ code: 'spawn_failed' });
    expect((await (await keeper.start('req-ok', plan(['/bin/true']), null, GRACE_MS)).done).exit_code).toBe(0);
  });

  it.runIf(process.platform === 'linux')('keeps no folder in use: its working folder is the root', async () => {
    await keeper.start('req-w', plan(['/bin/true']), null, GRACE_MS);
    expect(readlinkSync(`/proc/${pidOf(keeper)}/cwd`)).toBe('/');
  });
});

// The sandbox can rename the log the daemon made, and put a folder, a link or its own text at its
// name, before the keeper opens it: the run writes to the file the daemon made, or to nothing.
describe.each<[string, () => RunStarter]>([
  ['the keeper', () => keeper],
  ['the daemon\'s own process', () => IN_PROCESS],
])('the live log a run started in %s writes', (_, starter) => {
  const gated = (d: string) => ['/bin/sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.05; done; echo late', path.join(d, 'go')];

  it.runIf(process.platform === 'linux').each(['a folder', 'a symlink to a host file', 'forged text'])('is the file the daemon made, when its name was taken away and %s put there first', async (kind) => {
    const precious = path.join(dir, 'precious.txt');
    writeFileSync(precious, 'do not touch\n');
    const name = path.join(dir, 'req-r.log');
    const log = made(name);
    const moved = path.join(dir, 'moved.log');
    renameSync(name, moved);
    if (kind === 'a folder') mkdirSync(name);
    else if (kind === 'forged text') writeFileSync(name, 'All tests PASSED\n');
    else symlinkSync(precious, name);
    const h = await starter().start('req-r', plan(gated(dir)), log, GRACE_MS);
    trackGroup(h.pid!);
    expect(heldTarget(log)).not.toBe(moved); // the daemon's descriptor is closed once the run has its own
    writeFileSync(path.join(dir, 'go'), '');
    const o = await h.done;
    expect(readFileSync(moved, 'utf8')).toBe('late\n');
    expect(o.log).toEqual(digestOf(moved));
    expect(readFileSync(precious, 'utf8')).toBe('do not touch\n');
    if (kind === 'forged text') expect(readFileSync(name, 'utf8')).toBe('All tests PASSED\n');
  });

  it('is none when the file named is not the one the daemon made: the run goes on', async () => {
    const log = made(path.join(dir, 'req-x.log'));
    const other = path.join(dir, 'other.log');
    writeFileSync(other, '');
    const stranger: HeldFile = { shared: { ...log.shared, path: other }, close: () => log.close() };
    const o = await (await starter().start('req-x', plan(['/bin/echo', 'unlogged']), stranger, GRACE_MS)).done;
    expect(o).toMatchObject({ exit_code: 0, stdout: 'unlogged\n', log: null });
    expect(readFileSync(other, 'utf8')).toBe('');
    expect(heldTarget(log)).not.toBe(path.join(dir, 'req-x.log'));
  });
});

describe('a keeper whose daemon is gone', () => {
  it('goes on with the run, whole; the next daemon finds it running, follows it to its end, and the keeper exits', async () => {
    const log = path.join(dir, 'req-o.log');
    const chatty = ['/bin/sh', '-c', 'i=0; while [ ! -e "$0" ]; do i=$((i+1)); echo "line $i"; sleep 0.01; done; echo "last $i"', path.join(dir, 'go')];
    const told: string[] = [];
    expect((await keeper.recover(null, (i) => told.push(i))).hadAll).toBe(false); // no daemon named one before
    const h = await keeper.start('req-o', plan(chatty), made(log), GRACE_MS);
    trackGroup(h.pid!);
    const pid = pidOf(keeper);
    await keeper.stop(); // the daemon goes, the run stays in the keeper's hands
    await eventually('output written with no daemon', () => (readFileSync(log, 'utf8').includes('line 30\n') ? true : undefined));
    expect(alive(pid)).toBe(true);

    const next = keeperFor();
    const { kept, hadAll } = await next.recover(told.at(-1)!, (i) => told.push(i));
    expect(hadAll).toBe(true);
    expect(new Set(told).size).toBe(1); // the same keeper, still running
    const k = kept.get('req-o');
    if (!k || !('handle' in k)) throw new Error('the run was not found held');
    expect(k.handle.pid).toBe(h.pid);
    writeFileSync(path.join(dir, 'go'), '');
    const o = await k.handle.done;
    expect(o).toMatchObject({ exit_code: 0, error: null });
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n');
    const last = Number(lines.at(-1)!.replace('last ', ''));
    expect(lines).toEqual([...Array.from({ length: last }, (_, i) => `line ${i + 1}`), `last ${last}`]);
    expect(o.log).toEqual(digestOf(log));
    next.forget('req-o');
    await next.stop();
    await eventually('the keeper to exit', () => (alive(pid) ? undefined : true));
  });

  it('writes the end of a run that ends meanwhile to its folder and exits, marked; the next daemon reads it, even with no keeper left, and forgets it', async () => {
    const told: string[] = [];
    await keeper.recover(null, (i) => told.push(i));
    const h = await keeper.start('req-e', plan(['/bin/sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.02; done; echo done; exit 4', path.join(dir, 'go')]), null, GRACE_MS);
    trackGroup(h.pid!);
    const pid = pidOf(keeper);
    await keeper.stop();
    writeFileSync(path.join(dir, 'go'), '');
    // With no daemon and no run, it exits, its end on disk first.
    await eventually('the keeper to exit', () => (alive(pid) ? undefined : true));
    expect(readdirSync(path.join(kdir, 'ended'))).toHaveLength(1);

    const next = keeperFor();
    const { kept, hadAll } = await next.recover(told.at(-1)!, () => {});
    expect(hadAll).toBe(true); // it exited by itself, its ends written: as good as its answer
    expect(kept.get('req-e')).toEqual({ outcome: expect.objectContaining({ exit_code: 4, stdout: 'done\n' }) });
    next.forget('req-e');
    expect(readdirSync(path.join(kdir, 'ended'))).toEqual([]);
  });
});

describe('a keeper of another version', () => {
  it('is drained: its run is followed to its end, new runs go to a new keeper, and it exits', async () => {
    const old = keeperFor(undefined, '0.0.1+k0');
    const h = await old.start('req-v', plan(gatedIn(dir)), null, GRACE_MS);
    trackGroup(h.pid!);
    const oldPid = pidOf(old);
    await old.stop();

    const next = keeperFor();
    const { kept } = await next.recover(null, () => {});
    const k = kept.get('req-v');
    if (!k || !('handle' in k)) throw new Error('the old keeper\'s run was not found');
    const fresh = await (await next.start('req-new', plan(['/bin/echo', 'new']), null, GRACE_MS)).done;
    expect(fresh).toMatchObject({ exit_code: 0, stdout: 'new\n' });
    expect(pidOf(next)).not.toBe(oldPid);
    expect(existsSync(path.join(kdir, '0.0.1+k0.sock'))).toBe(false);
    writeFileSync(path.join(dir, 'go'), '');
    expect(await k.handle.done).toMatchObject({ exit_code: 0 });
    await eventually('the old keeper to exit', () => (alive(oldPid) ? undefined : true));
  });
});

describe('the death of the keeper', () => {
  it('rejects what it was running with KeeperLost, leaves its processes running, and a new keeper starts the next run', async () => {
    const h = await keeper.start('req-l', plan(gatedIn(dir)), made(path.join(dir, 'req-l.log')), GRACE_MS);
    trackGroup(h.pid!);
    const first = pidOf(keeper);
    process.kill(first, 'SIGKILL');
    await expect(h.done).rejects.toBeInstanceOf(KeeperLost);
    await expect(h.done).rejects.toThrow(/ended while the run went on/);
    expect(alive(h.pid!)).toBe(true); // a process group of its own: found again by its pid and marker
    writeFileSync(path.join(dir, 'go'), '');
    await eventually('the run to end by itself', () => (alive(h.pid!) ? undefined : true));

    const next = await (await keeper.start('req-n', plan(['/bin/echo', 'again']), null, GRACE_MS)).done;
    expect(next).toMatchObject({ exit_code: 0, stdout: 'again\n' });
    expect(pidOf(keeper)).not.toBe(first);
    expect(alive(first)).toBe(false);
  });
});

describe('an idle keeper', () => {
  it('exits after its idle time with no run, and the next start() gets a new one', async () => {
    const s = keeperFor(100);
    await (await s.start('req-i0', plan(['/bin/true']), null, GRACE_MS)).done;
    const first = pidOf(s);
    await eventually('the idle keeper to exit', () => (alive(first) ? undefined : true));
    expect(s.pid).toBeUndefined();
    const o = await (await s.start('req-i', plan(['/bin/echo', 'back']), made(path.join(dir, 'req-i.log')), GRACE_MS)).done;
    expect(o).toMatchObject({ exit_code: 0, stdout: 'back\n', error: null });
    expect(pidOf(s)).not.toBe(first);
    expect(alive(s.pid!)).toBe(true);
  });

  it('is kept while a run is in its hands, however long it takes, and let go once it has ended', async () => {
    const s = keeperFor(100);
    const h = await s.start('req-k', plan(gatedIn(dir)), null, GRACE_MS);
    trackGroup(h.pid!);
    const pid = pidOf(s);
    // A twin (a home of its own) started now, with no run, has exited: the idle time has passed since.
    const twin = keeperFor(100, undefined, path.join(dir, 'twin'));
    await (await twin.start('req-twin', plan(['/bin/true']), null, GRACE_MS)).done;
    const twinPid = pidOf(twin);
    await eventually('the idle twin to exit', () => (alive(twinPid) ? undefined : true));
    expect(alive(pid)).toBe(true);
    expect(s.pid).toBe(pid);
    writeFileSync(path.join(dir, 'go'), '');
    expect(await h.done).toMatchObject({ exit_code: 0, error: null });
    await eventually('the keeper to exit once idle', () => (alive(pid) ? undefined : true));
  });

  it('with no idle time at all: runs started back to back, or as it is let go, all end normally', async () => {
    const s = keeperFor(0);
    const pids = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const h = await s.start(`req-b${i}`, plan(['/bin/echo', String(i)]), null, GRACE_MS);
      pids.add(pidOf(s));
      expect(await h.done).toMatchObject({ exit_code: 0, stdout: `${i}\n` });
      // Every other run: the next start() comes once it has been let go (its process may still be exiting).
      if (i % 2 === 1) await eventually('the keeper to be let go', () => (s.pid === undefined ? true : undefined));
    }
    expect(pids.size).toBeGreaterThanOrEqual(3);
    await s.stop();
    for (const pid of pids) await eventually(`keeper ${pid} to exit`, () => (alive(pid) ? undefined : true));
  });
});
