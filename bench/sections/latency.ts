// Submit-to-result latency of /bin/true through the real daemon, with file events and without, and
// the bare spawn of /bin/true from Node that the host's overhead is measured against.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SpoolClient } from '../../shared/client/spoolClient';
import { openLedger } from '../../main/core/ledger/db';
import { Requests } from '../../main/core/ledger/requests';
import { AuditLog } from '../../main/core/ledger/audit';
import { Lifecycle } from '../../main/core/lifecycle';
import { resultDocOf } from '../../main/core/spool/results';
import { writeJsonAtomic } from '../../main/core/fs/atomicWrite';
import { answersOf, BenchHost, type Answers, type AnsweringTarget, type RequestTarget, type Seen } from '../lib/host';
import { sleep, summarize, type Summary } from '../lib/stats';

/**
 * A minimal Node process (bench/lib/spawner.mjs, plain node) that spawns /bin/true on request: the
 * baseline. fork() copies the parent's page tables, so a spawn from a big process costs more; this
 * one stays small (its RSS is reported), unlike the benchmark process itself.
 */
export class Spawner {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly lines: ReturnType<typeof createInterface>;
  private pending: ((line: string) => void)[] = [];
  rssMib = NaN;

  constructor() {
    this.proc = spawn(process.execPath, [path.join(import.meta.dirname, '../lib/spawner.mjs')], { stdio: 'pipe' });
    this.lines = createInterface({ input: this.proc.stdout });
    this.lines.on('line', (l) => this.pending.shift()?.(l));
  }

  sample(): Promise<number> {
    return new Promise((resolve) => {
      this.pending.push((line) => {
        const [t, rss] = line.split(' ').map(Number);
        this.rssMib = rss! / 2 ** 20;
        resolve(t!);
      });
      this.proc.stdin.write('go\n');
    });
  }

  close(): void {
    this.proc.stdin.end();
    this.lines.close();
  }
}

/** A bare `child_process.spawn('/bin/true')` from this (benchmark) process, timed to its 'close' (exited, pipes closed): what the daemon waits for too. */
export function bareSpawn(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/bin/true');
    child.on('error', reject);
    child.on('close', () => resolve(performance.now() - t0));
  });
}

export interface Stages {
  /** Mean ms from the file landing in queue/ to the ledger insert (file event or rescan, claim, read, verify, gate). */
  submit_to_recorded: number;
  /** Insert to `running` (queued result published, pump, the gate again). */
  recorded_to_started: number;
  /** `started_at` to the child's close (running result published, spawn, setPid, audit, the child itself). */
  started_to_finished: number;
  /** The child's close to the final result file in place (finish transition, audit, publish). */
  finished_to_result: number;
}

export interface LatencyRun {
  latency: Summary;
  /** The daemon's own duration_ms of the child (spawn to close, as the executor measures it). */
  child_duration: Summary;
  /** From our ledger's timestamps (null for the reference implementation, which keeps none). */
  stages: Stages | null;
  seen_by_poll: number;
  samples: number[];
}

/** The daemon's ledger timestamps (ms precision) against the submit time, averaged. */
function stagesOf(host: BenchHost, subs: { id: string; submittedEpoch: number; seenEpoch: number }[]): Stages {
  const acc = { a: 0, b: 0, c: 0, d: 0 };
  let n = 0;
  host.t.service((svc) => {
    for (const s of subs) {
      const row = svc.requests.get(s.id);
      if (!row?.started_at || !row.finished_at) continue;
      const claimed = Date.parse(row.claimed_at);
      const started = Date.parse(row.started_at);
      const finished = Date.parse(row.finished_at);
      acc.a += claimed - s.submittedEpoch;
      acc.b += started - claimed;
      acc.c += finished - started;
      acc.d += s.seenEpoch - finished;
      n++;
    }
  });
  const m = (x: number) => (n ? x / n : NaN);
  return { submit_to_recorded: m(acc.a), recorded_to_started: m(acc.b), started_to_finished: m(acc.c), finished_to_result: m(acc.d) };
}

/** One no-op request to `host`, from its submit to its result seen by `watcher` (registered first). */
async function timedRequest(host: RequestTarget | AnsweringTarget, watcher: Answers): Promise<{ id: string; t0: number; r: Seen }> {
  const id = host.nextId('lat');
  const seen = watcher.waitFinal(id);
  const t0 = performance.now();
  host.submitFast(id);
  const r = await seen;
  if (r.doc.state !== 'succeeded') throw new Error(`${id} ended ${r.doc.state}: ${JSON.stringify(r.doc.error)}`);
  return { id, t0, r };
}

/**
 * Sequential requests to several hosts in turns (one to each, then the next round), so that each sees
 * the same noise; after `warmup` rounds, each host's latencies. With `baseline`, each round starts with
 * a bare spawn from a minimal Node process (Spawner), whose times come back as `spawn`.
 */
