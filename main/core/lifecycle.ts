// Every state a request can be in, and how it gets there: the one table of transitions, and the only
// way to change a request's state. enter() records a new request in an entry state (or starts it at
// once); move() (start() for the runner's queued -> running) changes one that is still where it was
// read. Each commits the ledger change, its audit entries and, for a step of a plan, that plan's steps
// in one transaction, and then writes the result files. group() makes several of them one commit (a
// scan's step of new requests: one fsync for all), and what follows each (afterCommit) waits for it.
// Intake, the runner, decisions, the service and reconcile all go through here: the writer of states
// (ledger/requestStates.ts) is built here from the ledger's connection and handed to no one, and lint
// refuses its import in any other module; everyone else holds only the read side (ledger/requests.ts).
import type { Db } from './ledger/db';
import type { AuditEntry, AuditLog } from './ledger/audit';
import type { NewRequest, RequestPatch, RequestRow, Requests } from './ledger/requests';
import { RequestStateWriter } from './ledger/requestStates';
import type { ErrorCode, RequestState } from '../../shared/protocol/types';
import { stepsWith } from './policy/plans';
import { faultPoint } from './faults';
import { merged } from './merged';

/** Work that must wait for a commit: a result file, a claimed file's removal, a run's start. */
interface AfterCommit {
  name: string;
  then: () => void;
  /** When the commit failed instead: nothing of it is in the ledger. */
  undo?: () => void;
}

/**
 * The states a request is recorded in when intake first records it (an authenticated request binds
 * its id, whatever the answer):
 * - `queued`: the policy lets it run (at once, or when a slot is free);
 * - `awaiting_approval`: a human must decide (the operation asks, a spend ceiling would be crossed, or
 *   it is a `dumbwaiter.plan`);
 * - `rejected` / `expired`: refused by the clock or the policy;
 * - `succeeded`: a built-in the host answered itself (`dumbwaiter.ping`, `dumbwaiter.cancel`).
 */
export const ENTRY_STATES = ['queued', 'awaiting_approval', 'rejected', 'expired', 'succeeded'] as const satisfies readonly RequestState[];
export type EntryState = (typeof ENTRY_STATES)[number];

/**
 * From each state, where it may go, and who takes it there. A state may also be "moved" to itself to
 * record something about it (a run's orphan flag, a reconcile attempt, a plan's withdrawal) with the
 * same guard.
 */
export const TRANSITIONS = {
  queued: [
    'running', // the runner starts it (the gate passed again, a slot is free, the host is not paused)
    'awaiting_approval', // checked again before starting: a ceiling would be crossed, what it runs changed since its approval, or that approval (a grant, a plan) no longer holds
    'rejected', // checked again before starting: the key was revoked, the allowlist or a path changed
    'expired', // it waited past its expiry or the host's maximum age
    'failed', // its working folder is gone
    'cancelled', // a human, or the agent (dumbwaiter.cancel)
  ],
  awaiting_approval: [
    'queued', // approved (by a human, or a time-boxed grant)
    'succeeded', // a plan approved: its approval is its whole effect
    'denied', // denied, or nobody decided within the approval timeout
    'rejected', // its key was revoked
    'cancelled',
  ],
  running: [
    'succeeded', // exit 0; or a human's forced verdict on an orphan
    'failed', // non-zero exit, timeout, could not start; or a human's forced verdict on an orphan
    'cancelled', // terminated on request (an orphan too)
    'uncertain', // the host stopped while it ran (cleanly past the grace period, or a crash)
    'queued', // never started: the host stopped before its run keeper received it
  ],
  uncertain: [
    'succeeded', // a human's verdict, or the reconcile command said it happened (resolved_by)
    'failed', // a human's verdict, or reconcile said it did not happen (not_applied)
  ],
  succeeded: [],
  failed: [],
  rejected: [],
  denied: [],
  expired: [],
  cancelled: [],
} as const satisfies Record<RequestState, readonly RequestState[]>;

export function mayMove(from: RequestState, to: RequestState): boolean {
  return from === to || (TRANSITIONS[from] as readonly RequestState[]).includes(to);
}

/** The audit kind of a refusal: expiry and ceilings have their own, to be found. */
export function refusalKind(state: RequestState, code: ErrorCode): AuditEntry['kind'] {
  return state === 'expired' ? 'expired' : code === 'spend_ceiling' ? 'ceiling_hit' : 'rejected';
}

