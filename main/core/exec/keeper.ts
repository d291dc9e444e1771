// The daemon's side of the run keeper (keeperServe.ts): runs start there, so that they outlive the
// daemon, and each is given to the runner as the same RunHandle the executor returns. At the daemon's
// start, recover() finds what a keeper still holds (its socket in the home's keeper folder) and the
// ends written while no daemon ran; a keeper of another version is drained (it takes no new run and
// exits once its runs have ended) and a new one started. The keeper is let go after a while with no run
// (its memory is most of an idle host's), and started again for the next. Its death is told apart from
// a run's end: a run it had not yet said was started may have started, and one it had started may still
// run; both reject with KeeperLost, and the runner looks for their processes as a restarted host does
// (daemon/orphans.ts), never running them again.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunPlan } from '../allowlist/plan';
import { startRun, type RunHandle, type RunOutcome } from './executor';
import { fromWire, lineReader, type FromKeeper, type KeptStart, type ToKeeper } from './keeperProtocol';
import { clearExited, exitedIn, KEEPER_VERSION, makeKeeperDir, readEnds, removeEnd, removeListing, socketPath, socketsIn } from './keeperFiles';
import { openShared, type HeldFile, type SharedFile } from './sharedFile';

/** A run found at the daemon's start: still held by the keeper, or ended while no daemon ran. */
export type Kept = { handle: RunHandle } | { outcome: RunOutcome };

/** What the daemon's start finds: the runs kept for it, by key; and `hadAll`: the keeper the last
 *  daemon sent its runs to answered, or exited by itself with its ends written (or that daemon had let
 *  its keeper go and sent nothing since), so a run recorded as started that it does not hold never
 *  reached it, and never started. */
export interface Recovered {
  kept: Map<string, Kept>;
  hadAll: boolean;
}

/** How runs are started: through the run keeper (Keeper), or in this process (IN_PROCESS). */
export interface RunStarter {
  /** Connects to the keeper (starting it if none runs) now, rather than at the next start(). */
  launch(): void;
  /** Rejects with KeeperLost when the keeper died before saying whether the run started. `key`: the
   *  request's handle. `log`: the run's live log as the daemon made it (or null for none), closed here
   *  once the run no longer needs the daemon's descriptor: the run has its own, or never will. */
  start(key: string, plan: RunPlan, log: HeldFile | null, killGraceMs: number): Promise<RunHandle>;
  /** At the daemon's start, before any start(): what is kept for it. `previous`: what the last daemon's
   *  `live` was last told (null: none was). `live`: told the instance of each keeper new runs go to,
   *  from now on, before the first goes, and '' when none will get the next (the ledger keeps it). */
  recover(previous: string | null, live: (instance: string) => void): Promise<Recovered>;
  /** Once the daemon's start has dealt with every run recorded as running: a run started from now on
   *  goes to a keeper this starter will name. */
  recovered(): void;
  /** The end of `key`'s run is in the ledger: its record is let go. */
  forget(key: string): void;
  /** Once the runs have ended, the keeper exits; a run left running stays in its hands. */
  stop(): Promise<void>;
}

/** The executor in the daemon's own process (tests of the runner; nothing outlives the daemon). */
export const IN_PROCESS: RunStarter = {
  launch() {},
  start(key, plan, log, killGraceMs) {
    try {
      return Promise.resolve(startRun(key, plan, log && openShared(log.shared), killGraceMs));
    } finally {
      log?.close();
    }
  },
  recover: () => Promise.resolve({ kept: new Map(), hadAll: false }),
  recovered() {},
  forget() {},
  stop: () => Promise.resolve(),
};

/** The keeper died with this run in its hands: whether it started, or still runs, it cannot say. */
export class KeeperLost extends Error {
  constructor(why: string) {
    super(`the run keeper ${why}`);
    this.name = 'KeeperLost';
  }
}

/** The program that runs a keeper, and its arguments before the keeper's folder. */
export interface KeeperCommand {
  file: string;
  args: string[];
}

