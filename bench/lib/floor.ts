// The floor host (floorHost.mjs) as the benchmark reaches it: a spool of its own, and requests written
// as BenchHost.submitFast writes them, so that measureLatency times it as it times the daemon.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RequestTarget } from './host';

/** Where a floor host starts runs: in its own process, a Node spawner process, or a Python one. */
export type FloorRuns = 'in-process' | 'spawner' | 'python';

/** Whether this machine can start the `python` floor (python3 on the PATH). */
export function pythonHere(): boolean {
  return spawnSync('python3', ['--version']).status === 0;
}

/** How the output names each (after "the run"). */
export const FLOOR_RUNS: Record<FloorRuns, string> = { 'in-process': 'in-process', spawner: 'through a Node spawner process', python: 'through a Python spawner (vfork)' };

export class FloorHost implements RequestTarget {
  readonly spool = mkdtempSync(path.join(os.tmpdir(), 'dw-floor-'));
  readonly results = path.join(this.spool, 'results');
  private readonly proc: ChildProcess;
  private readonly readyP: Promise<void>;
  private seq = 0;

  constructor(readonly runs: FloorRuns) {
    for (const d of ['queue', 'claimed', 'tmp', 'results']) mkdirSync(path.join(this.spool, d));
    this.proc = fork(path.join(import.meta.dirname, 'floorHost.mjs'), [this.spool, runs], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.readyP = new Promise((resolve, reject) => {
      this.proc.once('message', () => resolve());
      this.proc.once('exit', (code) => reject(new Error(`the floor host exited with code ${code} before it was ready`)));
    });
  }

  /** Resolves once it watches its queue/. */
  ready(): Promise<void> {
    return this.readyP;
  }

  nextId(prefix = 'f'): string {
    return `${prefix}-${(this.seq++).toString().padStart(7, '0')}`;
  }

  /** A temporary file renamed into queue/, without fsyncs (as BenchHost.submitFast), signed as floorHost.mjs checks. */
  submitFast(id: string): void {
    const body = { id, op: 'noop', args: {} };
    const mac = createHmac('sha256', 'floor-benchmark-key').update(JSON.stringify(body)).digest('hex');
    const tmp = path.join(this.spool, 'tmp', `${id}.json.tmp`);
    writeFileSync(tmp, JSON.stringify({ body, mac }));
    renameSync(tmp, path.join(this.spool, 'queue', `${id}.json`));
  }

  /** Ends it (its spawner with it) and removes its spool. */
  async close(): Promise<void> {
    const exited = new Promise((r) => (this.proc.exitCode !== null || this.proc.signalCode !== null ? r(null) : this.proc.once('exit', r)));
    if (this.proc.connected) this.proc.disconnect();
    await exited;
    rmSync(this.spool, { recursive: true, force: true });
  }
}
