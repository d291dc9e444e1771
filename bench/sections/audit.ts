// Audit search over a large audit log: entries inserted with the real AuditLog.record into a ledger
// opened by the real openLedger (so the FTS index and its trigger are the real ones), then searched
// through Host.audit.search, the call behind `dumbwaiter audit` and the app's audit page.
import { statSync } from 'node:fs';
import path from 'node:path';
import { openLedger } from '../../main/core/ledger/db';
import { AuditLog, type AuditQuery } from '../../main/core/ledger/audit';
import { Host } from '../../main/core/host/host';
import { BenchHost } from '../lib/host';
import { summarize, type Summary } from '../lib/stats';
import { HistoryGenerator } from '../lib/workload';

const BATCH = 50_000;

export interface AuditQueryResult {
  name: string;
  query: AuditQuery;
  rows: number;
  timing: Summary;
}

export interface AuditRun {
  entries: number;
  insert_ms: number;
  ledger_mib: number;
  all: Summary;
  queries: AuditQueryResult[];
}

export interface AuditLedger {
  entries: number;
  insert_ms: number;
  ledger_mib: number;
  /** Request ids spread through the history, oldest first, and the key ids used. */
  sampleIds: string[];
  keys: string[];
}

/** `entries` realistic audit entries over 90 days, inserted with AuditLog.record in transactions of 50k. */
export async function buildAuditLedger(host: BenchHost, entries: number, progress: (s: string) => void): Promise<AuditLedger> {
  const ledger = path.join(host.home, 'ledger.sqlite');
  const days = 90;
  const now = Date.now();
  // ~3.2 entries per request on average.
  const gen = new HistoryGenerator(42, now - days * 86_400_000, now, Math.ceil(entries / 3.2));
  const sampleIds: string[] = [];
  const db = openLedger(ledger);
  const audit = new AuditLog(db);
  const t0 = performance.now();
  let n = 0;
  let lifecycles = 0;
  try {
    while (n < entries) {
      const end = Math.min(entries, n + BATCH);
      db.transaction(() => {
        while (n < end) {
          const l = gen.next();
          if (lifecycles++ % 997 === 500) sampleIds.push(l.id);
          for (const e of l.entries) {
            if (n >= end) break;
            audit.record(e);
            n++;
          }
        }
      })();
      progress(`audit: ${n.toLocaleString('en')} / ${entries.toLocaleString('en')} entries`);
      await new Promise((r) => setImmediate(r));
    }
    audit.indexPending(); // what the daemon's batches have done a second after the last entry
  } finally {
    db.close();
  }
  const insertMs = performance.now() - t0;
  const ledgerMib = (statSync(ledger).size + (statSync(`${ledger}-wal`, { throwIfNoEntry: false })?.size ?? 0)) / 2 ** 20;
  return { entries: n, insert_ms: insertMs, ledger_mib: ledgerMib, sampleIds, keys: gen.keys };
}

/** What a person looks for: one request (by text, or by --id), a word, an error code, a kind, a key. */
export function auditQueries(l: AuditLedger): { name: string; query: AuditQuery }[] {
  const midId = l.sampleIds[Math.floor(l.sampleIds.length / 2)]!;
  const oldId = l.sampleIds[0]!;
  const limit = 50; // the command line's default
  return [
    { name: 'a request id (text)', query: { text: midId, limit } },
    { name: 'an old request id (text)', query: { text: oldId, limit } },
    { name: 'a request id (--id)', query: { requestId: midId, limit } },
    { name: 'a word: deploy', query: { text: 'deploy', limit } },
    { name: 'a code: bad_signature', query: { text: 'bad_signature', limit } },
    { name: 'two words: migrate failed', query: { text: 'migrate failed', limit } },
    { name: 'a key id', query: { text: l.keys[2]!, limit } },
    { name: 'kind: rejected', query: { kind: 'rejected', limit } },
    { name: 'kind: conflict (rare)', query: { kind: 'conflict', limit } },
    { name: 'kind: resolved (none)', query: { kind: 'resolved', limit } },
    { name: 'word + kind: timeout, finished', query: { text: 'timeout', kind: 'finished', limit } },
    { name: 'no match: zebra', query: { text: 'zebra', limit } },
  ];
}

/** Runs every query `reps` times, round robin, timing each call. */
export function timeQueries(queries: { name: string; query: AuditQuery }[], reps: number, search: (q: AuditQuery) => unknown[]): { all: Summary; queries: AuditQueryResult[] } {
  const results: AuditQueryResult[] = queries.map((q) => ({ ...q, rows: 0, timing: summarize([]) }));
  const times: number[][] = queries.map(() => []);
  for (let rep = 0; rep < reps; rep++) {
    for (let i = 0; i < queries.length; i++) {
      const a = performance.now();
      const rows = search(queries[i]!.query);
      times[i]!.push(performance.now() - a);
      results[i]!.rows = rows.length;
    }
  }
  results.forEach((r, i) => (r.timing = summarize(times[i]!)));
  return { all: summarize(times.flat()), queries: results };
}

export async function measureAudit(host: BenchHost, entries: number, reps: number, progress: (s: string) => void): Promise<AuditRun> {
  const l = await buildAuditLedger(host, entries, progress);
  const svc = new Host(host.home, host.spool);
  try {
    const r = timeQueries(auditQueries(l), reps, (q) => svc.audit.search(q));
    return { entries: l.entries, insert_ms: l.insert_ms, ledger_mib: l.ledger_mib, ...r };
  } finally {
    svc.close();
  }
}