/** The keeper's young generation at its smallest (V8 grows it to 16 MiB a half otherwise, and each
 *  fork() from it costs more the more memory it has), and its collections and compiles on its own
 *  thread: in a heap this small, handing them to V8's worker threads cost more than doing them (6 % of
 *  its CPU in a burst of 1,000 runs: docs/BENCHMARKS.md). */
export const KEEPER_V8_FLAGS = ['--max-semi-space-size=1', '--single-threaded'];

/** The keeper as plain Node: the bundle's sibling keeper.mjs, or the TypeScript source through tsx in
 *  a checkout. */
export function nodeKeeper(): KeeperCommand {
  const bundled = import.meta.url.endsWith('.mjs');
  const entry = fileURLToPath(new URL(bundled ? './keeper.mjs' : './keeperMain.ts', import.meta.url));
  return { file: process.execPath, args: [...KEEPER_V8_FLAGS, ...(bundled ? [] : ['--import', import.meta.resolve('tsx')]), entry] };
}

/** Starts a keeper for `dir` in a session of its own (it outlives this process), its errors to
 *  keeper.log there; resolves once it listens. Its cwd is the root, so that it keeps no folder in use. */
function startKeeper(cmd: KeeperCommand, dir: string, args: string[] = []): Promise<void> {
  makeKeeperDir(dir);
  const errors = openSync(path.join(dir, 'keeper.log'), 'a', 0o600);
  let child;
  try {
    child = spawn(cmd.file, [...cmd.args, dir, ...args], { detached: true, windowsHide: true, stdio: ['ignore', 'pipe', errors], cwd: path.parse(process.cwd()).root });
  } finally {
    closeSync(errors);
  }
  return new Promise<void>((resolve, reject) => {
    let said = '';
    child.stdout!.on('data', (c: Buffer) => {
      said += c.toString();
      if (!said.includes('ready\n')) return;
      child.stdout!.destroy();
      child.unref();
      resolve();
    });
    child.once('error', (e) => reject(new Error(`the run keeper could not be started: ${e.message}`)));
    child.once('exit', (code, signal) => reject(new Error(`the run keeper exited (${signal ?? `code ${code}`}) before it listened: see ${path.join(dir, 'keeper.log')}`)));
  });
}

/** How long a keeper with no run is kept: a new one takes a fraction of a second to start (the first
 *  run after an idle spell waits for it); meanwhile an idle host does not hold its memory (some 40 MiB). */
export const KEEPER_IDLE_MS = 30_000;

interface Pending {
  /** Settles the start() promise; null once it has. */
  started: { resolve(h: RunHandle): void; reject(e: Error): void } | null;
  /** Settles the handle's `done`, once started. */
  done: { resolve(o: RunOutcome): void; reject(e: Error): void } | null;
}

type Hello = Extract<FromKeeper, { type: 'hello' }>;

/** A connection to one keeper and the runs in its hands. */
class Link {
  readonly runs = new Map<string, Pending>();
  /** The keeper's, once it has said hello. */
  pid: number | undefined;
  readonly closed: Promise<void>;
  /** Lets it go once it has had no run for the idle time. */
  idle: NodeJS.Timeout | null = null;
  private onHello: ((h: Hello) => void) | null = null;

  private constructor(private readonly sock: Socket) {
    this.closed = new Promise((r) => sock.once('close', () => r()));
    sock.on('data', lineReader<FromKeeper>((m) => this.receive(m)));
    sock.on('error', () => {}); // 'close' follows
    void this.closed.then(() => {
      if (this.idle) clearTimeout(this.idle);
      for (const p of this.runs.values()) lose(p);
      this.runs.clear();
    });
  }

  /** Connects to the keeper at `sock` and says hello: its answer, with the runs it holds. */
  static open(sockPath: string, version: string): Promise<{ link: Link; hello: Hello }> {
    return new Promise((resolve, reject) => {
      const sock = createConnection(sockPath);
      sock.once('error', reject);
      sock.once('connect', () => {
        sock.off('error', reject);
        const link = new Link(sock);
        link.onHello = (hello) => {
          link.pid = hello.pid;
          resolve({ link, hello });
        };
        void link.closed.then(() => reject(new Error('the run keeper closed its socket before it answered')));
        link.send({ type: 'hello', version });
      });
    });
  }

