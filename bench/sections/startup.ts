// Daemon start with a large history (ledger rows and result files). The history is made fast but
// realistic, in one transaction: each request entered and moved to where it ended through the real
// Lifecycle (the one writer of request states, as the daemon does), its audit entries through the real
// AuditLog.record, its result file written directly from the real signedResultText(row), signed for the
// bench's key as the daemon signs them, and marked written (unwritten or unsigned ones would all be
// repaired after the start: work no real spool gives it).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { openLedger } from '../../main/core/ledger/db';
import { AuditLog } from '../../main/core/ledger/audit';
import { Requests, type NewRequest, type RequestPatch } from '../../main/core/ledger/requests';
import { Lifecycle, type EntryState } from '../../main/core/lifecycle';
import type { RunPlan } from '../../main/core/allowlist/plan';
import { signedResultText, unboundRejection } from '../../main/core/spool/results';
import { decodeSecret } from '../../shared/protocol/sign';
import { requestHash } from '../../shared/protocol/requestHash';
import type { ErrorCode, RequestState } from '../../shared/protocol/types';
import { BenchHost, ResultWatcher } from '../lib/host';
import { summarize, type Summary } from '../lib/stats';
import { HistoryGenerator, sha256, type Lifecycle as Story } from '../lib/workload';

const CWD = '/home/alice/code/shop';

export interface HistoryInfo {
  results: number;
  ledger_rows: number;
  audit_entries: number;
  files: number;
  make_ms: number;
}

/** How a story's request went through the lifecycle: the state it entered in (started at once, when
 *  `startNow`: a slot was free), then its moves. */
interface Path {
  entered: NewRequest & { state: EntryState };
  startNow?: RequestPatch;
  moves: [RequestState, RequestPatch][];
}

/** The way a story's request went, or null where it never bound its id (refused before authentication). */
function pathOf(l: Story, keyId: string): Path | 'unbound' | null {
  const kinds = l.entries.map((e) => e.kind);
  const last = l.entries[l.entries.length - 1]!;
  const iso = (ms: number) => new Date(l.at + ms).toISOString();
  const code = (last.details?.code as ErrorCode | undefined) ?? null;
  const plan = { op: l.op, argv: l.argv, cwd: CWD, env: {}, timeout_s: 600, max_output_bytes: 1_048_576, concurrency: 1, cost: 0, scope: 'read', approval: 'never' } satisfies RunPlan;
  const decider = l.entries.find((e) => e.kind === 'approved' || e.kind === 'denied')?.actor ?? null;
  const asked = kinds.includes('approved') || kinds.includes('denied');
  const entered = (state: EntryState, fields: Partial<NewRequest> = {}): NewRequest & { state: EntryState } => ({
    id: l.id,
    spool: 'default',
    key_id: keyId,
    op: l.op,
    args_json: JSON.stringify(l.args),
    binding_hash: requestHash(keyId, l.op, l.args),
    mac: sha256(l.id),
    intent: l.intent ?? null,
    created_at: iso(0),
    expires_at: null,
    plan,
    approval: asked
      ? { operation: l.op, argv: l.argv, cwd: CWD, key_id: keyId, key_name: 'agent', intent: l.intent ?? null, requested_at: iso(40), timeout_at: iso(3_600_040), ceiling: null }
      : null,
    ...fields,
    state,
  });
  const decided = { decided_by: decider, decided_at: iso(100) };

  const fin = l.entries.find((e) => e.kind === 'finished');
  if (fin || kinds.includes('uncertain')) {
    const moves: [RequestState, RequestPatch][] = [];
    const started = { started_at: iso(120), pid: l.pid };
    if (asked) moves.push(['queued', { ...decided, approved_by_actor: decider }], ['running', started]);
    if (fin) {
      const state = fin.details!.state as RequestState;
      moves.push([state, {
        exit_code: (fin.details!.exit_code as number | null) ?? null,
        signal: (fin.details!.signal as string | null) ?? null,
        stdout: state === 'succeeded' ? `> ${l.argv.join(' ')}\n\n${l.op} done in ${(l.ms / 1000).toFixed(1)}s\n` : '',
        stderr: state === 'failed' ? `Error: ${l.op} failed\n    at main (${CWD}/scripts/run.js:12:11)\n` : '',
        finished_at: iso(120 + l.ms),
        duration_ms: l.ms,
        ...(fin.details!.code ? { error_code: fin.details!.code as ErrorCode, error_message: "killed after the operation's timeout of 600 s" } : {}),
        ...(state === 'cancelled' ? { cancel_requested_by: l.entries.find((e) => e.kind === 'cancel_requested')?.actor ?? null } : {}),
      }]);
    } else moves.push(['uncertain', { error_code: 'interrupted', error_message: last.message }]);
    return asked ? { entered: entered('awaiting_approval'), moves } : { entered: entered('queued'), startNow: started, moves };
  }
  if (last.kind === 'rejected' || last.kind === 'ceiling_hit') {
    if (code === 'bad_signature' || code === 'unknown_key' || code === 'bad_envelope') return 'unbound';
    return { entered: entered('rejected', { plan: null, error_code: code, error_message: last.message.replace(/^\w+: /, '') }), moves: [] };
  }
  if (last.kind === 'denied' || last.kind === 'approval_timeout') {
    const denied = { error_code: last.kind === 'denied' ? ('denied' as const) : ('approval_timeout' as const), error_message: last.message, ...decided };
    return { entered: entered('awaiting_approval'), moves: [['denied', denied]] };
  }
  return null;
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
  const requests = new Requests(db);
  // Result files are written below, all at once, as a spool's writer would have written them.
  const lifecycle = new Lifecycle(db, requests, audit, () => {});
  const files: { id: string; json: string; log: string | null }[] = [];
  let rows = 0;
  let entries = 0;
  try {
    db.transaction(() => {
      while (files.length < n) {
        const l = gen.next();
        const way = pathOf(l, keyId);
        if (way === null) continue;
        for (const e of l.entries) {
          audit.record({ ...e, key_id: e.key_id ? keyId : null });
          entries++;
        }
        if (way === 'unbound') {
          const last = l.entries[l.entries.length - 1]!;
          const code = last.details!.code as ErrorCode;
          files.push({ id: l.id, json: JSON.stringify(unboundRejection(l.id, last.op ?? null, code, last.message.replace(/^\w+: /, '')), null, 2) + '\n', log: null });
          continue;
        }
        let row = lifecycle.enter(way.entered, [], way.startNow ? { startNow: way.startNow } : {});
        for (const [to, patch] of way.moves) row = lifecycle.move(row, to, patch, [])!;
        requests.markSynced(row.id, row.version);
        rows++;
        files.push({ id: l.id, json: signedResultText(row, signer), log: row.started_at ? row.stdout + row.stderr : null });
      }
    })();
    requests.flushSynced();
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
