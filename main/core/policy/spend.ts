// Spend ceilings, computed from the ledger (Requests.spentSince, so spend survives restarts): runs, cost units and run time
// of the runs that started within each ceiling's rolling window. A key's spend includes the runs of the
// keys it replaced by rotation (keys.rotated_to), and a ceiling pinned to one of those keys holds it:
// rotating a key does not start its spend again at zero.
import type { Requests, Spent } from '../ledger/requests';
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

const shown = (r: Spent): Spend => ({ runs: r.runs, cost: r.cost, run_time_s: Math.round(r.ms / 1000) });

export function spendSince(requests: Requests, sinceIso: string, nowIso: string, keyId: string | null): Spend {
  return shown(requests.spentSince(sinceIso, nowIso, keyId));
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
export function crossings(requests: Requests, ceilings: Ceiling[], keyId: string, cost: number, now = new Date()): Crossing[] {
  const out: Crossing[] = [];
  const lineage = ceilings.some((c) => c.key_id !== undefined) ? requests.keyLineage(keyId) : [keyId];
  for (const c of ceilings) {
    if (!applies(c, lineage)) continue;
    const scopeKey = c.per === 'key' ? keyId : null;
    const raw = requests.spentSince(new Date(now.getTime() - c.window_s * 1000).toISOString(), now.toISOString(), scopeKey);
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
export function spendReport(requests: Requests, ceilings: Ceiling[], keyIds: string[], now = new Date()): CeilingReport[] {
  const out: CeilingReport[] = [];
  for (const c of ceilings) {
    const since = new Date(now.getTime() - c.window_s * 1000).toISOString();
    const keys = c.per === 'global' ? [null] : c.key_id ? [c.key_id] : keyIds;
    for (const k of keys) out.push({ ceiling: c, key_id: k, spend: spendSince(requests, since, now.toISOString(), k) });
  }
  return out;
}
