// Reconcile: asking an operation's own lookup (its `reconcile` command) whether a run whose end the
// host missed took effect. Exit 0: it did (succeeded, resolved_by reconcile); exit 1: it did not
// (failed, not_applied: safe to retry with a new id); anything else, a timeout or no start: it stays
// uncertain for a human, with the attempt attached. The daemon checks the interrupted runs it finds,
// a few at a time once it is up; the command line and the app check one again on demand
// (Verdicts.checkReconcile, host/verdicts.ts), with or without a daemon.
import type { Allowlist } from '../allowlist/types';
import type { AuditLog } from '../ledger/audit';
import { reconcileOf, type RequestRow, type Requests } from '../ledger/requests';
import type { Lifecycle, MoveNote } from '../lifecycle';
import type { Logger } from '../log';
import type { ReconcileAttempt } from '../../../shared/protocol/types';
import { planReconcile, reconcileVerdict } from '../allowlist/plan';
import { startRun, type RunHandle, type RunOutcome } from '../exec/executor';
import { UserError } from '../errors';
import { attemptEnd, settleHint, verdictText } from '../../../shared/protocol/reconcileText';

export interface ReconcilerDeps {
  requests: Requests;
  audit: AuditLog;
  lifecycle: Lifecycle;
  allowlist: () => Allowlist;
  killGraceMs: () => number;
  log: Logger;
}

/** How many checks the daemon runs at once (one per operation): lookups, never worth a crowd. */
const SLOTS = 2;
/** How much of a check's output its uncertain message quotes (the attempt keeps all of it). */
const EXCERPT_CHARS = 200;

// What to tell a human about an interrupted run: in the protocol's words, which the clients know.
export { settleHint };

export class Reconciler {
  private readonly waiting: { id: string; op: string; by: string }[] = [];
  /** The daemon's checks in progress, by operation. */
  private readonly active = new Map<string, Promise<void>>();
  private readonly handles = new Set<RunHandle>();
  private started = false;
  private stopping = false;

  constructor(private readonly d: ReconcilerDeps) {}

  /** Whether `op` (in the allowlist as it is now) declares a reconcile command. */
  reconcilable(op: string): boolean {
    return Boolean(this.d.allowlist().operations.get(op)?.reconcile);
  }

  /** The daemon: checks `row` once it is up (start()) and a slot is free. */
  enqueue(row: RequestRow, by: string): void {
    if (!this.waiting.some((w) => w.id === row.id)) this.waiting.push({ id: row.id, op: row.op, by });
    this.pump();
  }

  start(): void {
    this.started = true;
    this.pump();
  }

  /** A stop of the daemon: nothing new is checked, and checks in progress are ended (their requests
   *  stay uncertain, the attempt saying so). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.waiting.length = 0;
    for (const h of this.handles) h.terminate('shutdown');
    await Promise.all(this.active.values());
  }

  /**
   * Runs the reconcile command of the uncertain request `id` now, records the attempt and moves the
   * request as its verdict says. Returns the request as it is then. Refuses a request that is not
   * uncertain, or whose operation declares no reconcile command.
   */
  async check(id: string, by: string): Promise<RequestRow> {
    const row = this.d.requests.get(id);
    if (!row) throw new UserError(`no request ${id} in the ledger`);
    if (row.state !== 'uncertain') {
      const why = row.state === 'running' ? 'its effect can be checked once it has ended' : 'nothing to check';
      throw new UserError(`request ${id} is ${row.state}, not uncertain: ${why}`);
    }
    const planned = planReconcile(this.d.allowlist(), row.op, JSON.parse(row.args_json) as Record<string, unknown>, row.id);
    if (!planned.ok && planned.code !== 'bad_args') throw new UserError(`${planned.message}: ${settleHint(id, false)}`);
    const at = new Date().toISOString();
    let attempt: ReconcileAttempt;
    if (!planned.ok) {
      const error = `its reconcile command cannot be made for this request's arguments now: ${planned.message}`;
      attempt = { at, argv: [], exit_code: null, signal: null, stdout: '', stderr: '', error, verdict: 'unknown', by };
    } else {
      // No live log: the run's own log stays as the run left it.
      const handle = startRun(row.id, planned.plan, null, this.d.killGraceMs());
      this.handles.add(handle);
      try {
        attempt = attemptOf(at, planned.plan.argv, await handle.done, by);
      } finally {
        this.handles.delete(handle);
      }
    }
    return this.record(row, attempt) ?? this.d.requests.get(id)!;
  }

