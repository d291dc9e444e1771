// Time-boxed approvals: "approve this key's calls of this operation, with these arguments, for the
// next N minutes" (each argument's rule: policy/grantRules.ts).
import { randomBytes } from 'node:crypto';
import type { Db } from './db';
import { covers, type ArgRules } from '../policy/grantRules';
import type { GrantView } from '../../../shared/ipc/views';

/** A grant as the ledger holds it is what the app is shown (the IPC view is the one definition). */
export type Grant = GrantView;

type GrantRow = Omit<Grant, 'args'> & { args_json: string | null };

function grantOf(row: GrantRow): Grant {
  const { args_json, ...g } = row;
  return args_json === null ? g : { ...g, args: JSON.parse(args_json) as ArgRules };
}

export class Grants {
  constructor(private readonly db: Db) {}

  create(keyId: string, op: string, args: ArgRules, seconds: number, by: string, now = new Date()): Grant {
    const row: GrantRow = {
      id: `g_${randomBytes(6).toString('base64url')}`,
      key_id: keyId,
      op,
      args_json: JSON.stringify(args),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + seconds * 1000).toISOString(),
      created_by: by,
      revoked_at: null,
      revoked_by: null,
      uses: 0,
    };
    this.db
      .prepare(
        `INSERT INTO grants (id, key_id, op, args_json, created_at, expires_at, created_by, revoked_at, revoked_by, uses)
         VALUES (@id, @key_id, @op, @args_json, @created_at, @expires_at, @created_by, @revoked_at, @revoked_by, @uses)`,
      )
      .run(row);
    return grantOf(row);
  }

  /** The active grant (the longest-lasting, of several) of this key and operation that covers a call
   *  with these checked arguments (RunPlan.args), if any. */
  active(keyId: string, op: string, args: Record<string, unknown>, now = new Date()): Grant | null {
    const rows = this.db
      .prepare('SELECT * FROM grants WHERE key_id = ? AND op = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY expires_at DESC')
      .all(keyId, op, now.toISOString()) as GrantRow[];
    return rows.map(grantOf).find((g) => covers(g.args, args)) ?? null;
  }

  isActive(id: string, now = new Date()): boolean {
    const g = this.get(id);
    return g !== null && g.revoked_at === null && g.expires_at > now.toISOString();
  }

  use(id: string): void {
    this.db.prepare('UPDATE grants SET uses = uses + 1 WHERE id = ?').run(id);
  }

  get(id: string): Grant | null {
    const row = this.db.prepare('SELECT * FROM grants WHERE id = ?').get(id) as GrantRow | undefined;
    return row ? grantOf(row) : null;
  }

  /** Active ones first; `all` includes expired and revoked. */
  list(all = false, now = new Date()): Grant[] {
    const where = all ? '' : 'WHERE revoked_at IS NULL AND expires_at > ?';
    const stmt = this.db.prepare(`SELECT * FROM grants ${where} ORDER BY created_at DESC`);
    return ((all ? stmt.all() : stmt.all(now.toISOString())) as GrantRow[]).map(grantOf);
  }

  /** Returns false when it was already revoked or expired. */
  revoke(id: string, by: string, now = new Date()): boolean {
    const r = this.db
      .prepare('UPDATE grants SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL AND expires_at > ?')
      .run(now.toISOString(), by, id, now.toISOString());
    return r.changes === 1;
  }
}
