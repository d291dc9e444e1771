// Spend ceilings, computed from the ledger (so spend survives restarts): runs, cost units and run time
// of the runs that started within each ceiling's rolling window. A key's spend includes the runs of the
// keys it replaced by rotation (keys.rotated_to), and a ceiling pinned to one of those keys holds it:
// rotating a key does not start its spend again at zero.
import type { Db } from '../ledger/db';
import type { Ceiling } from '../settings';
import type { SpendView } from '../../../shared/ipc/views';

/** A ceiling's spend as the app shows it (the IPC view is the one definition). */
export type CeilingReport = SpendView;
export type Spend = SpendView['spend'];

export interface Crossing {
  ceiling: Ceiling;
  key_id: string | null;
  spend: Spend;
  message: string;
}

interface RawSpend {
  runs: number;
  cost: number;
  ms: number;
}

/** The keys `keyId` stands for: itself and every key rotated into it, however many rotations back. */
const LINEAGE = `WITH RECURSIVE lineage(id) AS (SELECT @key UNION SELECT k.key_id FROM keys k JOIN lineage l ON k.rotated_to = l.id)`;

export function keyLineage(db: Db, keyId: string): string[] {
  return (db.prepare(`${LINEAGE} SELECT id FROM lineage`).all({ key: keyId }) as { id: string }[]).map((r) => r.id);
}

/** Run time counts what is known: a finished run's duration, a running one's time so far. A run cut
 *  short by a crash (uncertain) has no known duration and adds none, rather than growing for ever. */
function rawSpend(db: Db, sinceIso: string, nowIso: string, keyId: string | null): RawSpend {
  return db
    .prepare(
      `${keyId ? LINEAGE : ''} SELECT COUNT(*) AS runs, COALESCE(SUM(cost), 0) AS cost,
              COALESCE(SUM(COALESCE(duration_ms,
                CASE WHEN state = 'running' THEN (julianday(@now) - julianday(started_at)) * 86400000.0 ELSE 0 END)), 0) AS ms
       FROM requests WHERE started_at IS NOT NULL AND started_at >= @since ${keyId ? 'AND key_id IN (SELECT id FROM lineage)' : ''}`,
    )
    .get({ since: sinceIso, now: nowIso, key: keyId }) as RawSpend;
}

const shown = (r: RawSpend): Spend => ({ runs: r.runs, cost: r.cost, run_time_s: Math.round(r.ms / 1000) });

export function spendSince(db: Db, sinceIso: string, nowIso: string, keyId: string | null): Spend {
  return shown(rawSpend(db, sinceIso, nowIso, keyId));
}

/** `lineage`: the key and the keys it replaced (a ceiling pinned to an old key id still holds it). */
function applies(c: Ceiling, lineage: string[]): boolean {
  return c.per === 'global' || c.key_id === undefined || lineage.includes(c.key_id);
}

function label(c: Ceiling, keyId: string | null): string {
  const who = c.per === 'global' ? 'all keys' : `key ${keyId}`;
  return `ceiling "${c.name}" (${who}, per ${c.window_s} s)`;
}

/** Every ceiling that one more run of `cost` units by `keyId` would cross. */
export function crossings(db: Db, ceilings: Ceiling[], keyId: string, cost: number, now = new Date()): Crossing[] {
  const out: Crossing[] = [];
  const lineage = ceilings.some((c) => c.key_id !== undefined) ? keyLineage(db, keyId) : [keyId];
  for (const c of ceilings) {
    if (!applies(c, lineage)) continue;
    const scopeKey = c.per === 'key' ? keyId : null;
    const raw = rawSpend(db, new Date(now.getTime() - c.window_s * 1000).toISOString(), now.toISOString(), scopeKey);
    const spend = shown(raw);
    let why: string | null = null;
    if (c.max_runs !== undefined && raw.runs + 1 > c.max_runs) why = `${raw.runs} of ${c.max_runs} runs used`;
    else if (c.max_cost !== undefined && raw.cost + cost > c.max_cost) why = `${raw.cost} of ${c.max_cost} cost units used, this run costs ${cost}`;
    else if (c.max_run_time_s !== undefined && raw.ms >= c.max_run_time_s * 1000) why = `${spend.run_time_s} of ${c.max_run_time_s} s of run time used`;
    if (why) out.push({ ceiling: c, key_id: scopeKey, spend, message: `${label(c, scopeKey)}: ${why}` });
  }
  return out;
}

/** Spend against every ceiling: one line per global ceiling, one per key for per-key ceilings. */
export function spendReport(db: Db, ceilings: Ceiling[], keyIds: string[], now = new Date()): CeilingReport[] {
  const out: CeilingReport[] = [];
  for (const c of ceilings) {
    const since = new Date(now.getTime() - c.window_s * 1000).toISOString();
    const keys = c.per === 'global' ? [null] : c.key_id ? [c.key_id] : keyIds;
    for (const k of keys) out.push({ ceiling: c, key_id: k, spend: spendSince(db, since, now.toISOString(), k) });
  }
  return out;
}