/** What the audit log says about a move; the request's id, key and operation are added. */
export type MoveNote = Omit<AuditEntry, 'request_id' | 'key_id' | 'op'>;
/** A move's entries, recorded in this order (several: a reconcile attempt, then the verdict it led to). */
export type MoveNotes = MoveNote | readonly MoveNote[];

/** What else commits with a new request's insert. */
export interface EntryWork {
  /** The step (index) of its plan (`plan_id`) it takes (policy/plans.ts matchStep): taken in the same
   *  commit as the insert, so never by two requests and never lost. */
  takesStep?: number;
  /** Other changes that stand or fall with the insert (the key's last use, a grant's use). */
  alsoInCommit?: (row: RequestRow) => void;
  /** A `queued` request that starts at once (the runner has a slot for it): queued -> running in the
   *  insert's own commit, with this patch, unless the host is paused or the key revoked by then
   *  (RequestStateWriter.start); no `queued` result file is written for it. */
  startNow?: RequestPatch;
  /** A request that did start at once: launched once the commit is made, before its result file is
   *  written (the spawn need not wait for the file). */
  launch?: (row: RequestRow) => void;
}

export class Lifecycle {
  /** The one writer of request states, built here and never handed out: private at run time too (a
   *  `#` field, which no cast or bracket reaches), and lint refuses its import elsewhere (eslint.config.js). */
  readonly #states: RequestStateWriter;

  constructor(
    private readonly db: Db,
    private readonly requests: Requests,
    private readonly audit: AuditLog,
    /** Writes the result file of a changed request (a no-op where the spool cannot be reached). */
    private readonly publish: (row: RequestRow) => void,
    /** Runs what follows a commit, recording what it throws (one request never stops the others). */
    private readonly safely: (name: string, fn: () => void) => void = (_name, fn) => fn(),
  ) {
    this.#states = new RequestStateWriter(db);
  }

  /** What waits for the group's commit; null outside a group. */
  private pending: AfterCommit[] | null = null;

  /**
   * Runs `fn` as one IMMEDIATE transaction: the entries and moves it makes share one commit (one fsync
   * however many), and each one's result files and afterCommit() work run once it is made, in order.
   * When the commit fails nothing of it is in the ledger: the work is undone instead (a claimed file
   * stays in claimed/, and is taken again by the next scan). Inside a group, a group is part of it.
   */
  group(fn: () => void): void {
    if (this.pending) return fn();
    const pending: AfterCommit[] = (this.pending = []);
    try {
      this.db.transaction(fn).immediate();
    } catch (e) {
      for (const p of pending) if (p.undo) this.safely(p.name, p.undo);
      throw e;
    } finally {
      this.pending = null;
    }
    for (const p of pending) this.safely(p.name, p.then);
  }

  /** `then` once the commit being made is (at once outside a group); `undo` if it fails instead. */
  afterCommit(name: string, then: () => void, undo?: () => void): void {
    if (this.pending) this.pending.push({ name, then, ...(undo ? { undo } : {}) });
    else then();
  }

  /**
   * Records a new request in one of ENTRY_STATES with its entries, the step of a plan it takes and
   * `work.alsoInCommit`, in one IMMEDIATE transaction (the plan's row is read again under the write
   * lock); then writes its result file, and its plan's when it took a step.
   */
  enter(r: NewRequest & { state: EntryState }, notes: MoveNotes, work: EntryWork = {}): RequestRow {
    if (!(ENTRY_STATES as readonly RequestState[]).includes(r.state)) throw new Error(`a request cannot enter as ${r.state} (lifecycle.ts)`);
    if (work.startNow && r.state !== 'queued') throw new Error(`a request entering as ${r.state} cannot start at once (lifecycle.ts)`);
    const [row, plan] = this.db.transaction(() => {
      const inserted = this.#states.insert(r);
      work.alsoInCommit?.(inserted);
      let taken = work.takesStep === undefined ? null : this.takeStep(inserted, work.takesStep);
      this.note(inserted, notes);
      const started = work.startNow ? this.#states.start(inserted.id, work.startNow) : null;
      if (started) taken = this.followPlan(started) ?? taken;
      return [started ?? inserted, taken] as const;
    }).immediate();
    this.afterCommit(row.id, () => {
      // In the ledger, nothing published: the crash tests stop here.
      faultPoint(row.state === 'running' ? 'after_start_at_once' : 'after_ledger_insert');
      if (row.state === 'running') work.launch?.(row);
      this.publishBoth(row, plan);
    });
    return row;
  }

