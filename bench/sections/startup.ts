// Daemon start with a large history (ledger rows and result files). The history is made fast but
// realistic: ledger rows inserted with SQL in one transaction with every column the daemon itself
// fills in (ledger/requests.ts), their audit entries through the real AuditLog.record, and result
// files written directly from the real signedResultText(row), signed for the bench's key as the daemon
// signs them (unsigned ones would all be repaired after the start: work no real spool gives it).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { openLedger } from '../../main/core/ledger/db';
import { AuditLog } from '../../main/core/ledger/audit';
import type { RequestRow } from '../../main/core/ledger/requests';
import { signedResultText, unboundRejection } from '../../main/core/spool/results';
import { decodeSecret } from '../../shared/protocol/sign';
import { requestHash } from '../../shared/protocol/requestHash';
import type { ErrorCode, RequestState } from '../../shared/protocol/types';
import { BenchHost, ResultWatcher } from '../lib/host';
import { summarize, type Summary } from '../lib/stats';
import { HistoryGenerator, sha256, type Lifecycle } from '../lib/workload';

const CWD = '/home/alice/code/shop';

export interface HistoryInfo {
  results: number;
  ledger_rows: number;
  audit_entries: number;
  files: number;
  make_ms: number;
}

/** The ledger row a lifecycle leaves behind, or null where it never bound its id (refused before authentication). */
function rowOf(l: Lifecycle, keyId: string): RequestRow | 'unbound' | null {
  const kinds = l.entries.map((e) => e.kind);
  const last = l.entries[l.entries.length - 1]!;
  const iso = (ms: number) => new Date(l.at + ms).toISOString();
  const code = (last.details?.code as ErrorCode | undefined) ?? null;
  let state: RequestState;
  let errorCode: ErrorCode | null = null;
  let errorMessage: string | null = null;
  let exit: number | null = null;
  let signal: string | null = null;
  let ran = false;
  const fin = l.entries.find((e) => e.kind === 'finished');
  if (fin) {
    state = fin.details!.state as RequestState;
    exit = (fin.details!.exit_code as number | null) ?? null;
    signal = (fin.details!.signal as string | null) ?? null;
    ran = true;
    if (fin.details!.code) {
      errorCode = fin.details!.code as ErrorCode;
      errorMessage = "killed after the operation's timeout of 600 s";
    }
  } else if (kinds.includes('uncertain')) {
    state = 'uncertain';
    ran = true;
    errorCode = 'interrupted';
    errorMessage = last.message;
  } else if (last.kind === 'rejected' || last.kind === 'ceiling_hit') {
    if (code === 'bad_signature' || code === 'unknown_key' || code === 'bad_envelope') return 'unbound';
    state = 'rejected';
    errorCode = code;
    errorMessage = last.message.replace(/^\w+: /, '');
  } else if (last.kind === 'denied' || last.kind === 'approval_timeout') {
    state = 'denied';
    errorCode = last.kind === 'denied' ? 'denied' : 'approval_timeout';
    errorMessage = last.message;
  } else return null;
  const started = ran ? iso(120) : null;
  const finished = ran && state !== 'uncertain' ? iso(120 + l.ms) : null;
  const plan = { op: l.op, argv: l.argv, cwd: CWD, env: {}, timeout_s: 600, max_output_bytes: 1_048_576, concurrency: 1, cost: 0, scope: 'read', approval: 'never' };
  const approved = kinds.includes('approved') || kinds.includes('denied');
  const decider = l.entries.find((e) => e.kind === 'approved' || e.kind === 'denied')?.actor ?? null;
  const stdout = ran
    ? state === 'succeeded'
      ? `> ${l.argv.join(' ')}\n\n${l.op} done in ${(l.ms / 1000).toFixed(1)}s\n`
      : ''
    : '';
  const stderr = state === 'failed' ? `Error: ${l.op} failed\n    at main (${CWD}/scripts/run.js:12:11)\n` : '';
  return {
    id: l.id,
    wire_id: l.id,
    spool: 'default',
    key_id: keyId,
    op: l.op,
    args_json: JSON.stringify(l.args),
    binding_hash: requestHash(keyId, l.op, l.args),
    mac: sha256(l.id),
    intent: l.intent ?? null,
    created_at: iso(0),
    expires_at: null,
    claimed_at: iso(40),
    state,
    plan_json: state === 'rejected' ? null : JSON.stringify(plan),
    error_code: errorCode,
    error_message: errorMessage,
    exit_code: exit,
    signal,
    stdout,
    stderr,
    stdout_truncated: 0,
    stderr_truncated: 0,
    started_at: started,
    finished_at: finished,
    duration_ms: finished ? l.ms : null,
    pid: ran ? l.pid : null,
    resolved_by: null,
    note: null,
    updated_at: finished ?? iso(200),
    version: ran ? 4 : 2,
    synced: 1,
    approval_json: approved
      ? JSON.stringify({ operation: l.op, argv: l.argv, cwd: CWD, key_id: keyId, key_name: 'agent', intent: l.intent ?? null, requested_at: iso(40), timeout_at: iso(3_600_040), ceiling: null })
      : null,
    decided_by: decider,
    decided_at: decider ? iso(100) : null,
    ceiling_override: 0,
    cancel_requested_by: state === 'cancelled' ? (l.entries.find((e) => e.kind === 'cancel_requested')?.actor ?? null) : null,
    cost: 0,
    log_bytes: null,
    log_sha256: null,
    plan_id: null,
    limits_json: null,
    steps_json: null,
    orphaned: 0,
    run_marker: null,
    run_since: null,
    reconcile_json: null,
    approved_by_actor: kinds.includes('approved') ? decider : null,
    approved_by_grant: null,
    approved_by_plan: null,
    reconcile_pending: 0,
  };
}

