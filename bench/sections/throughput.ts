// Throughput: a burst of no-op requests written while the host runs (ours: max_concurrent_runs 4, the
// operation's concurrency 4; the floor hosts: 4 at once; the reference: one at a time), timed from the
// first write to the last final result in place (or answered). CPU is the host's own processes'
// (procTree.ts), never the operations'.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BenchHost, type AnsweringTarget, type RequestTarget } from '../lib/host';
import { cpuBetween, treeCpu, type CpuDelta } from '../lib/procTree';
import { sleep } from '../lib/stats';
import type { ResultDoc } from '../../shared/protocol/types';

export interface ThroughputRun {
  requests: number;
  per_second: number;
  elapsed_ms: number;
  /** How long writing the burst into queue/ took (the daemon was already taking them meanwhile). */
  submit_ms: number;
  /** CPU time the host's processes used for the burst, per request: in all, in user mode, in the kernel. */
  daemon_cpu_ms_per_request: number;
  daemon_user_ms_per_request: number;
  daemon_sys_ms_per_request: number;
  /** Each host process's CPU for the whole burst (the daemon's, its spawner's). */
  processes: CpuDelta['processes'];
}

let bursts = 0;

/** When a burst is done: the epoch ms of its last final result, each checked `succeeded`. */
type BurstEnd = { end: () => Promise<number>; close: () => void };

/** Ours from the ledger (a read-only connection: no file reads competing with the daemon), a spool
 *  host's from its results/ listing, then each result file's change time (the rename that put it in
 *  place); a host that answers on a connection, from its answers (registered before the burst). */
function burstEnd(host: RequestTarget | AnsweringTarget, ids: string[], prefix: string): BurstEnd {
  if ('answers' in host) {
    const answers = host.answers();
    const seen = ids.map((id) => answers.waitFinal(id, 10 * 60_000));
    const end = async () => {
      let last = 0;
      for (const s of await Promise.all(seen)) {
        if (s.doc.state !== 'succeeded') throw new Error(`${s.doc.id} ended ${s.doc.state}`);
        last = Math.max(last, s.epoch);
      }
      return last;
    };
    return { end, close: () => answers.close() };
  }
  const done = doneCounter(host, prefix);
  const end = async () => {
    const deadline = Date.now() + 10 * 60_000;
    while (done.count() < ids.length) {
      if (Date.now() > deadline) throw new Error('the burst did not finish within 10 minutes');
      await sleep(100);
    }
    // Our ledger commits before the result file is written: wait for every file to be final, then take
    // the last one's change time (the rename that put it in place) as the end.
    let last = 0;
    for (const id of ids) {
      const file = path.join(host.results, `${id}.json`);
      for (let tries = 0; ; tries++) {
        const doc = JSON.parse(readFileSync(file, 'utf8')) as ResultDoc;
        if (doc.state === 'succeeded') break;
        if (doc.state !== 'queued' && doc.state !== 'running') throw new Error(`${id} ended ${doc.state}: ${JSON.stringify(doc.error)}`);
        if (tries > 100) throw new Error(`${id} stays ${doc.state}`);
        await sleep(20);
      }
      last = Math.max(last, statSync(file).ctimeMs);
    }
    return last;
  };
  return { end, close: () => done.close() };
}

/** How many of a burst are done: ours from the ledger, the others' from results/ (they keep nothing else). */
function doneCounter(host: RequestTarget, prefix: string): { count: () => number; close: () => void } {
  if (host instanceof BenchHost) {
    const db = new Database(path.join(host.home, 'ledger.sqlite'), { readonly: true, fileMustExist: true });
    const q = db.prepare(`SELECT COUNT(*) AS n FROM requests WHERE id LIKE '${prefix}-%' AND state IN ('succeeded', 'failed', 'rejected')`);
    return { count: () => (q.get() as { n: number }).n, close: () => db.close() };
  }
  return { count: () => readdirSync(host.results).filter((n) => n.startsWith(`${prefix}-`) && n.endsWith('.json')).length, close: () => {} };
}

/** A burst of `n` no-op requests to `host`, whose processes are found from `pid` (and its home: procTree.ts). */
export async function measureThroughput(host: RequestTarget | AnsweringTarget, n: number, pid: number): Promise<ThroughputRun> {
  const prefix = `tp${bursts++}`; // this burst's own ids
  const ids = Array.from({ length: n }, () => host.nextId(prefix));
  const home = host instanceof BenchHost ? host.home : undefined;
  const finished = burstEnd(host, ids, prefix);
  try {
    const cpu0 = treeCpu(pid, home);
    const startEpoch = performance.timeOrigin + performance.now();
    for (const id of ids) host.submitFast(id);
    const submitMs = performance.timeOrigin + performance.now() - startEpoch;
    const last = await finished.end();
    const cpu = cpuBetween(cpu0, treeCpu(pid, home));
    const elapsed = last - startEpoch;
    return {
      requests: n,
      per_second: (n * 1000) / elapsed,
      elapsed_ms: elapsed,
      submit_ms: submitMs,
      daemon_cpu_ms_per_request: (cpu.user + cpu.sys) / n,
      daemon_user_ms_per_request: cpu.user / n,
      daemon_sys_ms_per_request: cpu.sys / n,
      processes: cpu.processes,
    };
  } finally {
    finished.close();
  }
}