export async function measureLatencyInTurns(
  hosts: (RequestTarget | AnsweringTarget)[],
  opts: { samples: number; warmup: number; gapMs: () => number; baseline?: boolean },
): Promise<{ runs: LatencyRun[]; spawn: number[] | null }> {
  const watchers = hosts.map(answersOf);
  const spawner = opts.baseline ? new Spawner() : null;
  const spawns: number[] = [];
  const lat: number[][] = hosts.map(() => []);
  const child: number[][] = hosts.map(() => []);
  try {
    for (let i = 0; i < opts.warmup + opts.samples; i++) {
      if (spawner) {
        const s = await spawner.sample();
        if (i >= opts.warmup) spawns.push(s);
      }
      for (const [k, host] of hosts.entries()) {
        await sleep(opts.gapMs());
        const { t0, r } = await timedRequest(host, watchers[k]!);
        if (i < opts.warmup) continue;
        lat[k]!.push(r.at - t0);
        if (r.doc.duration_ms !== null) child[k]!.push(r.doc.duration_ms);
      }
    }
  } finally {
    watchers.forEach((w) => w.close());
    spawner?.close();
  }
  return {
    runs: hosts.map((_, k) => ({ latency: summarize(lat[k]!), child_duration: summarize(child[k]!), stages: null, seen_by_poll: watchers[k]!.seenByPoll, samples: lat[k]! })),
    spawn: spawner ? spawns : null,
  };
}

/**
 * Sequential requests, one at a time. With `baseline`, each request alternates with a bare spawn so
 * that both see the same noise. `gapMs` is the pause before each request: a function, so that the
 * rescan-only run (and a polling reference) can submit at a uniformly random phase of the interval.
 */
export async function measureLatency(
  host: RequestTarget | AnsweringTarget,
  opts: { samples: number; warmup: number; gapMs: () => number; baseline: boolean },
): Promise<{ run: LatencyRun; spawn: number[] | null; inProcessSpawn: number[] | null; spawnerRssMib: number }> {
  const watcher = answersOf(host);
  const spawner = opts.baseline ? new Spawner() : null;
  const lat: number[] = [];
  const child: number[] = [];
  const spawns: number[] = [];
  const inProcess: number[] = [];
  const subs: { id: string; submittedEpoch: number; seenEpoch: number }[] = [];
  try {
    for (let i = 0; i < opts.warmup + opts.samples; i++) {
      const measured = i >= opts.warmup;
      if (spawner) {
        const s = await spawner.sample();
        const p = await bareSpawn();
        if (measured) {
          spawns.push(s);
          inProcess.push(p);
        }
      }
      await sleep(opts.gapMs());
      const { id, t0, r } = await timedRequest(host, watcher);
      if (!measured) continue;
      lat.push(r.at - t0);
      if (r.doc.duration_ms !== null) child.push(r.doc.duration_ms);
      subs.push({ id, submittedEpoch: performance.timeOrigin + t0, seenEpoch: performance.timeOrigin + r.at });
    }
  } finally {
    watcher.close();
    spawner?.close();
  }
  return {
    run: { latency: summarize(lat), child_duration: summarize(child), stages: host instanceof BenchHost ? stagesOf(host, subs) : null, seen_by_poll: watcher.seenByPoll, samples: lat },
    spawn: spawner ? spawns : null,
    inProcessSpawn: spawner ? inProcess : null,
    spawnerRssMib: spawner?.rssMib ?? NaN,
  };
}

/**
 * The sandbox side's own durable write (SpoolClient.submit: tmp/, fsync, rename, fsync queue/) into a
 * scratch spool with no daemon: what a real client adds before the host can see the request.
 */
export function measureClientSubmit(host: BenchHost, n: number): Summary {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-bench-client-'));
  try {
    mkdirSync(path.join(dir, 'tmp'));
    mkdirSync(path.join(dir, 'queue'));
    const client = new SpoolClient(dir, host.key);
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      client.submit({ op: 'noop' });
      times.push(performance.now() - t0);
    }
    return summarize(times);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The two durable steps a request's state changes are made of, with the real code on the same disk:
 * a result file replaced atomically (writeJsonAtomic: temp file, fsync, rename, fsync the folder) and
 * one ledger commit (an UPDATE in WAL mode at synchronous=FULL, as openLedger sets it).
 */
export function measureDurability(host: BenchHost, n: number): { atomicWrite: Summary; ledgerCommit: Summary } {
  const dir = mkdtempSync(path.join(host.t.root, 'durability-'));
  const db = openLedger(path.join(dir, 'ledger.sqlite'));
  try {
    const requests = new Requests(db);
    const row = new Lifecycle(db, requests, new AuditLog(db), () => {}).enter({ id: 'x', key_id: host.key.key_id, op: 'noop', args_json: '{}', binding_hash: 'h', mac: 'm', intent: null, created_at: new Date().toISOString(), expires_at: null, state: 'queued', plan: null, spool: 'default' }, []);
    const doc = resultDocOf(row);
    const writes: number[] = [];
    const commits: number[] = [];
    for (let i = 0; i < n; i++) {
      let t = performance.now();
      writeJsonAtomic(path.join(dir, `r${i % 20}.json`), doc, 0o644);
      writes.push(performance.now() - t);
      t = performance.now();
      requests.setProcesses('x', i, null, null);
      commits.push(performance.now() - t);
    }
    return { atomicWrite: summarize(writes), ledgerCommit: summarize(commits) };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