  send(m: ToKeeper): void {
    if (!this.sock.destroyed) this.sock.write(`${JSON.stringify(m)}\n`);
  }

  /** Lets the connection go: the keeper exits if it holds no run, else goes on holding them. */
  close(): void {
    this.sock.end();
  }

  start(key: string, plan: RunPlan, logFile: SharedFile | null, killGraceMs: number): Promise<RunHandle> {
    return new Promise<RunHandle>((resolve, reject) => {
      this.runs.set(key, { started: { resolve, reject }, done: null });
      this.send({ type: 'start', key, plan, logFile, killGraceMs });
    });
  }

  /** A run the keeper already holds (found at the daemon's start), as a handle. */
  adopt(s: KeptStart): RunHandle {
    const p: Pending = { started: null, done: null };
    this.runs.set(s.key, p);
    return this.handle(s, p);
  }

  private handle(s: KeptStart, p: Pending): RunHandle {
    const done = new Promise<RunOutcome>((resolve, reject) => (p.done = { resolve, reject }));
    done.catch(() => {}); // seen by whoever awaits it; never an unhandled rejection of the daemon
    return { pid: s.pid, marker: s.marker, since: s.since, done, terminate: (reason) => this.runs.has(s.key) && this.send({ type: 'terminate', key: s.key, reason }) };
  }

  private receive(m: FromKeeper): void {
    if (m.type === 'hello') return this.onHello?.(m);
    const p = this.runs.get(m.key);
    if (!p) return;
    if (m.type === 'failed' || m.type === 'done') {
      this.runs.delete(m.key);
      return m.type === 'failed' ? p.started?.reject(new Error(m.message)) : p.done?.resolve(fromWire(m.outcome));
    }
    p.started?.resolve(this.handle(m, p));
    p.started = null;
  }
}

/** A run in the hands of a keeper that is gone (every start message reaches it: it may have started). */
function lose(p: Pending): void {
  if (p.done) p.done.reject(new KeeperLost('ended while the run went on'));
  else p.started?.reject(new KeeperLost('ended before it said whether the run started'));
}

export class Keeper implements RunStarter {
  /** The connection new runs go to: being opened, or open (then also `liveLink`). */
  private live: Promise<Link> | null = null;
  private liveLink: Link | null = null;
  /** Every connection still open: the live one, and keepers of other versions being drained. */
  private readonly links = new Set<Link>();
  /** Connections to keepers let go, until they have closed. */
  private readonly leaving = new Set<Link>();
  private stopping = false;
  private told: (instance: string) => void = () => {};
  /** The exit marks read at the start, cleared once it has dealt with the runs. */
  private exited: string[] = [];

  /** `dir`: the home's keeper folder; `idleMs`: how long a keeper with no run is kept (KEEPER_IDLE_MS);
   *  `version`: what the keepers it starts speak (another than this build's only in tests). */
  constructor(
    private readonly dir: string,
    private readonly cmd: KeeperCommand = nodeKeeper(),
    private readonly idleMs = KEEPER_IDLE_MS,
    private readonly version = KEEPER_VERSION,
  ) {}

  /** The pid of the keeper new runs go to, while connected. */
  get pid(): number | undefined {
    return this.liveLink?.pid;
  }

  launch(): void {
    if (!this.stopping) void this.open().catch(() => {}); // said again by the start() that needs it
  }

  async recover(previous: string | null, live: (instance: string) => void): Promise<Recovered> {
    this.told = live;
    const kept = new Map<string, Kept>();
    const instances: string[] = [];
    for (const s of socketsIn(this.dir)) {
      let opened: { link: Link; hello: Hello };
      try {
        opened = await Link.open(s.path, this.version);
      } catch {
        // A dead keeper's socket: one of this version is replaced by the next keeper's own.
        if (s.version !== this.version) removeListing(this.dir, s.version);
        continue;
      }
      const { link, hello } = opened;
      this.track(link);
      instances.push(hello.instance);
      for (const r of hello.running) {
        const handle = link.adopt(r);
        const idle = () => this.idleFrom(link);
        void handle.done.then(idle, idle);
        kept.set(r.key, { handle });
      }
      for (const e of hello.ended) kept.set(e.key, { outcome: fromWire(e.outcome) });
      if (hello.version === this.version) this.useLive(link, hello.instance);
      else link.send({ type: 'drain' }); // its runs are followed to their end; then it exits
    }
    // Read after the sockets: a keeper that exits meanwhile has written its ends and its mark by then.
    this.exited = exitedIn(this.dir);
    for (const e of readEnds(this.dir)) if (!kept.has(e.key)) kept.set(e.key, { outcome: fromWire(e.outcome) });
    const known = [...instances, ...this.exited];
    return { kept, hadAll: previous !== null && (previous === '' || known.includes(previous)) };
  }

