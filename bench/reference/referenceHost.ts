// Runs the reference implementation (refdaemon.py, beside this file) for the benchmark: a folder with
// its queue/, work/ and results/, a shared token, and its one command (`noop`: /bin/true). Requests
// are written the way the benchmark writes ours (a temporary file renamed into queue/, no fsync).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { BenchDaemon, type RequestTarget } from '../lib/host';

const SCRIPT = path.join(import.meta.dirname, 'refdaemon.py');

/** Its poll interval at its fastest, and by default (the docs of such tools say 0.5-1 s). */
export const REFERENCE_POLL_MS = { fastest: 10, default: 500 } as const;

/** The interpreter itself, not a shim in front of it (pyenv's adds a shell and ~50 ms to each start),
 *  so that the process measured is the daemon. */
let python: string | null = null;

function pythonPath(): string {
  if (python) return python;
  const r = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.trim()) throw new Error(`the reference implementation needs python3: ${r.stderr || r.error}`);
  return (python = r.stdout.trim());
}

export class ReferenceHost implements RequestTarget {
  readonly root = mkdtempSync(path.join(os.tmpdir(), 'dw-bench-ref-'));
  readonly results = path.join(this.root, 'results');
  private readonly token = randomBytes(24).toString('hex');
  private seq = 0;

  constructor() {
    for (const d of ['queue', 'work', 'results', 'tmp']) mkdirSync(path.join(this.root, d));
    writeFileSync(path.join(this.root, 'token'), this.token, { mode: 0o600 });
    writeFileSync(path.join(this.root, 'commands.json'), JSON.stringify({ noop: ['/bin/true'] }));
  }

  start(pollMs: number): BenchDaemon {
    const args = ['--root', this.root, '--token-file', path.join(this.root, 'token'), '--commands', path.join(this.root, 'commands.json'), '--poll-ms', String(pollMs)];
    return new BenchDaemon([pythonPath(), SCRIPT, ...args], process.env, 'reference running');
  }

  nextId(prefix = 'ref'): string {
    return `${prefix}-${process.pid}-${(this.seq++).toString().padStart(7, '0')}`;
  }

  submitFast(id: string, op = 'noop'): void {
    const tmp = path.join(this.root, 'tmp', `${id}.json`);
    writeFileSync(tmp, JSON.stringify({ id, op, token: this.token, created_at: new Date().toISOString() }));
    renameSync(tmp, path.join(this.root, 'queue', `${id}.json`));
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}
