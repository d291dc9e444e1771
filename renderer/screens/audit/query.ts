// The audit screen's filters and the search they make (pure: no React, no IPC).
import type { RequestState } from '../../../shared/protocol/types';
import { AUDIT_KINDS, type AuditKind } from '../../../shared/audit/kinds';

export const RANGES = [
  { value: 'any', label: 'Any time', ms: 0 },
  { value: '1h', label: 'Last hour', ms: 3600_000 },
  { value: '24h', label: 'Last 24 hours', ms: 86400_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 86400_000 },
  { value: '30d', label: 'Last 30 days', ms: 30 * 86400_000 },
  { value: 'custom', label: 'Custom…', ms: 0 },
] as const;
export type RangePreset = (typeof RANGES)[number]['value'];

export interface Filters {
  text: string;
  state: RequestState | '';
  op: string;
  keyId: string;
  kind: string;
  range: RangePreset;
  /** `datetime-local` values (local time), used when range is 'custom'. */
  from: string;
  to: string;
}

export const NO_FILTERS: Filters = { text: '', state: '', op: '', keyId: '', kind: '', range: 'any', from: '', to: '' };

/** What api.audit.search takes, without the paging fields. */
export interface AuditQuery {
  text?: string;
  kind?: string;
  op?: string;
  keyId?: string;
  state?: RequestState;
  since?: string;
  until?: string;
  spool?: string;
}

export function isFiltered(f: Filters): boolean {
  return f.text.trim() !== '' || f.state !== '' || f.op !== '' || f.keyId !== '' || f.kind !== '' || f.range !== 'any';
}

/** A `datetime-local` value as an ISO instant, or null when empty; undefined when it is not a time. */
function localToIso(v: string): string | null | undefined {
  if (!v) return null;
  const t = new Date(v).getTime();
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

/** The problem with the custom time range, if any, and the input it is shown under. */
export function rangeError(f: Filters): { field: 'from' | 'to'; message: string } | null {
  if (f.range !== 'custom') return null;
  const since = localToIso(f.from);
  const until = localToIso(f.to);
  if (since === undefined) return { field: 'from', message: '"From" is not a valid date and time.' };
  if (until === undefined) return { field: 'to', message: '"To" is not a valid date and time.' };
  if (since && until && since >= until) return { field: 'to', message: '"From" must be before "To".' };
  return null;
}

/** The search the filters make (of one spool's entries, when `spool`), with a relative range counted
 *  back from `now`. Null while the range is invalid. */
export function toQuery(f: Filters, now = Date.now(), spool: string | null = null): AuditQuery | null {
  if (rangeError(f)) return null;
  const q: AuditQuery = spool ? { spool } : {};
  const text = f.text.trim().slice(0, 500);
  if (text) q.text = text;
  if (f.state) q.state = f.state;
  if (f.op) q.op = f.op;
  if (f.keyId) q.keyId = f.keyId;
  if (f.kind) q.kind = f.kind;
  if (f.range === 'custom') {
    const since = localToIso(f.from);
    const until = localToIso(f.to);
    if (since) q.since = since;
    if (until) q.until = until;
  } else if (f.range !== 'any') {
    const ms = RANGES.find((r) => r.value === f.range)?.ms ?? 0;
    q.since = new Date(now - ms).toISOString();
  }
  return q;
}

/** How far a relative range's start may fall behind the clock before the search is brought up to date. */
const STALE_MS = 60_000;

/** The search `current` should become now: `fresh` (the filters' search made now) when a relative
 *  range's start has moved on by more than a minute, else null (still current). */
export function moveOn(current: AuditQuery, fresh: AuditQuery | null): AuditQuery | null {
  if (!fresh?.since || !current.since || fresh.until || current.until) return null;
  return Date.parse(fresh.since) - Date.parse(current.since) > STALE_MS ? fresh : null;
}

/** The entries (newest first) that are still inside a query's time range. */
export function inRange<E extends { at: string }>(entries: readonly E[], q: AuditQuery): E[] {
  const since = q.since ? Date.parse(q.since) : -Infinity;
  const until = q.until ? Date.parse(q.until) : Infinity;
  return entries.filter((e) => {
    const t = Date.parse(e.at);
    return t >= since && t < until;
  });
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** An ISO time as a `datetime-local` value in local time (for filling the custom range from a preset). */
export function isoToLocalInput(iso: string): string {
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}T${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/** Every kind of entry the host writes, for the kind filter (with what appears in results added). */
export const KNOWN_KINDS: readonly string[] = AUDIT_KINDS.map((k) => k.kind);

/** What an entry of a kind records, for the kind filter's options (null: a kind this app does not know). */
export function kindAbout(kind: string): string | null {
  return AUDIT_KINDS.find((k) => k.kind === kind)?.about ?? null;
}

/** "approval_requested" -> "Approval requested". */
export function kindLabel(kind: string): string {
  const s = kind.replaceAll('_', ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

type Tone = 'bad' | 'warn' | 'good' | 'neutral';

/** Every kind's colour: a kind added to AUDIT_KINDS needs one here. */
const TONES: Record<AuditKind, Tone> = {
  allowlist_invalid: 'bad',
  allowlist_loaded: 'neutral',
  allowlist_saved: 'neutral',
  approval_requested: 'warn',
  approval_timeout: 'bad',
  approved: 'good',
  cancel_requested: 'warn',
  cancelled: 'neutral',
  ceiling_hit: 'bad',
  claim_recovered: 'warn',
  claimed: 'neutral',
  conflict: 'bad',
  daemon_started: 'neutral',
  daemon_stopped: 'neutral',
  denied: 'bad',
  disk_full: 'bad',
  disk_ok: 'good',
  dry_run: 'neutral',
  expired: 'warn',
  finished: 'neutral', // the table colours it by the run's state
  grant_created: 'good',
  grant_revoked: 'warn',
  internal_error: 'bad',
  key_created: 'neutral',
  key_revoked: 'warn',
  key_rotated: 'warn',
  keys_sealed: 'neutral',
  log_quarantined: 'bad',
  notice_sent: 'neutral',
  orphan_ended: 'neutral',
  orphaned: 'warn',
  paused: 'warn',
  plan_withdrawn: 'warn',
  plan_step_unmatched: 'warn',
  plan_step_used: 'neutral',
  reaped: 'warn',
  reconcile: 'neutral',
  reconciled: 'good',
  rejected: 'bad',
  replay: 'bad',
  requeued: 'neutral',
  resolved: 'good',
  result_repaired: 'bad',
  resumed: 'good',
  settings_changed: 'neutral',
  settings_invalid: 'bad',
  spool_ok: 'neutral',
  spool_replaced: 'warn',
  spool_added: 'neutral',
  spool_removed: 'neutral',
  spool_unsafe: 'bad',
  started: 'neutral',
  uncertain: 'bad',
};

/** A kind's colour; one this app does not know (an older or newer host's) is neutral. */
export function kindTone(kind: string): Tone {
  return Object.hasOwn(TONES, kind) ? TONES[kind as AuditKind] : 'neutral';
}
