// `dumbwaiter requests`: the host's recent requests, newest first, by state, spool, key and age.
import type { Host } from '../../core/host/host';
import { UserError } from '../../core/errors';
import { parseDuration } from '../../core/duration';
import type { RequestFilter, RequestSummary } from '../../core/ledger/requests';
import { STATES, type RequestState } from '../../../shared/protocol/types';
import { UsageError } from '../args';
import { ago, printJson, printTable, say } from '../output';

export const REQUESTS_USAGE = 'usage: dumbwaiter requests [--state S[,S...]] [--spool NAME] [--key NAME] [--since DURATION] [--limit N] [--json]';

export const REQUESTS_OPTIONS = {
  state: { type: 'string', multiple: true },
  key: { type: 'string' },
  since: { type: 'string' },
  limit: { type: 'string', default: '50' },
} as const;

export interface RequestsQuery {
  /** Each may list several, comma-separated. */
  state?: string[];
  /** A key's name (or id). */
  key?: string;
  since?: string;
  limit: string;
  /** --spool (or $DUMBWAITER_SPOOL): only the spool the service acts on, which this names. */
  spool?: string;
  json: boolean;
}

/** At most this many rows (the ledger's own cap on a page). */
const MOST = 1000;

/** The filter a query means, checked: unknown states, keys, spools and durations are refused. */
export function requestFilter(svc: Host, q: RequestsQuery, now = Date.now()): RequestFilter {
  const limit = Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MOST) throw new UsageError(`--limit must be a whole number from 1 to ${MOST}`);
  const f: RequestFilter = { limit };
  if (q.state?.length) {
    const states = q.state.flatMap((s) => s.split(',')).map((s) => s.trim());
    const unknown = states.filter((s) => !(STATES as readonly string[]).includes(s));
    if (unknown.length) throw new UsageError(`no state ${JSON.stringify(unknown[0])}: one of ${STATES.join(', ')}`);
    f.states = states as RequestState[];
  }
  if (q.spool !== undefined) {
    const spool = svc.context.spool;
    if (!spool) throw new UserError(`this home has no spool ${JSON.stringify(q.spool)} (dumbwaiter spools list)`);
    f.spool = spool.name;
  }
  if (q.key !== undefined) {
    // A name may be on several keys (a rotated key keeps it): their requests together.
    const keys = svc.keys.list().filter((k) => k.name === q.key || k.key_id === q.key);
    if (keys.length === 0) throw new UserError(`no key named ${JSON.stringify(q.key)} (dumbwaiter keys list)`);
    f.keyIds = keys.map((k) => k.key_id);
  }
  if (q.since !== undefined) f.since = new Date(now - parseDuration(q.since) * 1000).toISOString();
  return f;
}

function outcome(r: RequestSummary): string {
  if (r.error_code) return r.error_code;
  if (r.exit_code !== null) return `exit ${r.exit_code}${r.duration_ms !== null ? ` in ${(r.duration_ms / 1000).toFixed(1)} s` : ''}`;
  return '';
}

export function listRequests(svc: Host, q: RequestsQuery): void {
  const rows = svc.requests.list(requestFilter(svc, q));
  const names = new Map(svc.keys.list().map((k) => [k.key_id, k.name]));
  if (q.json) return printJson(rows.map(({ seq: _seq, ...r }) => ({ ...r, key_name: names.get(r.key_id) ?? null })));
  if (rows.length === 0) return say('No requests match.');
  printTable([
    ['ID', 'STATE', 'OPERATION', 'KEY', 'SPOOL', 'CLAIMED', 'OUTCOME'],
    ...rows.map((r) => [r.id, r.state, r.op, names.get(r.key_id) ?? r.key_id, r.spool, ago(r.claimed_at), outcome(r)]),
  ]);
  if (rows.length === Number(q.limit)) say(`(the newest ${q.limit}: --limit N for more)`);
}
