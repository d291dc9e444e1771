// The daemon's side of the spawner process (spawnerMain.ts): runs start there, so the daemon never
// forks itself, and each run is given to the runner as the same RunHandle the executor returns. The
// process is started with the daemon and again, for new runs, if it dies while the daemon lives or
// after it was let go for having no run for a while (its memory is most of an idle host's). Its
// death is told apart from a run's end: a run it had not yet said was started may have started, and
// one it had started may still run; both reject with SpawnerLost, and the runner looks for their
// processes as a restarted host does (daemon/orphans.ts), never running them again.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunPlan } from '../allowlist/plan';
import { startRun, type RunHandle, type RunOutcome } from './executor';
import { fromWire, type FromSpawner, type ToSpawner } from './spawnerProtocol';
import { openShared, type HeldFile, type SharedFile } from './sharedFile';

/** How runs are started: through a spawner process (Spawner), or in this process (IN_PROCESS). */
export interface RunStarter {
  /** Starts the spawner process now, if there is one and it is not running (else at the next start()). */
  launch(): void;
  /** Rejects with SpawnerLost when the spawner died before saying whether the run started. `log`: the
   *  run's live log as the daemon made it (or null for none), closed here once the run no longer
   *  needs the daemon's descriptor: the run has its own, or never will. */
  start(requestId: string, plan: RunPlan, log: HeldFile | null, killGraceMs: number): Promise<RunHandle>;
  /** Once the runs have ended: the spawner process exits. */
  stop(): Promise<void>;
}

/** The executor in the daemon's own process (where no spawner process can be started). */
export const IN_PROCESS: RunStarter = {
  launch() {},
  start(requestId, plan, log, killGraceMs) {
    try {
      return Promise.resolve(startRun(requestId, plan, log && openShared(log.shared), killGraceMs));
    } finally {
      log?.close();
    }
  },
  stop: () => Promise.resolve(),
};

/** The spawner process died with this run in its hands: whether it started, or still runs, it cannot say. */
export class SpawnerLost extends Error {
  constructor(why: string) {
    super(`the spawner process ${why}`);
    this.name = 'SpawnerLost';
  }
}

/** A spawner process as the daemon reaches it: a child_process.fork child, an Electron utility process. */
export interface SpawnerProcess {
  readonly pid: number | undefined;
  send(m: ToSpawner): void;
  onMessage(fn: (m: FromSpawner) => void): void;
  /** Once, when it has exited or could not be started; `why` says which. */
  onExit(fn: (why: string) => void): void;
  /** Closes its channel: it exits. */
  close(): void;
}

export type LaunchSpawner = () => SpawnerProcess;

/** The spawner's young generation at its smallest (V8 grows it to 16 MiB a half otherwise, and each
 *  fork() from it costs more the more memory it has), and its collections and compiles on its own
 *  thread: in a heap this small, handing them to V8's worker threads cost more than doing them (6 % of
 *  its CPU in a burst of 1,000 runs: docs/BENCHMARKS.md). */
export const SPAWNER_V8_FLAGS = ['--max-semi-space-size=1', '--single-threaded'];

/** The spawner as a plain Node child: the bundle's sibling spawner.mjs, or the TypeScript source
 *  through tsx in a checkout. Its cwd is the root, so that it keeps no folder in use. */
