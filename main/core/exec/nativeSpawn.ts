// How a run's process is started: with posix_spawn through our own addon (native/: glibc starts it with
// clone(CLONE_VM|CLONE_VFORK), ~0.1 ms whatever the caller's size) where it is built, on Linux with
// pidfd_open (5.3); else with Node's spawn (libuv forks on Linux: ~1 ms of CPU a run, more the larger
// the caller). Both hand the program the same things: argv without a shell, exactly the given
// environment, a session and process group of its own, stdin /dev/null, stdout and stderr as pipes,
// `fds` as its descriptors 3, 4, ..., the working folder entered once those are in place, and no other
// descriptor of ours. The choice is made once a process (spawning()); `status` and the log say it.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { constants } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { getSystemErrorName } from 'node:util';

/** What the executor uses of a started run: a ChildProcess, or the native path's stand-in. */
export interface SpawnedRun {
  readonly pid?: number | undefined;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** 'error': it could not start (pid undefined). 'exit': its main process ended; 'close': that, and
   *  both pipes closed. */
  on(event: 'error', listener: (e: Error) => void): unknown;
  on(event: 'exit' | 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
}

export interface RunSpawnOptions {
  /** Entered after `fds` are in place (so /proc/self/fd/N names the child's N). */
  cwd: string;
  /** The whole environment: nothing of ours is added. */
  env: Record<string, string>;
  /** Descriptors of ours, given to the program as 3 + i. */
  fds: number[];
}

export type SpawnRun = (program: string, args: string[], options: RunSpawnOptions) => SpawnedRun;

export interface Spawning {
  kind: 'posix_spawn' | 'node';
  /** Why this one, for the log and `status`. */
  why: string;
  spawn: SpawnRun;
}

/** Node's spawn: the fallback, and what the native path must match. */
export const nodeSpawn: SpawnRun = (program, args, o) =>
  spawn(program, args, {
    cwd: o.cwd,
    env: o.env,
    detached: true, // a session of its own (setsid), so that terminate() reaches its children too
    stdio: ['ignore', 'pipe', 'pipe', ...o.fds],
    shell: false,
    windowsHide: true,
  }) as ChildProcessByStdio<null, Readable, Readable>; // entries after the pipes are descriptors, not streams

/** The addon's interface (native/src/spawn.c). */
interface Addon {
  spawn(file: string, argv: string[], envp: string[], cwd: string, fds: number[], onExit: (code: number | null, signal: number | null) => void): { pid: number; stdout: number; stderr: number };
  hasPidfd(): boolean;
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

/** A run started by the addon, seen as a ChildProcess is. */
class NativeRun extends EventEmitter implements SpawnedRun {
  pid: number | undefined = undefined;
  stdout!: Readable;
  stderr!: Readable;
  private exit: [number | null, NodeJS.Signals | null] | null = null;
  private open = 2;

  /** The pipes' read ends, read by Node as a ChildProcess's are; none (empty streams) for a run that never started. */
  pipes(fds: [number, number] | null): void {
    const stream = (fd: number | undefined) => (fd === undefined ? Readable.from([]) : new Socket({ fd, readable: true, writable: false }));
    this.stdout = stream(fds?.[0]);
    this.stderr = stream(fds?.[1]);
    for (const s of [this.stdout, this.stderr]) s.on('close', () => this.closed());
  }

  exited(code: number | null, signal: number | null): void {
    this.exit = [code, signal === null ? null : (SIGNAL_NAMES.get(signal) ?? null)];
    this.emit('exit', ...this.exit);
    if (this.open === 0) this.emit('close', ...this.exit);
  }

  private closed(): void {
    if (--this.open === 0 && this.exit) this.emit('close', ...this.exit);
  }
}

/** An error of the addon's as Node's spawn gives it ("spawn PROGRAM ENOENT", with code and errno). */
function spawnError(e: Error & { errno?: number; syscall?: string }, program: string, args: string[]): Error {
  const code = getSystemErrorName(e.errno!);
  return Object.assign(new Error(`${e.syscall ?? 'spawn'} ${program} ${code}`), { errno: e.errno, code, syscall: `${e.syscall ?? 'spawn'} ${program}`, path: program, spawnargs: args });
}

function nativeSpawnWith(addon: Addon): SpawnRun {
  return (program, args, o) => {
    const run = new NativeRun();
    const envp = Object.entries(o.env).map(([k, v]) => `${k}=${v}`);
    let started: ReturnType<Addon['spawn']>;
    try {
      started = addon.spawn(program, [program, ...args], envp, o.cwd, o.fds, (code, signal) => run.exited(code, signal));
    } catch (e) {
      if (typeof (e as { errno?: unknown }).errno !== 'number') throw e; // a bad argument: ours to fix
      // As Node's spawn does: the run never started, said by an 'error' event once the caller listens.
      const err = spawnError(e as Error, program, args);
      run.pipes(null);
      process.nextTick(() => run.emit('error', err));
      return run;
    }
    run.pid = started.pid;
    run.pipes([started.stdout, started.stderr]);
    return run;
  };
}

const ADDON_FILE = path.join('native', 'build', 'Release', 'dw_spawn.node');

/** The built addon beside this module's package: main/core/exec/ in a checkout, dist/host/ in a bundle. */
function builtAddon(): string | null {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 4; up++, dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, ADDON_FILE))) return path.join(dir, ADDON_FILE);
  }
  return null;
}

/** The spawning to use with the addon at `addonPath`: native where it loads and the kernel has pidfds. */
export function loadSpawning(addonPath: string | null): Spawning {
  const fallback = (why: string): Spawning => ({ kind: 'node', why, spawn: nodeSpawn });
  if (process.platform !== 'linux') return fallback(`Node's spawn (native spawning is for Linux; ${process.platform}'s Node already spawns without fork where it can)`);
  if (addonPath === null || !existsSync(addonPath)) return fallback(`Node's spawn (the native addon is not built: no compiler at install? \`npm run build:native\` builds it)`);
  let addon: Addon;
  try {
    addon = createRequire(import.meta.url)(addonPath) as Addon;
  } catch (e) {
    return fallback(`Node's spawn (the native addon does not load: ${(e as Error).message.split('\n')[0]})`);
  }
  if (!addon.hasPidfd()) return fallback("Node's spawn (this kernel has no pidfd_open, Linux 5.3)");
  return { kind: 'posix_spawn', why: 'posix_spawn (the native addon)', spawn: nativeSpawnWith(addon) };
}

let chosen: Spawning | null = null;

/** How this process starts runs, chosen once. */
export function spawning(): Spawning {
  return (chosen ??= loadSpawning(builtAddon()));
}