  private pump(): void {
    while (this.started && !this.stopping && this.active.size < SLOTS) {
      const i = this.waiting.findIndex((w) => !this.active.has(w.op));
      if (i === -1) return;
      const [w] = this.waiting.splice(i, 1);
      const { id, op, by } = w!;
      const p = this.check(id, by).then(
        (row) => this.d.log.info(`${id}: reconcile check by ${by}: ${row.state}`),
        (e: Error) => (e instanceof UserError ? this.d.log.warn(`${id}: not checked: ${e.message}`) : this.d.log.error(`${id}: reconcile check: ${e.stack ?? e.message}`)),
      );
      this.active.set(op, p.finally(() => {
        this.active.delete(op);
        this.pump();
      }));
    }
  }

  /** The move the attempt's verdict calls for, with the attempt's audit entry in its commit (and the
   *  verdict's, when it had one). Null: the request had moved on; the attempt is then recorded alone. */
  private record(row: RequestRow, a: ReconcileAttempt): RequestRow | null {
    const said = what(a);
    const attempt: MoveNote = {
      kind: 'reconcile',
      actor: a.by,
      message: `reconcile check by ${a.by}: ${said}: it ${verdictText(a.verdict)}`,
      details: { argv: a.argv, exit_code: a.exit_code, signal: a.signal, verdict: a.verdict, by: a.by, ...(a.error ? { error: a.error } : {}) },
    };
    const reconcile_json = JSON.stringify(a);
    let next: RequestRow | null;
    if (a.verdict === 'unknown') {
      const message = `the run was interrupted: it may or may not have taken effect and will not be re-run; its reconcile command could not tell (${said}). ${settleHint(row.id, true)}`;
      // A check a stop cut short is made again at the next start: still pending then.
      next = this.d.lifecycle.move(row, 'uncertain', { reconcile_json, error_message: message, reconcile_pending: a.error === CUT_SHORT ? 1 : 0 }, attempt);
    } else {
      const applied = a.verdict === 'applied';
      const error = applied ? null : `its reconcile command says it did not take effect (${said}): it is safe to retry with a new request id`;
      next = this.d.lifecycle.move(row, applied ? 'succeeded' : 'failed', { resolved_by: 'reconcile', reconcile_json, reconcile_pending: 0, error_code: applied ? null : 'not_applied', error_message: error }, [
        attempt,
        { kind: 'reconciled', actor: a.by, message: `reconciled as ${applied ? 'succeeded: its reconcile command says it took effect' : 'failed: its reconcile command says it did not take effect'} (${said})` },
      ]);
    }
    if (!next) {
      // A command ran on the host: the log keeps it even though the request was settled meanwhile.
      const now = this.d.requests.get(row.id)?.state;
      this.d.audit.record({ ...attempt, message: `${attempt.message} (not applied: the request is ${now} now)`, request_id: row.id, key_id: row.key_id, op: row.op });
    }
    return next;
  }
}

/** A check ended by a stop of the host: it said nothing, so the next start checks again. */
const CUT_SHORT = 'the check was ended because the host was stopping';

/** An interrupted run whose effect its reconcile command has not yet been able to look up: never
 *  checked (a crash before or during the check, a clean stop that ended the run), or checked only by
 *  a check a stop cut short. */
export function uncheckedInterruption(row: RequestRow): boolean {
  if (row.state !== 'uncertain' || row.error_code !== 'interrupted') return false;
  const last = reconcileOf(row);
  return last === null || last.error === CUT_SHORT;
}

function attemptOf(at: string, argv: string[], o: RunOutcome, by: string): ReconcileAttempt {
  // A check ended by a stop says nothing, whatever it exited with.
  const error = o.error?.message ?? (o.terminated ? CUT_SHORT : null);
  const verdict = o.terminated ? 'unknown' : reconcileVerdict(o);
  return { at, argv, exit_code: o.exit_code, signal: o.signal, stdout: o.stdout, stderr: o.stderr, error, verdict, by };
}

/** What a check said, in a few words: how it ended, and its output's last line. */
function what(a: ReconcileAttempt): string {
  const end = attemptEnd(a);
  const last = (a.stderr.trim() || a.stdout.trim()).split('\n').pop()?.trim() ?? '';
  // JSON quoting: a control character in the output reaches no terminal as it is.
  return last ? `${end}: ${JSON.stringify(last.slice(0, EXCERPT_CHARS))}` : end;
}