export function nodeSpawner(): LaunchSpawner {
  const bundled = import.meta.url.endsWith('.mjs');
  const entry = fileURLToPath(new URL(bundled ? './spawner.mjs' : './spawnerMain.ts', import.meta.url));
  const execArgv = [...SPAWNER_V8_FLAGS, ...(bundled ? [] : ['--import', import.meta.resolve('tsx')])];
  return () => forked(fork(entry, [], { execArgv, cwd: path.parse(process.cwd()).root, stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json' }));
}

function forked(child: ChildProcess): SpawnerProcess {
  let exited: ((why: string) => void) | null = null;
  const exit = (why: string) => {
    const fn = exited;
    exited = null;
    fn?.(why);
  };
  child.on('exit', (code, signal) => {
    const why = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    // The channel's last messages (a run's end sent just before it died) come before its 'disconnect'.
    if (child.connected) child.once('disconnect', () => exit(why));
    else exit(why);
  });
  // A failed spawn (a send on a closed channel reports to its callback; 'close' follows).
  child.on('error', (e) => child.pid === undefined && exit(`could not be started: ${e.message}`));
  return {
    pid: child.pid,
    send: (m) => void child.send(m, () => {}),
    onMessage: (fn) => child.on('message', (m) => fn(m as FromSpawner)),
    onExit: (fn) => (exited = fn),
    close: () => child.connected && child.disconnect(),
  };
}

/** How long a spawner process with no run is kept: a new one takes a fraction of a second to start,
 *  and the daemon's intake launches it before it commits the run that needs it, so the start overlaps
 *  the commit; meanwhile an idle host does not hold its memory (some 40 MiB). */
export const SPAWNER_IDLE_MS = 30_000;

interface Pending {
  /** Settles the start() promise; null once it has. */
  started: { resolve(h: RunHandle): void; reject(e: Error): void } | null;
  /** Settles the handle's `done`, once started. */
  done: { resolve(o: RunOutcome): void; reject(e: Error): void } | null;
  /** Sent to the spawner: it may have started the run. */
  sent: boolean;
}

/** One spawner process and the runs in its hands. */
interface Live {
  proc: SpawnerProcess;
  ready: boolean;
  /** Messages written before it said `ready`. */
  queue: ToSpawner[];
  runs: Map<number, Pending>;
  exited: Promise<void>;
  /** Lets it go once it has had no run for the idle time. */
  idle: NodeJS.Timeout | null;
}

export class Spawner implements RunStarter {
  private live: Live | null = null;
  /** Spawner processes let go for being idle, until they have exited. */
  private readonly leaving = new Set<Promise<void>>();
  private nextRun = 1;
  private stopping = false;

  /** `idleMs`: how long a spawner process with no run is kept (SPAWNER_IDLE_MS). */
  constructor(
    private readonly launchProcess: LaunchSpawner = nodeSpawner(),
    private readonly idleMs = SPAWNER_IDLE_MS,
  ) {}

  /** The spawner process's pid, while it runs. */
  get pid(): number | undefined {
    return this.live?.proc.pid;
  }

  launch(): void {
    if (this.live || this.stopping) return;
    const proc = this.launchProcess();
    let exited!: () => void;
    const live: Live = { proc, ready: false, queue: [], runs: new Map(), exited: new Promise((r) => (exited = r)), idle: null };
    this.live = live;
    proc.onMessage((m) => this.receive(live, m));
    proc.onExit((why) => {
      if (this.live === live) this.live = null; // the next start() starts another
      if (live.idle) clearTimeout(live.idle);
      for (const p of live.runs.values()) this.lose(p, why);
      live.runs.clear();
      exited();
    });
    this.idleFrom(live);
  }

  /** Once `live` has no run: it is let go after the idle time, unless a run comes first. */
  private idleFrom(live: Live): void {
    if (live.runs.size > 0 || live.idle) return;
    live.idle = setTimeout(() => this.letGo(live), this.idleMs);
    live.idle.unref();
  }

  /**
   * Lets an idle spawner process go: no longer the one runs start in, from now on (a start() from here
   * launches another), its channel is closed and it exits. It holds no run, so its exit loses none:
   * nothing is taken for a death.
   */
  private letGo(live: Live): void {
    live.idle = null;
    if (this.live !== live || live.runs.size > 0) return;
    this.live = null;
    this.leaving.add(live.exited);
    void live.exited.then(() => this.leaving.delete(live.exited));
    live.proc.close();
  }

  start(requestId: string, plan: RunPlan, log: HeldFile | null, killGraceMs: number): Promise<RunHandle> {
    const started = this.startThere(requestId, plan, log?.shared ?? null, killGraceMs);
    const close = () => log?.close(); // the spawner has opened its own (or will not)
    void started.then(close, close);
    return started;
  }

  private startThere(requestId: string, plan: RunPlan, logFile: SharedFile | null, killGraceMs: number): Promise<RunHandle> {
    if (this.stopping) return Promise.reject(new Error('the host is stopping'));
    this.launch();
    const live = this.live!;
    if (live.idle) clearTimeout(live.idle);
    live.idle = null;
    const run = this.nextRun++;
    return new Promise<RunHandle>((resolve, reject) => {
      live.runs.set(run, { started: { resolve, reject }, done: null, sent: false });
      this.send(live, { type: 'start', run, requestId, plan, logFile, killGraceMs });
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const live = this.live;
    if (live?.idle) clearTimeout(live.idle);
    live?.proc.close();
    await Promise.all([live?.exited, ...this.leaving]);
  }

  private send(live: Live, m: ToSpawner): void {
    if (!live.ready) return void live.queue.push(m);
    if (m.type === 'start') live.runs.get(m.run)!.sent = true;
    live.proc.send(m);
  }

  private receive(live: Live, m: FromSpawner): void {
    if (m.type === 'ready') {
      live.ready = true;
      for (const q of live.queue.splice(0)) this.send(live, q);
      return;
    }
    const p = live.runs.get(m.run);
    if (!p) return;
    if (m.type === 'failed' || m.type === 'done') {
      live.runs.delete(m.run);
      this.idleFrom(live);
      return m.type === 'failed' ? p.started?.reject(new Error(m.message)) : p.done?.resolve(fromWire(m.outcome));
    }
    const done = new Promise<RunOutcome>((resolve, reject) => (p.done = { resolve, reject }));
    done.catch(() => {}); // seen by whoever awaits it; never an unhandled rejection of the daemon
    p.started?.resolve({ pid: m.pid, marker: m.marker, since: m.since, done, terminate: (reason) => live.runs.has(m.run) && this.send(live, { type: 'terminate', run: m.run, reason }) });
    p.started = null;
  }

  /** A run in the hands of a spawner that is gone: never sent, it did not start; else nobody can say. */
  private lose(p: Pending, why: string): void {
    if (p.done) return p.done.reject(new SpawnerLost(`${why} while the run went on`));
    if (p.sent) return p.started?.reject(new SpawnerLost(`${why} before it said whether the run started`));
    p.started?.reject(new Error(`the spawner process ${why} before it could start the run`));
  }
}
