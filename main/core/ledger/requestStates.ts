// The one writer of a request's state: a new request's row, and every change of its state. Only the
// lifecycle (main/core/lifecycle.ts) builds one, from the ledger's connection, and keeps it to itself,
// so that every state change goes through its table of transitions, its audit entries and its result
// files. eslint.config.js refuses an import of this module anywhere else (test/unit/boundary.test.ts).
import type { Db } from './db';
import type { NewRequest, RequestPatch, RequestRow } from './requests';
import type { RequestState } from '../../../shared/protocol/types';
import { nowIso } from '../time';
import { merged } from '../merged';
import { approvedByFields } from './approvedBy';

export class RequestStateWriter {
  private readonly insertStmt;

  constructor(private readonly db: Db) {
    this.insertStmt = db.prepare(
      `INSERT INTO requests (id, wire_id, key_id, op, args_json, binding_hash, mac, intent, created_at, expires_at, claimed_at,
                             state, plan_json, error_code, error_message, approval_json, decided_by, decided_at, updated_at,
                             plan_id, limits_json, steps_json, stdout, exit_code, started_at, finished_at, duration_ms, spool,
                             approved_by_actor, approved_by_grant, approved_by_plan)
       VALUES (@id, @wire_id, @key_id, @op, @args_json, @binding_hash, @mac, @intent, @created_at, @expires_at, @claimed_at,
               @state, @plan_json, @error_code, @error_message, @approval_json, @decided_by, @decided_at, @updated_at,
               @plan_id, @limits_json, @steps_json, @stdout, @exit_code, @started_at, @finished_at, @duration_ms, @spool,
               @approved_by_actor, @approved_by_grant, @approved_by_plan)
       RETURNING *`,
    );
  }

  insert(r: NewRequest): RequestRow {
    const at = nowIso();
    const { plan, approval, approved_by, ...fields } = r;
    const by = approvedByFields(approved_by ?? null);
    return this.insertStmt.get(merged(fields, {
      wire_id: r.wire_id ?? r.id,
      plan_json: plan ? JSON.stringify(plan) : null,
      error_code: r.error_code ?? null,
      error_message: r.error_message ?? null,
      approval_json: approval ? JSON.stringify(approval) : null,
      decided_by: by.decided_by,
      decided_at: approved_by ? at : null,
      approved_by_actor: by.approved_by_actor,
      approved_by_grant: by.approved_by_grant,
      approved_by_plan: by.approved_by_plan,
      plan_id: r.plan_id ?? null,
      limits_json: r.limits_json ?? null,
      steps_json: r.steps_json ?? null,
      stdout: r.stdout ?? '',
      exit_code: r.exit_code ?? null,
      started_at: r.started_at ?? null,
      finished_at: r.finished_at ?? null,
      duration_ms: r.duration_ms ?? null,
      claimed_at: at,
      updated_at: at,
    })) as RequestRow;
  }

  /**
   * Changes a request only if it is still in one of `from` (so a racing cancel or resolve wins cleanly).
   * Returns the new row, or null when the state had moved on.
   */
  transition(id: string, from: readonly RequestState[], patch: RequestPatch, guard = ''): RequestRow | null {
    const cols = Object.keys(patch);
    const set = cols.map((c) => `${c} = @${c}`).join(', ');
    const fromList = from.map((_, i) => `@from${i}`).join(', ');
    const params: Record<string, unknown> = merged(patch, { id, updated_at: nowIso() });
    from.forEach((s, i) => (params[`from${i}`] = s));
    const row = this.db
      .prepare(
        `UPDATE requests SET ${set}${set ? ', ' : ''}updated_at = @updated_at, version = version + 1, synced = 0
         WHERE id = @id AND state IN (${fromList})${guard ? ` AND ${guard}` : ''} RETURNING *`,
      )
      .get(params) as RequestRow | undefined;
    return row ?? null;
  }

  /**
   * queued -> running, in the same statement that checks the host is not paused and the key not
   * revoked: once `dumbwaiter pause` or `keys revoke` has returned, nothing more can start.
   */
  start(id: string, patch: RequestPatch): RequestRow | null {
    return this.transition(
      id,
      ['queued'],
      merged(patch, { state: 'running' as const }),
      `NOT EXISTS (SELECT 1 FROM meta WHERE k = 'paused' AND v = '1')
       AND EXISTS (SELECT 1 FROM keys WHERE keys.key_id = requests.key_id AND keys.revoked_at IS NULL)`,
    );
  }
}