  /**
   * Moves `row` to `to` if it is still in one of `from` (by default the state it was read in), with
   * `patch`; the change and `notes` are one commit, and the result file follows. Returns the new row, or
   * null when it had moved on (a racing decider won: nothing was changed or recorded).
   */
  move(row: RequestRow, to: RequestState, patch: RequestPatch, notes: MoveNotes, from: readonly RequestState[] = [row.state]): RequestRow | null {
    for (const f of from) if (!mayMove(f, to)) throw new Error(`no transition from ${f} to ${to} (lifecycle.ts)`);
    return this.commit(() => this.#states.transition(row.id, from, merged(patch, { state: to })), notes);
  }

  /** queued -> running, unless the host was paused or the key revoked meanwhile (RequestStateWriter.start). The
   *  `started` entry follows once the process exists (with its pid). */
  start(row: RequestRow, patch: RequestPatch): RequestRow | null {
    return this.commit(() => this.#states.start(row.id, patch), []);
  }

  /** Refused (rejected, expired or failed) from where it is, with the audit kind that says why. */
  refuse(row: RequestRow, state: 'rejected' | 'expired' | 'failed', code: ErrorCode, message: string, actor?: string): RequestRow | null {
    return this.move(row, state, { error_code: code, error_message: message }, { kind: refusalKind(state, code), message: `${code}: ${message}`, ...(actor ? { actor } : {}) });
  }

  /** A guarded change (null: it had moved on), its entries and its plan step in one commit; then the results. */
  private commit(change: () => RequestRow | null, notes: MoveNotes): RequestRow | null {
    const [next, plan] = this.db.transaction(() => {
      const n = change();
      if (n) this.note(n, notes);
      return [n, n && this.followPlan(n)] as const;
    })();
    if (next) this.afterCommit(next.id, () => this.publishBoth(next, plan));
    return next;
  }

  private note(row: RequestRow, notes: MoveNotes): void {
    const list = (Array.isArray(notes) ? notes : [notes]) as readonly MoveNote[];
    for (const note of list) this.audit.record(merged(note, { request_id: row.id, key_id: row.key_id, op: row.op }));
  }

  private publishBoth(row: RequestRow, plan: RequestRow | null): void {
    this.publish(row);
    if (plan) this.publish(plan);
  }

  /**
   * The plan hook, kept this small on purpose, and the one place a plan's steps are written: the step
   * of `row`'s plan that `row` took (with `index`: takes now) gets its id and new state, in the
   * caller's commit (the plan's result lists its steps' states). Returns the plan's changed row, to
   * publish; null when there is nothing to change (no plan, or no step of it is this request's).
   */
  private followPlan(row: RequestRow, index?: number): RequestRow | null {
    // plan_id and a step's request_id are ids as the sandbox gave them, bound within the spool.
    const plan = row.plan_id ? this.requests.bound(row.spool, row.plan_id) : null;
    const steps = plan && stepsWith(plan, row.wire_id, row.state, index);
    return plan && steps ? this.#states.transition(plan.id, [plan.state], { steps_json: steps }) : null;
  }

  /** The new request `row` takes step `index` of its approved plan, recorded on both. */
  private takeStep(row: RequestRow, index: number): RequestRow {
    const plan = this.followPlan(row, index);
    if (!plan) throw new Error(`${row.id} could not take step ${index + 1} of plan ${row.plan_id}: no such plan or step`);
    const message = `${row.id} took step ${index + 1} of plan ${plan.id} (${row.op}): it runs without asking again`;
    const details = { plan_id: plan.id, step: index + 1, step_request_id: row.id };
    this.audit.record({ kind: 'plan_step_used', request_id: row.id, key_id: row.key_id, op: row.op, message, details });
    this.audit.record({ kind: 'plan_step_used', request_id: plan.id, key_id: plan.key_id, op: plan.op, message, details });
    return plan;
  }
}