/**
 * `n` results in the spool (a .json for each, a .log for each that ran) and their requests and audit
 * entries in the ledger, spread over the last 6.5 days (inside the default 7-day spool retention, so
 * the daemon's start-up retention pass keeps them all: the worst case for a start).
 */
export function makeHistory(host: BenchHost, n: number): HistoryInfo {
  const t0 = performance.now();
  const now = Date.now();
  const gen = new HistoryGenerator(99, now - 6.5 * 86_400_000, now - 60_000, n);
  const keyId = host.key.key_id;
  const signer = { keyId, secret: decodeSecret(host.key.secret) };
  const db = openLedger(path.join(host.home, 'ledger.sqlite'));
  const audit = new AuditLog(db);
  const cols = [
    'id', 'key_id', 'op', 'args_json', 'binding_hash', 'mac', 'intent', 'created_at', 'expires_at', 'claimed_at', 'state',
    'plan_json', 'error_code', 'error_message', 'exit_code', 'signal', 'stdout', 'stderr', 'stdout_truncated', 'stderr_truncated',
    'started_at', 'finished_at', 'duration_ms', 'pid', 'resolved_by', 'note', 'updated_at', 'version', 'synced', 'approval_json',
    'decided_by', 'decided_at', 'ceiling_override', 'cancel_requested_by', 'cost',
  ];
  const insert = db.prepare(`INSERT INTO requests (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`);
  const files: { id: string; json: string; log: string | null }[] = [];
  let rows = 0;
  let entries = 0;
  try {
    db.transaction(() => {
      while (files.length < n) {
        const l = gen.next();
        const row = rowOf(l, keyId);
        if (row === null) continue;
        for (const e of l.entries) {
          audit.record({ ...e, key_id: e.key_id ? keyId : null });
          entries++;
        }
        if (row === 'unbound') {
          const last = l.entries[l.entries.length - 1]!;
          const code = last.details!.code as ErrorCode;
          files.push({ id: l.id, json: JSON.stringify(unboundRejection(l.id, last.op ?? null, code, last.message.replace(/^\w+: /, '')), null, 2) + '\n', log: null });
          continue;
        }
        insert.run(row);
        rows++;
        files.push({ id: l.id, json: signedResultText(row, signer), log: row.started_at ? row.stdout + row.stderr : null });
      }
    })();
  } finally {
    db.close();
  }
  let written = 0;
  for (const f of files) {
    writeFileSync(path.join(host.results, `${f.id}.json`), f.json, { mode: 0o644 });
    written++;
    if (f.log !== null) {
      writeFileSync(path.join(host.results, `${f.id}.log`), f.log, { mode: 0o644 });
      written++;
    }
  }
  return { results: files.length, ledger_rows: rows, audit_entries: entries, files: written, make_ms: performance.now() - t0 };
}

export interface StartRun {
  to_running_ms: number;
  to_first_answer_ms: number;
}

/**
 * Starts the daemon `runs` times with one request waiting in queue/; times the "daemon running" line
 * and the first answer. `whileRunning` is called with the last start's daemon, before it stops.
 */
export async function measureStarts(host: BenchHost, runs: number, whileRunning?: (daemonPid: number) => Promise<void>): Promise<{ starts: StartRun[]; running: Summary; answered: Summary }> {
  const starts: StartRun[] = [];
  const watcher = new ResultWatcher(host.results);
  try {
    for (let i = 0; i < runs; i++) {
      const id = host.nextId('start');
      const seen = watcher.waitFinal(id, 120_000);
      host.submitFast(id);
      const d = host.startDaemon();
      try {
        const ready = await d.ready();
        const r = await seen;
        if (r.doc.state !== 'succeeded') throw new Error(`${id} ended ${r.doc.state}`);
        starts.push({ to_running_ms: ready - d.spawnedAt, to_first_answer_ms: r.at - d.spawnedAt });
        if (i === runs - 1) await whileRunning?.(d.pid);
      } finally {
        await d.stop();
      }
    }
  } finally {
    watcher.close();
  }
  return { starts, running: summarize(starts.map((s) => s.to_running_ms)), answered: summarize(starts.map((s) => s.to_first_answer_ms)) };
}
