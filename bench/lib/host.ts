// A real host for the benchmark: the end-to-end harness's TestHost (a real home and spool made by the
// real `dumbwaiter init`, a real key) with the daemon's defaults restored, plus what the benchmark
// needs on top: a daemon process whose start is timed to the line, /proc readings of it, and a watcher
// that sees result files the moment they are renamed into place.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, renameSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { TestHost } from '../../test/helpers/host';
import { SpoolClient } from '../../shared/client/spoolClient';
import { isFinalState, type KeyFile, type ResultDoc } from '../../shared/protocol/types';

/** The product's command line, as a user runs it: the bundle without the tests' fault points (bin/
 *  rebuilds it first where a source is newer). The tests' build (TestHost's) only sets homes up. */
export const CLI = path.resolve(import.meta.dirname, '../../bin/dumbwaiter.js');

/** The daemon's own defaults (settings.ts) for what TestHost changes to make tests fast. */
export const DAEMON_DEFAULTS = { rescan_interval_ms: 1000, shutdown_grace_s: 10, kill_grace_s: 5 } as const;

/** One operation: /bin/true, no arguments, no approval, up to 4 at once. */
export const NOOP_ALLOWLIST = `version: 1
operations:
  - name: noop
    description: /bin/true, for the benchmark
    command: [/bin/true]
    scope: read
    approval: never
    concurrency: 4
`;

/** Every daemon this process started, so that an interrupted run leaves none behind. */
const live = new Set<ChildProcess>();

export function killLeftoverDaemons(): void {
  for (const p of live) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
}

export class BenchDaemon {
  readonly proc: ChildProcess;
  output = '';
  /** performance.now() just before spawn, and when the "daemon running" line arrived. */
  readonly spawnedAt: number;
  readyAt: number | null = null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly readyP: Promise<number>;

  /** `command`: the program and its arguments; `readyLine`: what it prints once it takes requests. */
  constructor(command: string[], env: NodeJS.ProcessEnv = process.env, private readonly readyLine = 'daemon running') {
    this.spawnedAt = performance.now();
    this.proc = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env });
    live.add(this.proc);
    this.readyP = new Promise<number>((resolve, reject) => {
      const onData = (c: Buffer) => {
        const t = performance.now();
        this.output += c.toString();
        if (this.readyAt === null && this.output.includes(this.readyLine)) {
          this.readyAt = t;
          resolve(t);
        }
        // Keep only the tail: a long run logs a line per request.
        if (this.output.length > 200_000) this.output = this.output.slice(-20_000);
      };
      this.proc.stderr!.on('data', onData);
      this.proc.stdout!.on('data', onData);
      this.proc.on('exit', () => {
        if (this.readyAt === null) reject(new Error(`the daemon exited before it was running:\n${this.output}`));
      });
    });
    this.exited = new Promise((resolve) =>
      this.proc.on('exit', (code, signal) => {
        live.delete(this.proc);
        resolve({ code, signal });
      }),
    );
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** Resolves with the time of the ready line; fails if it exits first or takes over 60 s. */
  ready(): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<number>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the daemon did not start within 60 s:\n${this.output}`)), 60_000);
    });
    return Promise.race([this.readyP, timeout]).finally(() => clearTimeout(timer));
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGTERM');
    await this.exited;
  }
}

/** Clock ticks per second for /proc/<pid>/stat. */
export const CLK_TCK = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** User and system CPU time of a process so far, in ms, from /proc/<pid>/stat. */
export function cpuTimesOf(pid: number): { user: number; sys: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]); // field 14 of the full line
  const stime = Number(fields[12]); // field 15
  return { user: (utime * 1000) / CLK_TCK, sys: (stime * 1000) / CLK_TCK };
}

/** VmRSS and VmHWM (peak) of a process, in MiB. */
export function memoryOf(pid: number): { rss_mib: number; peak_rss_mib: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss_mib: kib('VmRSS') / 1024, peak_rss_mib: kib('VmHWM') / 1024 };
}

export interface Seen {
  /** performance.now() when the final result was seen. */
  at: number;
  /** Date.now() at the same moment: the ledger's clock. */
  epoch: number;
  doc: ResultDoc;
  /** True when only the backup poll saw it (a missed file event would make the figure late). */
  byPoll: boolean;
}

/** Where a benchmark sees a host's results: its results/ folder watched, or its own connection. */
export interface Answers {
  /** Register before submitting, so that a very fast answer is not missed. */
  waitFinal(id: string, timeoutMs?: number): Promise<Seen>;
  /** How many were seen only by a backup poll (late by up to its interval). */
  readonly seenByPoll: number;
  close(): void;
}

/**
 * Sees result files as they are renamed into results/ (inotify, through fs.watch), reading a file
 * only when someone waits for that id. A backup poll every 50 ms catches a missed event; how many
 * results were only seen that way is reported, since such a figure is late by up to 50 ms.
 */
export class ResultWatcher implements Answers {
  private readonly waiters = new Map<string, { accept: (doc: ResultDoc) => boolean; resolve: (s: Seen) => void }>();
  private readonly watcher: FSWatcher;
  private readonly poll: NodeJS.Timeout;
  seenByPoll = 0;

  constructor(private readonly dir: string) {
    this.watcher = watch(dir, (_event, name) => {
      const t = performance.now();
      if (!name || name.startsWith('.') || !name.endsWith('.json')) return;
      this.check(name.slice(0, -5), t, Date.now(), false);
    });
    this.poll = setInterval(() => {
      for (const id of [...this.waiters.keys()]) this.check(id, performance.now(), Date.now(), true);
    }, 50);
  }

  waitFinal(id: string, timeoutMs = 60_000): Promise<Seen> {
    return this.waitFor(id, (doc) => isFinalState(doc.state) || doc.state === 'uncertain', 'final', timeoutMs);
  }

  /** Waits for the first result of `id` that `accept`s (`what` names it in the time-out's error). */
  waitFor(id: string, accept: (doc: ResultDoc) => boolean, what: string, timeoutMs = 60_000): Promise<Seen> {
    return new Promise<Seen>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        reject(new Error(`no ${what} result for ${id} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(id, {
        accept,
        resolve: (s) => {
          clearTimeout(timer);
          resolve(s);
        },
      });
    });
  }

  private check(id: string, at: number, epoch: number, byPoll: boolean): void {
    const w = this.waiters.get(id);
    if (!w) return;
    let doc: ResultDoc;
    try {
      doc = JSON.parse(readFileSync(path.join(this.dir, `${id}.json`), 'utf8')) as ResultDoc;
    } catch {
      return;
    }
    if (!w.accept(doc)) return;
    this.waiters.delete(id);
    if (byPoll) this.seenByPoll++;
    w.resolve({ at, epoch, doc, byPoll });
  }

  close(): void {
    clearInterval(this.poll);
    this.watcher.close();
  }
}