  recovered(): void {
    if (!this.liveLink) this.told(''); // no keeper of this version answered: none holds a run yet
    clearExited(this.dir, this.exited);
  }

  start(key: string, plan: RunPlan, log: HeldFile | null, killGraceMs: number): Promise<RunHandle> {
    const started = this.startThere(key, plan, log?.shared ?? null, killGraceMs);
    const close = () => log?.close(); // the keeper has opened its own (or will not)
    void started.then(close, close);
    return started;
  }

  private async startThere(key: string, plan: RunPlan, logFile: SharedFile | null, killGraceMs: number): Promise<RunHandle> {
    if (this.stopping) throw new Error('the host is stopping');
    const link = await this.open();
    if (link.idle) clearTimeout(link.idle);
    link.idle = null;
    const handle = link.start(key, plan, logFile, killGraceMs);
    // Once it has ended, the keeper may be let go.
    const idle = () => this.idleFrom(link);
    void handle.then((h) => h.done).then(idle, idle);
    return handle;
  }

  forget(key: string): void {
    for (const link of this.links) link.send({ type: 'forget', key });
    removeEnd(this.dir, key); // written while no daemon ran (this one may never have reached that keeper)
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.live?.catch(() => {}); // a connection being opened (a keeper starting) is let go too
    for (const link of this.links) {
      if (link.idle) clearTimeout(link.idle);
      if (link.runs.size === 0) link.send({ type: 'exit' });
      link.close(); // one holding runs left running goes on with them
    }
    await Promise.all([...this.links].map((l) => l.closed));
  }

  /** The live connection: to the keeper of this version, started first if none runs. */
  private open(): Promise<Link> {
    this.live ??= this.connect().catch((e: Error) => {
      this.live = null;
      throw e;
    });
    return this.live;
  }

  private async connect(): Promise<Link> {
    // A keeper let go may still be exiting: its socket would take the connection and drop it.
    await Promise.all([...this.leaving].map((l) => l.closed));
    const sock = socketPath(this.dir, this.version);
    const opened = await Link.open(sock, this.version).catch(async () => {
      await startKeeper(this.cmd, this.dir, [this.version]);
      return Link.open(sock, this.version);
    });
    this.track(opened.link);
    this.useLive(opened.link, opened.hello.instance);
    return opened.link;
  }

  private track(link: Link): void {
    this.links.add(link);
    void link.closed.then(() => {
      this.links.delete(link);
      this.leaving.delete(link);
      if (this.liveLink !== link) return;
      this.live = null; // the next start() connects anew
      this.liveLink = null;
    });
  }

  private useLive(link: Link, instance: string): void {
    this.told(instance);
    this.liveLink = link;
    this.live = Promise.resolve(link);
    this.idleFrom(link);
  }

  /** Once `link` has no run: it is let go after the idle time, unless a run comes first. */
  private idleFrom(link: Link): void {
    if (link.runs.size > 0 || link.idle || this.stopping) return;
    link.idle = setTimeout(() => this.letGo(link), this.idleMs);
    link.idle.unref();
  }

  /** Lets an idle keeper go: it exits, and a start() from now on connects anew (once it has). */
  private letGo(link: Link): void {
    link.idle = null;
    if (this.liveLink !== link || link.runs.size > 0) return;
    this.live = null;
    this.liveLink = null;
    this.told(''); // it holds no run, and the next goes to a keeper named then
    this.leaving.add(link);
    link.send({ type: 'exit' });
    link.close();
  }
}
