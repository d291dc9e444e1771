// The spawner with its real process (spawnerMain.ts through tsx): a run started there ends with the
// outcome, output and log the in-process executor gives; terminate() reaches its process group; the
// spawner's cwd is nobody's folder; and when the spawner dies, a run it started rejects with
// SpawnerLost (its processes go on, to be found by pid), a run not yet handed to it fails as never
// started, and the next start gets a new spawner.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IN_PROCESS, nodeSpawner, Spawner, SPAWNER_V8_FLAGS, SpawnerLost, type RunStarter } from '../../../../main/core/exec/spawner';
import { makeShared, TAKEN, type HeldFile } from '../../../../main/core/exec/sharedFile';
import { startRun } from '../../../../main/core/exec/executor';
import type { RunPlan } from '../../../../main/core/allowlist/plan';
import { OUTPUT_EXCERPT_BYTES } from '../../../../shared/protocol/types';
import { eventually } from '../../../helpers/host';
import { alive, groupRunning, stopGroups, trackGroup } from '../../../helpers/processes';

const GRACE_MS = 200;
let dir: string;
let spawner: Spawner;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-spawner-'));
  spawner = new Spawner();
  spawner.launch();
});

afterEach(async () => {
  await spawner.stop();
  stopGroups();
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

/** A run that waits for the file `go` in `d` (writing nothing: its pipes die with the spawner). */
const gatedIn = (d: string) => ['/bin/sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.05; done', path.join(d, 'go')];

describe('the spawner process', () => {
  it('runs with a small young generation and without V8 background tasks (cheaper forks and runs)', async () => {
    const h = await spawner.start('req-flags', plan(['/bin/true']), null, GRACE_MS);
    await h.done;
    const argv = readFileSync(`/proc/${spawner.pid}/cmdline`, 'utf8').split('\0');
    for (const flag of SPAWNER_V8_FLAGS) expect(argv).toContain(flag);
  });
});

describe('a run started by the spawner process', () => {
  it('ends with the outcome, output and log of the same run in the daemon process', async () => {
    // stdout alone: the log interleaves the streams in the order their pipes are read, which differs
    // between two runs (stderr's way through the spawner is shown below, without a log).
    const argv = ['/bin/sh', '-c', 'echo out; printf "%s" "$DUMBWAITER_REQUEST_ID"; exit 3'];
    const there = path.join(dir, 'there.log');
    const here = path.join(dir, 'here.log');
    const h = await spawner.start('req-s', plan(argv, { max_output_bytes: 6 }), made(there), GRACE_MS);
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
    const o = await (await spawner.start('req-b', plan(argv), null, GRACE_MS)).done;
    const local = await startRun('req-b', plan(argv), null, GRACE_MS).done;
    expect(o.stdout).toBe('a\0b\x01\x1b[2J\ufffd\ufffd é € 😀\n');
    expect(o).toMatchObject({ stdout: local.stdout, stderr: local.stderr });
    expect(o.stderr).toBe('\0\ufffdz');
  });

  it('survives 64 MiB of NUL bytes on stdout and stderr under a 64 MiB limit: the excerpts come back, the log holds it all', async () => {
    const argv = ['/bin/sh', '-c', 'head -c 67108864 /dev/zero; head -c 67108864 /dev/zero >&2'];
    const pid = spawner.pid;
    const log = path.join(dir, 'zeros.log');
    const o = await (await spawner.start('req-z', plan(argv, { max_output_bytes: 64 * 1024 * 1024 }), made(log), GRACE_MS)).done;
    expect(o).toMatchObject({ exit_code: 0, stdout_truncated: true, stderr_truncated: true });
    expect(o.stdout).toBe('\0'.repeat(OUTPUT_EXCERPT_BYTES));
    expect(o.stderr).toBe('\0'.repeat(OUTPUT_EXCERPT_BYTES));
    expect(o.log).toEqual(digestOf(log));
    expect(spawner.pid).toBe(pid);
    expect(alive(pid!)).toBe(true);
  });

  it('writes the log made in a folder reached through a descriptor of the daemon (a pinned results folder)', async () => {
    const results = path.join(dir, 'results');
    mkdirSync(results);
    const fd = openSync(results, 'r');
    try {
      const o = await (await spawner.start('req-p', plan(['/bin/echo', 'pinned']), made(`/proc/self/fd/${fd}/req-p.log`), GRACE_MS)).done;
      expect(readFileSync(path.join(results, 'req-p.log'), 'utf8')).toBe('pinned\n');
      expect(o.log).toEqual(digestOf(path.join(results, 'req-p.log')));
    } finally {
      closeSync(fd);
    }
  });

  it('ends the run with its process group on terminate()', async () => {
    const h = await spawner.start('req-t', plan(['/bin/sh', '-c', 'sleep 300 & wait']), made(path.join(dir, 'req-t.log')), GRACE_MS);
    trackGroup(h.pid!);
    await eventually('the run to have a child', () => (groupRunning(h.pid!) ? true : undefined));
    h.terminate('cancel');
    expect(await h.done).toMatchObject({ terminated: 'cancel', error: null });
    expect(groupRunning(h.pid!)).toBe(false);
  });

  it('fails a program that cannot start as spawn_failed, and the spawner goes on', async () => {
    const o = await (await spawner.start('req-f', plan([path.join(dir, 'missing')]), null, GRACE_MS)).done;
    expect(o.error).toMatchObject({ code: 'spawn_failed' });
    expect((await (await spawner.start('req-ok', plan(['/bin/true']), null, GRACE_MS)).done).exit_code).toBe(0);
  });

  it.runIf(process.platform === 'linux')('keeps no folder in use: its working folder is the root', async () => {
    await spawner.start('req-w', plan(['/bin/true']), null, GRACE_MS);
    expect(readlinkSync(`/proc/${spawner.pid}/cwd`)).toBe('/');
  });
});

// The sandbox can rename the log the daemon made, and put a folder, a link or its own text at its
// name, before the spawner opens it: the run writes to the file the daemon made, or to nothing.
describe.each<[string, () => RunStarter]>([
  ['the spawner process', () => spawner],
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

describe('the death of the spawner process', () => {
  it('rejects what it was running with SpawnerLost, leaves its processes running, and a new spawner starts the next run', async () => {
    const h = await spawner.start('req-l', plan(gatedIn(dir)), made(path.join(dir, 'req-l.log')), GRACE_MS);
    trackGroup(h.pid!);
    const first = spawner.pid!;
    process.kill(first, 'SIGKILL');
    await expect(h.done).rejects.toBeInstanceOf(SpawnerLost);
    await expect(h.done).rejects.toThrow(/killed by SIGKILL while the run went on/);
    expect(alive(h.pid!)).toBe(true); // a process group of its own: found again by its pid and marker
    writeFileSync(path.join(dir, 'go'), '');
    await eventually('the run to end by itself', () => (alive(h.pid!) ? undefined : true));

    const next = await (await spawner.start('req-n', plan(['/bin/echo', 'again']), null, GRACE_MS)).done;
    expect(next).toMatchObject({ exit_code: 0, stdout: 'again\n' });
    expect(spawner.pid).not.toBe(first);
    expect(alive(first)).toBe(false);
  });

  it('exits once the channel of its daemon closes, leaving the runs it started running', async () => {
    const h = await spawner.start('req-c', plan(gatedIn(dir)), null, GRACE_MS);
    trackGroup(h.pid!);
    const pid = spawner.pid!;
    await spawner.stop();
    expect(alive(pid)).toBe(false);
    expect(alive(h.pid!)).toBe(true);
    writeFileSync(path.join(dir, 'go'), '');
    await eventually('the run to end by itself', () => (alive(h.pid!) ? undefined : true));
  });
});

describe('an idle spawner process', () => {
  const others: Spawner[] = [];
  /** A spawner of its own, with `idleMs` as its idle time, stopped after the test. */
  const idling = (idleMs: number) => {
    const s = new Spawner(nodeSpawner(), idleMs);
    others.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(others.splice(0).map((s) => s.stop()));
  });

  it('exits after its idle time with no run, and the next start() gets a new one', async () => {
    const s = idling(100);
    s.launch();
    const first = s.pid!;
    await eventually('the idle spawner to exit', () => (alive(first) ? undefined : true));
    expect(s.pid).toBeUndefined();
    const o = await (await s.start('req-i', plan(['/bin/echo', 'back']), made(path.join(dir, 'req-i.log')), GRACE_MS)).done;
    expect(o).toMatchObject({ exit_code: 0, stdout: 'back\n', error: null });
    expect(s.pid).not.toBe(first);
    expect(alive(s.pid!)).toBe(true);
  });

  it('is kept while a run is in its hands, however long it takes, and let go once it has ended', async () => {
    const s = idling(100);
    const h = await s.start('req-k', plan(gatedIn(dir)), null, GRACE_MS);
    trackGroup(h.pid!);
    const pid = s.pid!;
    // A twin launched now, with no run, has exited: the idle time has passed since.
    const twin = idling(100);
    twin.launch();
    const twinPid = twin.pid!;
    await eventually('the idle twin to exit', () => (alive(twinPid) ? undefined : true));
    expect(alive(pid)).toBe(true);
    expect(s.pid).toBe(pid);
    writeFileSync(path.join(dir, 'go'), '');
    expect(await h.done).toMatchObject({ exit_code: 0, error: null });
    await eventually('the spawner to exit once idle', () => (alive(pid) ? undefined : true));
  });

  it('with no idle time at all: runs started back to back, or as it is let go, all end normally', async () => {
    const s = idling(0);
    const pids = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const h = await s.start(`req-b${i}`, plan(['/bin/echo', String(i)]), null, GRACE_MS);
      pids.add(s.pid!);
      expect(await h.done).toMatchObject({ exit_code: 0, stdout: `${i}\n` });
      // Every other run: the next start() comes once it has been let go (its process may still be exiting).
      if (i % 2 === 1) await eventually('the spawner to be let go', () => (s.pid === undefined ? true : undefined));
    }
    expect(pids.size).toBeGreaterThanOrEqual(3);
    await s.stop();
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });
});
