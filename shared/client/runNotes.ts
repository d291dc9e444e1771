// How a request ended, in the one wording dw, dw mcp and dw.py (which keeps a copy, held to this one by
// a test) give each outcome: one line for the end, each thing said once (the host's message is quoted
// only where it adds to what the line says), and what the agent can do about it. A host command in the
// host's message (settleHint) is cut off: the agent is told to ask the person who runs the host.
import { attemptEnd, verdictText, withoutSettleHint } from '../protocol/reconcileText';
import type { ReconcileAttempt, ResultDoc } from '../protocol/types';
import { PLAN_OP } from '../protocol/plan';
import { visible } from '../text/visible';
import { planBody } from './plans';

/** What the agent can do about a run nobody knows the effect of. */
export const SETTLE_ASK = 'ask the person who runs the host to settle it';

/** A settled request as the clients have it: a signed result, a conflict, or a refusal the host could not sign. */
export type Ended =
  | ResultDoc
  | { id: string; state: 'conflict'; message: string }
  | { id: string; state: 'rejected'; unsigned: true; error: { code: string; message: string }; revoked?: string | boolean };

/** What the reconcile check found, in its own words. */
function checkSaid(r: ReconcileAttempt): string {
  if (r.verdict === 'unknown' && r.error !== null) return `the host could not check whether its effect happened: ${r.error}`;
  const said = `the host's reconcile check says it ${verdictText(r.verdict)} (${attemptEnd(r)})`;
  return r.verdict === 'not_applied' ? `${said}: safe to retry with a new id` : said;
}

/** "<id> <state>: <why>", the host's message given once: "r-1 denied by cli:root: not now", not "denied: denied: denied by". */
function withReason(id: string, state: string, code: string, message: string): string {
  if (message.startsWith(`${state} `)) return `${id} ${message}`;
  return `${id} ${state}: ${code === state ? '' : `${code}: `}${message}`;
}

/** The line saying how a signed result ended; null for a plain success. */
function endLine(s: ResultDoc): string | null {
  const { id, state, error: e } = s;
  if (s.resolved_by === 'human') return `${id} ${state}: settled by a human${s.note ? `: ${s.note}` : ''}`;
  if (s.resolved_by === 'reconcile') return `${id} ${state}: ${s.reconcile ? checkSaid(s.reconcile) : "settled by the host's reconcile check"}`;
  switch (state) {
    case 'succeeded':
      return null;
    case 'failed':
      // Always said: the operation's own 64-87 would otherwise read as one of dw's codes.
      if (s.exit_code !== null) return `${id} failed: the operation exited with ${s.exit_code}${e ? ` (${e.code}: ${e.message})` : ''}`;
      if (e) return withReason(id, state, e.code, e.message);
      return `${id} failed without an exit code${s.signal ? ` (signal ${s.signal})` : ''}`;
    case 'cancelled':
      return `${id} cancelled${s.cancelled_by ? ` by ${s.cancelled_by}` : ''}`;
    case 'uncertain': {
      const why = s.reconcile ? checkSaid(s.reconcile) : e ? withoutSettleHint(e.message) : 'the host lost sight of its run, so it may or may not have taken effect';
      return `${id} uncertain: ${why}; ${SETTLE_ASK}`;
    }
    default:
      return e ? withReason(id, state, e.code, e.message) : `${id} ${state}`;
  }
}

/** Every line about how a settled request ended, once each; none for a plain success. */
export function outcomeLines(s: Ended): string[] {
  const lines: string[] = [];
  if (s.state === 'conflict') lines.push(`${s.id} conflict: ${s.message}`);
  else if ('unsigned' in s) {
    const what = s.revoked
      ? 'the host says this key was revoked (dw inbox): ask the person who runs the host for a new key'
      : 'the host signs every answer to a request it could authenticate: check the key with dw doctor';
    lines.push(`${s.id} rejected (not signed by the host, so it may not be the host's): ${s.error.code}: ${s.error.message}; ${what}`);
  } else {
    const end = endLine(s);
    if (end !== null) lines.push(end);
    // A human's verdict after a check that could not tell: the check is a fact of its own.
    if (s.reconcile && s.resolved_by === 'human') lines.push(`${s.id}: ${checkSaid(s.reconcile)}`);
  }
  return lines.map(visible);
}

/** What a request still going says beyond its state: a run that outlived a restart of the host. */
export function pendingNotes(s: ResultDoc): string[] {
  if (s.orphaned && s.state === 'running') return [visible(`${s.id} is still running after the host restarted: the host watches it until it ends (dw cancel ${s.id} ends it)`)];
  if (s.reconcile_pending && s.state === 'uncertain') return [visible(`${s.id} was interrupted by a stop of the host: its reconcile check of whether it took effect is still to come`)];
  return [];
}

/** `dw status ID` without --json: how it ended (or its state while it goes on), a plan's steps, and
 *  what a run still going says. `settled`: waiting changes nothing by itself (isSettled). */
export function statusLines(s: Ended | ResultDoc | { id: string; state: 'unclaimed' | 'unknown' }, settled: boolean): string[] {
  const ended = settled ? outcomeLines(s as Ended) : [];
  const lines = ended.length > 0 ? ended : [`${s.id} ${s.state}`];
  if ('v' in s) lines.push(...(s.op === PLAN_OP ? planBody(s) : []), ...pendingNotes(s));
  return lines;
}
