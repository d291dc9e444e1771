// Native spawning (posix_spawn through native/) hands a run exactly what Node's spawn hands it: argv
// literally, the environment as given and nothing of ours, the working folder through /proc/self/fd/N
// after the handed descriptors are in place, a session and process group of its own, stdin /dev/null,
// no other descriptor of ours, signals at their defaults; it reports exits and signals without taking
// other children's, and where the addon is not there, Node's spawn is chosen and says why. Each case
// runs with both spawnings, so that the native one is held to what Node's does.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, constants, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSpawning, nodeSpawn, spawning, type RunSpawnOptions, type SpawnRun, type SpawnedRun } from '../../../../main/core/exec/nativeSpawn';
import { eventually } from '../../../helpers/host';
import { alive, outputOf, projectFile, spawnTsx, stopGroups, trackGroup } from '../../../helpers/processes';

const native = spawning();
const SPAWNINGS: [string, SpawnRun][] = [
  ['native', native.spawn],
  ["Node's", nodeSpawn],
];

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-nspawn-'));
});
afterEach(() => {
  stopGroups();
  rmSync(dir, { recursive: true, force: true });
});

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function ended(child: SpawnedRun): Promise<Ended> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const ENV = { PATH: '/usr/bin:/bin' };

function start(how: SpawnRun, argv: string[], o: Partial<RunSpawnOptions> = {}): SpawnedRun {
  const child = how(argv[0]!, argv.slice(1), { cwd: dir, env: ENV, fds: [], ...o });
  if (child.pid !== undefined) trackGroup(child.pid);
  return child;
}

const run = (how: SpawnRun, argv: string[], o: Partial<RunSpawnOptions> = {}) => ended(start(how, argv, o));

describe('the spawning chosen', () => {
  it('is posix_spawn on Linux where the addon was built at install', () => {
    if (process.platform !== 'linux') return expect(native.kind).toBe('node');
    expect(native.why).toMatch(/posix_spawn|not built|no pidfd_open/);
  });

  it("is Node's spawn, saying why, when the addon is not where it is looked for", async () => {
    const s = loadSpawning(path.join(dir, 'missing', 'dw_spawn.node'));
    expect(s.kind).toBe('node');
    expect(s.why).toMatch(process.platform === 'linux' ? /not built/ : /for Linux/);
    expect(s.spawn).toBe(nodeSpawn);
    expect((await run(s.spawn, ['/bin/sh', '-c', 'echo fallback'])).stdout).toBe('fallback\n');
  });

  it("is Node's spawn when the file there is no addon", () => {
    const bogus = path.join(dir, 'dw_spawn.node');
    writeFileSync(bogus, 'not a shared object');
    const s = loadSpawning(bogus);
    expect(s.kind).toBe('node');
    if (process.platform === 'linux') expect(s.why).toMatch(/does not load/);
  });
});

