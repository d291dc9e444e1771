// What the agent is told, once, when its request comes to wait for a human: that a person must decide,
// why when it claimed a plan it is not a step of, and when the host denies it if nobody decides. dw, dw mcp
// and dw.py (which keeps a copy, held to this one by a test) say it in the same words.
import { PLAN_OP } from '../protocol/plan';
import type { ResultDoc } from '../protocol/types';
import { visible } from '../text/visible';

/** "2026-12-04 23:50:00 UTC": a time the same in every sandbox's clock zone, whatever offset it was
 *  written with (a time read raw, +01:00, passes for an hour off); null when `iso` is no time. */
export function utcText(iso: unknown): string | null {
  const at = typeof iso === 'string' ? Date.parse(iso) : NaN;
  return Number.isNaN(at) ? null : `${new Date(at).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** "2026-12-04 23:50:00 UTC (in 60 min)": a time as utcText gives it, and how far off it is; null when
 *  `iso` is no time. */
export function deadlineText(iso: unknown, nowMs: number): string | null {
  const utc = utcText(iso);
  if (utc === null) return null;
  const at = Date.parse(iso as string);
  const minutes = Math.floor((at - nowMs) / 60_000 + 0.5);
  return `${utc} (${minutes < 1 ? 'in less than a minute' : `in ${minutes} min`})`;
}

/** The line about a request (or plan) that waits for a human's decision, from its signed result. */
export function waitingText(s: ResultDoc, nowMs = Date.now()): string {
  const a = s.approval;
  const n = a?.steps?.length;
  const what =
    s.op === PLAN_OP
      ? `plan ${s.id} waits for a human to approve ${n === undefined ? 'it' : `its ${n} step${n === 1 ? '' : 's'}`}`
      : `request ${s.id} waits for a human's decision${a?.plan_claim ? ` because it is not a step of plan ${a.plan_claim.plan_id}: ${a.plan_claim.reason}` : ''}`;
  const deadline = deadlineText(a?.timeout_at, nowMs);
  return visible(deadline ? `${what}; unless decided, it is denied automatically at ${deadline}` : what);
}
