// A person's verdicts on requests (`dumbwaiter approve|deny|approvals|resolve|cancel|check-reconcile`,
// the app's approvals.*, grants.* and requests.resolve/cancel/checkReconcile): approvals and the
// grants they leave, cancels, and the settling of runs whose effect is uncertain.
import { UserError } from '../errors';
import { approvalOf, planOf, type RequestRow } from '../ledger/requests';
import { keptSteps } from '../policy/plans';
import { isLocked } from '../daemon/lock';
import type { CancelOutcome, Decisions } from '../decisions';
import type { Widen } from '../policy/grantRules';
import type { Grant } from '../ledger/grants';
import type { PendingApprovalView } from '../../../shared/ipc/views';
import type { HostContext } from './context';

/** A request waiting for a person, as every face shows it (the IPC view is the one definition). */
export type PendingApproval = PendingApprovalView;

/** The host-side fields of a waiting request's card, from its recorded plan (or a plan's kept steps). */
function hostRunsOf(r: RequestRow): Pick<PendingApproval, 'run' | 'steps'> {
  const steps = keptSteps(r);
  if (steps) return { run: null, steps: steps.map((s) => ({ env: s.env, timeout_s: null, max_output_bytes: null, leaves_processes: s.leaves_processes })) };
  const p = planOf(r);
  return { run: p && { env: p.env, timeout_s: p.timeout_s, max_output_bytes: p.max_output_bytes, leaves_processes: p.leaves_processes === true }, steps: null };
}

export class Verdicts {
  constructor(private readonly ctx: HostContext) {}

  pending(): PendingApproval[] {
    return this.ctx.core.requests.inState('awaiting_approval').map((r) => ({
      id: r.id,
      op: r.op,
      key_id: r.key_id,
      spool: r.spool,
      waiting_since: r.updated_at,
      expires_at: r.expires_at,
      approval: approvalOf(r)!,
      args: keptSteps(r) ? {} : (JSON.parse(r.args_json) as Record<string, unknown>),
      ...hostRunsOf(r),
    }));
  }

  /** `forSeconds`: also approve this key's later calls of this operation with the same arguments for
   *  that long (at most a day); `widen`: the arguments those calls may vary, and how. */
  approve(id: string, actor: string, forSeconds?: number, widen?: Widen): ReturnType<Decisions['approve']> {
    if (forSeconds !== undefined && !(forSeconds >= 1 && forSeconds <= 86400)) {
      throw new UserError('a time-boxed approval lasts from 1 second to 24 hours');
    }
    return this.ctx.core.decisions.approve(id, actor, forSeconds, widen);
  }

  /** What a grant from approving `id` would let later calls carry (refused when the request cannot take `widen`). */
  grantRules(id: string, widen?: Widen): ReturnType<Decisions['grantRules']> {
    return this.ctx.core.decisions.grantRules(id, widen);
  }

  deny(id: string, actor: string, reason: string): RequestRow {
    return this.ctx.core.decisions.deny(id, actor, reason);
  }

  /** `all`: also the grants that ended (expired or revoked). */
  grants(all = false): Grant[] {
    return this.ctx.core.grants.list(all);
  }

  revokeGrant(id: string, actor: string): boolean {
    const { grants, audit } = this.ctx.core;
    const g = grants.get(id);
    if (!g) throw new UserError(`no grant ${id} (see: dumbwaiter approvals grants)`);
    const changed = grants.revoke(id, actor);
    if (changed) {
      audit.record({ kind: 'grant_revoked', actor, key_id: g.key_id, op: g.op, message: `grant ${id} (${g.op} for key ${g.key_id}) revoked by ${actor}` });
      this.ctx.wake();
    }
    return changed;
  }

  cancel(id: string, actor: string): CancelOutcome {
    return this.ctx.core.decisions.cancel(id, actor);
  }

  /**
   * A human settles an `uncertain` run; or, with `force`, an orphaned one whose processes still run
   * (the daemon watching it then ends them).
   */
  resolve(id: string, outcome: 'succeeded' | 'failed', note: string, actor: string, opts: { force?: boolean } = {}): RequestRow {
    const row = this.ctx.core.requests.get(id);
    if (!row) throw new UserError(`no request ${id} in the ledger`);
    if (row.state === 'running') return this.resolveOrphan(row, outcome, note, actor, opts.force === true);
    if (row.state !== 'uncertain') throw new UserError(`request ${id} is ${row.state}, not uncertain: nothing to resolve`);
    // The human's verdict replaces the "interrupted" error; the audit log keeps the history.
    const next = this.ctx.core.lifecycle.move(
      row,
      outcome,
      { resolved_by: 'human', note, error_code: null, error_message: null },
      { kind: 'resolved', actor, message: `uncertain run resolved as ${outcome} by ${actor}${note ? `: ${note}` : ''}` },
    );
    if (!next) throw new UserError(`request ${id} changed while resolving; look again`);
    return next;
  }

  /** A verdict on a running request: only on an orphan a daemon watches (so that its processes are
   *  ended), and only when forced. */
  private resolveOrphan(row: RequestRow, outcome: 'succeeded' | 'failed', note: string, actor: string, force: boolean): RequestRow {
    const { id, pid } = row;
    if (!isLocked(this.ctx.core.home.lock)) {
      throw new UserError(
        `request ${id} was running when the host stopped, and no host runs now: start it (dumbwaiter daemon); it then watches the run while its processes run, and marks it uncertain once they have ended`,
      );
    }
    if (row.orphaned !== 1) throw new UserError(`request ${id} is running, not uncertain: nothing to resolve (to end it: dumbwaiter cancel ${id})`);
    if (!force) throw new UserError(`request ${id} is still running (process group ${pid}): cancel it (dumbwaiter cancel ${id}), or give your verdict anyway with --force`);
    // `orphaned` stays 1 until a host has ended its processes: the one watching it, or, should that one
    // stop first (or not have adopted it yet, as it was starting), the next one at its start.
    const next = this.ctx.core.lifecycle.move(
      row,
      outcome,
      { resolved_by: 'human', note, error_code: null, error_message: null, finished_at: new Date().toISOString() },
      {
        kind: 'resolved',
        actor,
        message: `orphaned run resolved as ${outcome} by ${actor} while its processes (process group ${pid}) still ran (forced); the host ends them${note ? `: ${note}` : ''}`,
      },
    );
    if (!next) throw new UserError(`request ${id} changed while resolving; look again`);
    return next;
  }

  /**
   * Runs an uncertain request's reconcile command now (in this process, whether or not a daemon
   * runs), records the attempt and moves the request as its verdict says (daemon/reconciler.ts).
   */
  checkReconcile(id: string, actor: string): Promise<RequestRow> {
    this.ctx.core.allowlist(); // one that cannot be used now is said before anything runs
    return this.ctx.core.reconciler.check(id, actor);
  }
}
