// The floor hosts as the benchmark reaches them: floorHost.mjs over a spool of its own (the queue
// watched, or listed every `pollMs`), requests written as BenchHost.submitFast writes them, so that
// measureLatency times it as it times the daemon; and bridgeHost.mjs, the same steps behind a Unix
// socket, answering on the connection. Both start runs as the product does (floorSteps.mjs).
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { buildSync } from 'esbuild';
import type { Answers, AnsweringTarget, RequestTarget, Seen } from './host';
import type { ResultDoc } from '../../shared/protocol/types';

/** Where a floor host starts runs: in its own process, a Node spawner process, or a Python one. */
export type FloorRuns = 'in-process' | 'spawner' | 'python';

/** Whether this machine can start the `python` floor (python3 on the PATH). */
export function pythonHere(): boolean {
  return spawnSync('python3', ['--version']).status === 0;
}

/** How the output names each (after "the run"). */
export const FLOOR_RUNS: Record<FloorRuns, string> = { 'in-process': 'in-process', spawner: 'through a Node spawner process', python: 'through a Python spawner (vfork)' };

/** floorSteps.mjs's key. */
const FLOOR_KEY = 'floor-benchmark-key';

let spawningBuilt = false;

/** The product's choice of spawning (main/core/exec/nativeSpawn.ts) as plain JavaScript for the floor's
 *  processes: dist/bench/spawning.mjs, from which the addon is found at native/build/ as from dist/host/. */
function buildSpawning(): void {
  if (spawningBuilt) return;
  const root = path.resolve(import.meta.dirname, '../..');
  const out = path.join(root, 'dist', 'bench', 'spawning.mjs');
  const tmp = `${out}.${process.pid}.tmp`; // two benchmarks may build at once: whole files by rename
  buildSync({ entryPoints: [path.join(root, 'main/core/exec/nativeSpawn.ts')], outfile: tmp, bundle: true, platform: 'node', target: 'node20', format: 'esm', logLevel: 'error' });
  renameSync(tmp, out);
  spawningBuilt = true;
}

/** One of the floor's processes: its folder, its process, its readiness and its end. */
abstract class FloorProcess {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'dw-floor-'));
  protected readonly proc: ChildProcess;
  private readonly readyP: Promise<void>;
  private seq = 0;

  constructor(script: string, args: string[]) {
    buildSpawning();
    this.prepare();
    this.proc = fork(path.join(import.meta.dirname, script), [this.dir, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.readyP = new Promise((resolve, reject) => {
      this.proc.once('message', () => resolve());
      this.proc.once('exit', (code) => reject(new Error(`${script} exited with code ${code} before it was ready`)));
    });
  }

  protected abstract prepare(): void;

  get pid(): number {
    return this.proc.pid!;
  }

  /** Resolves once it takes requests. */
  ready(): Promise<void> {
    return this.readyP;
  }

  nextId(prefix = 'f'): string {
    return `${prefix}-${(this.seq++).toString().padStart(7, '0')}`;
  }

  /** A no-op request signed as floorSteps.mjs checks it. */
  protected envelope(id: string): string {
    const body = { id, op: 'noop', args: {} };
    return JSON.stringify({ body, mac: createHmac('sha256', FLOOR_KEY).update(JSON.stringify(body)).digest('hex') });
  }

  /** Ends it (its spawner with it) and removes its folder. */
  async close(): Promise<void> {
    const exited = new Promise((r) => (this.proc.exitCode !== null || this.proc.signalCode !== null ? r(null) : this.proc.once('exit', r)));
    if (this.proc.connected) this.proc.disconnect();
    await exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The floor over the spool: file events on queue/, or (with `pollMs`) a listing of it at each tick. */
export class FloorHost extends FloorProcess implements RequestTarget {
  readonly results = path.join(this.dir, 'results');

  constructor(
    readonly runs: FloorRuns,
    readonly pollMs?: number,
  ) {
    super('floorHost.mjs', [runs, ...(pollMs === undefined ? [] : [String(pollMs)])]);
  }

  get spool(): string {
    return this.dir;
  }

  protected prepare(): void {
    for (const d of ['queue', 'claimed', 'tmp', 'results']) mkdirSync(path.join(this.dir, d));
  }

  /** A temporary file renamed into queue/, without fsyncs (as BenchHost.submitFast). */
  submitFast(id: string): void {
    const tmp = path.join(this.dir, 'tmp', `${id}.json.tmp`);
    writeFileSync(tmp, this.envelope(id));
    renameSync(tmp, path.join(this.dir, 'queue', `${id}.json`));
  }
}

/** The results of a BridgeHost, as they come back on its connection. */
class BridgeAnswers implements Answers {
  readonly seenByPoll = 0;
  private readonly waiters = new Map<string, (s: Seen) => void>();
  private readonly onLine = (l: string) => {
    const at = performance.now();
    const doc = JSON.parse(l) as ResultDoc;
    this.waiters.get(doc.id)?.({ at, epoch: performance.timeOrigin + at, doc, byPoll: false });
    this.waiters.delete(doc.id);
  };

  constructor(private readonly lines: ReturnType<typeof createInterface>) {
    lines.on('line', this.onLine);
  }

  waitFinal(id: string, timeoutMs = 60_000): Promise<Seen> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        reject(new Error(`no answer for ${id} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(id, (s) => {
        clearTimeout(timer);
        resolve(s);
      });
    });
  }

  close(): void {
    this.lines.off('line', this.onLine);
    this.waiters.clear();
  }
}

/** The floor behind a Unix socket: one connection, kept open, one JSON line each way a request. */
export class BridgeHost extends FloorProcess implements AnsweringTarget {
  private socket: Socket | null = null;
  private lines: ReturnType<typeof createInterface> | null = null;

  constructor(readonly runs: FloorRuns) {
    super('bridgeHost.mjs', [runs]);
  }

  protected prepare(): void {}

  /** Resolves once it listens and the connection is made. */
  override async ready(): Promise<void> {
    await super.ready();
    if (this.socket) return;
    const s = connect(path.join(this.dir, 'bridge.sock'));
    await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject));
    this.socket = s;
    this.lines = createInterface({ input: s });
  }

  /** The request written on the connection (no file, no fsync: as a client of a socket does). */
  submitFast(id: string): void {
    this.socket!.write(`${this.envelope(id)}\n`);
  }

  answers(): Answers {
    return new BridgeAnswers(this.lines!);
  }

  override async close(): Promise<void> {
    this.lines?.close();
    this.socket?.destroy();
    await super.close();
  }
}