describe.skipIf(native.kind !== 'posix_spawn').each(SPAWNINGS)('%s spawning', (_name, how) => {
  it('passes argv literally, with no shell', async () => {
    const args = ['a b', '"quoted"', "it's", '; echo injected', '', '$HOME', '`id`', 'ü ✓', '*'];
    const r = await run(how, [process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', '--', ...args]);
    expect(JSON.parse(r.stdout)).toEqual(args);
  });

  it('gives exactly the environment given, nothing of the parent', async () => {
    process.env.DW_NSPAWN_LEAK = 'secret';
    try {
      const env = { PATH: '/usr/bin:/bin', ODD: 'x = y\tz', EMPTY: '' };
      const r = await run(how, ['/usr/bin/env'], { env });
      expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(['EMPTY=', 'ODD=x = y\tz', 'PATH=/usr/bin:/bin']);
    } finally {
      delete process.env.DW_NSPAWN_LEAK;
    }
  });

  it("searches a bare program name in the child's PATH, not ours", async () => {
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'dw-hello'), '#!/bin/sh\necho hello from "$0"\n');
    chmodSync(path.join(bin, 'dw-hello'), 0o755);
    const r = await run(how, ['dw-hello'], { env: { PATH: `/nonexistent:${bin}` } });
    expect(r.stdout).toBe(`hello from ${bin}/dw-hello\n`);
  });

  it('enters the working folder through /proc/self/fd/N, after the handed descriptors are in place', async () => {
    const file = path.join(dir, 'data.txt');
    writeFileSync(file, 'handed over\n');
    const sub = path.join(dir, 'work');
    mkdirSync(sub);
    const fileFd = openSync(file, 'r');
    const dirFd = openSync(sub, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const r = await run(how, ['/bin/sh', '-c', 'pwd -P; cat /dev/fd/3'], { fds: [fileFd, dirFd], cwd: '/proc/self/fd/4' });
      expect(r.stdout).toBe(`${realpathSync(sub)}\nhanded over\n`);
    } finally {
      closeSync(fileFd);
      closeSync(dirFd);
    }
  });

  it('starts the run in a session and process group of its own, signals at their defaults', async () => {
    const r = await run(how, ['/bin/sh', '-c', 'cat /proc/$$/stat; echo $$']);
    const [stat, pid] = r.stdout.trim().split('\n');
    const fields = stat!.slice(stat!.lastIndexOf(')') + 2).split(' ');
    expect([fields[2], fields[3]]).toEqual([pid, pid]); // pgrp, session
    // Read by the started program itself (a shell blocks signals for a moment as it forks). None
    // blocked, none ignored: Node ignores SIGPIPE, and an ignored signal stays ignored across exec.
    const masks = await run(how, ['grep', '-E', '^Sig(Ign|Blk)', '/proc/self/status']);
    expect(masks.stdout.trim().split('\n').sort()).toEqual(['SigBlk:\t0000000000000000', 'SigIgn:\t0000000000000000']);
  });

  it('reports exit codes and signals', async () => {
    expect(await run(how, ['/bin/sh', '-c', 'echo out; echo err >&2; exit 7'])).toEqual({ code: 7, signal: null, stdout: 'out\n', stderr: 'err\n' });
    expect(await run(how, ['/bin/sh', '-c', 'kill -USR1 $$'])).toMatchObject({ code: null, signal: 'SIGUSR1' });
  });

  it('reports a program that cannot start as Node does: an error event, no pid', async () => {
    for (const program of [path.join(dir, 'missing'), 'dw-no-such-program']) {
      const child = start(how, [program]);
      expect(child.pid).toBeUndefined();
      const e = (await ended(child).catch((x: unknown) => x)) as NodeJS.ErrnoException;
      expect([e.code, e.message]).toEqual(['ENOENT', `spawn ${program} ENOENT`]);
    }
  });

  it('ends with its whole group killed, the processes it left included', async () => {
    const child = start(how, ['/bin/sh', '-c', 'sleep 300 & echo $!; wait']);
    const grandchild = await new Promise<number>((resolve) => child.stdout.once('data', (c: Buffer) => resolve(Number(c.toString().trim()))));
    const end = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    process.kill(-child.pid!, 'SIGKILL');
    expect(await end).toEqual({ code: null, signal: 'SIGKILL' });
    await eventually('the process it left is gone', () => !alive(grandchild) || undefined);
  });

  it("reports each of many runs at once as its own, beside Node's own children", async () => {
    const runs = Array.from({ length: 40 }, (_, i) => run(how, ['/bin/sh', '-c', `echo $0; exit $(($0 % 5))`, String(i)]));
    const others = Array.from({ length: 10 }, (_, i) => new Promise((resolve) => spawn('/bin/sh', ['-c', `exit ${100 + i}`]).on('exit', resolve)));
    const results = await Promise.all(runs);
    expect(results.map((r) => [r.stdout, r.code])).toEqual(results.map((_, i) => [`${i}\n`, i % 5]));
    expect(await Promise.all(others)).toEqual(others.map((_, i) => 100 + i));
  });
});

describe.skipIf(native.kind !== 'posix_spawn')('native spawning alone', () => {
  it("leaves no descriptor of the host open in the run, not even one it inherited without close-on-exec (Node's spawn passes those on)", async () => {
    // A host started with descriptor 30 open and inheritable, as a careless parent leaves one; each
    // spawning runs a shell that lists its own descriptors (ls is its child: `; :` keeps it from
    // exec'ing ls) and where its stdin leads. Descriptor 3 is one handed over.
    const host = spawnTsx(
      `import { spawning, nodeSpawn } from ${JSON.stringify(projectFile('main/core/exec/nativeSpawn.ts'))};
       import { openSync } from 'node:fs';
       const handed = openSync('/', 'r');
       const list = (how) => new Promise((resolve) => {
         const c = how('/bin/sh', ['-c', 'ls /proc/$$/fd; readlink /proc/$$/fd/0; :'], { cwd: '/', env: { PATH: '/usr/bin:/bin' }, fds: [handed] });
         let out = '';
         c.stdout.on('data', (d) => (out += d));
         c.on('close', () => resolve(out));
       });
       process.stdout.write(JSON.stringify({ native: await list(spawning().spawn), node: await list(nodeSpawn) }));`,
      { wrapper: ['/bin/bash', '-c', 'exec 30</dev/null; exec "$0" "$@"'] },
    );
    const r = await outputOf(host);
    expect(r.stderr).toBe('');
    const seen = JSON.parse(r.stdout) as { native: string; node: string };
    const lines = (out: string) => out.trim().split('\n');
    expect(lines(seen.native)).toEqual(['0', '1', '2', '3', '/dev/null']);
    expect(lines(seen.node)).toContain('30'); // the attack is real: Node's spawn hands it over
  });
});