/** What the latency and burst measures need of a host: ours, or the reference implementation. */
export interface RequestTarget {
  /** The folder its result files are renamed into, as `<id>.json`. */
  readonly results: string;
  nextId(prefix?: string): string;
  /** Writes a no-op request (or `op`) into its queue: into a temporary file, then renamed. */
  submitFast(id: string, op?: string): void;
}

/** A host that answers on a connection of its own rather than in a results/ folder (a socket bridge). */
export interface AnsweringTarget {
  nextId(prefix?: string): string;
  submitFast(id: string): void;
  answers(): Answers;
}

/** Where `host`'s results are seen. */
export function answersOf(host: RequestTarget | AnsweringTarget): Answers {
  return 'answers' in host ? host.answers() : new ResultWatcher(host.results);
}

export class BenchHost implements RequestTarget {
  readonly t: TestHost;
  readonly key: KeyFile;
  readonly client: SpoolClient;
  private seq = 0;

  constructor(settings: Record<string, unknown> = {}, allowlist = NOOP_ALLOWLIST) {
    this.t = new TestHost(allowlist, { ...DAEMON_DEFAULTS, ...settings });
    this.key = this.t.createKey('bench', 'read');
    this.client = new SpoolClient(this.t.spool, this.key);
  }

  get home(): string {
    return this.t.home;
  }

  get spool(): string {
    return this.t.spool;
  }

  get results(): string {
    return path.join(this.t.spool, 'results');
  }

  /** `script`: the command line to run (bin/dumbwaiter.js, or a bundle of it for a what-if). */
  startDaemon(nodeArgs: string[] = [], script = CLI, env?: NodeJS.ProcessEnv): BenchDaemon {
    return new BenchDaemon([process.execPath, ...nodeArgs, script, 'daemon', '--home', this.t.home, '--spool', this.t.spool], env);
  }

  nextId(prefix = 'b'): string {
    return `${prefix}-${process.pid}-${(this.seq++).toString().padStart(7, '0')}`;
  }

  /**
   * Writes a request signed by the real client library (SpoolClient.envelope), atomically (tmp/, then
   * rename into queue/) but without the client's two fsyncs: the clock then measures the host, not
   * the sandbox's disk. (The client's own durable write is measured on its own.)
   */
  submitFast(id: string, op = 'noop', args: Record<string, unknown> = {}): void {
    const text = this.client.envelope({ id, op, args });
    const tmp = path.join(this.t.spool, 'tmp', `${id}.json.${process.pid}.tmp`);
    writeFileSync(tmp, text);
    renameSync(tmp, path.join(this.t.spool, 'queue', `${id}.json`));
  }

  async cleanup(): Promise<void> {
    await this.t.cleanup();
  }
}
