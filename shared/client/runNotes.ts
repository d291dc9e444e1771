// What a result says about a run the host lost sight of, one line each, for dw and dw mcp: a run that
// outlived a restart of the host (orphaned), the host's reconcile check of an interrupted run (did its
// effect happen?), and who settled it.
import { attemptEnd, verdictText } from '../protocol/reconcileText';
import type { ReconcileAttempt, ResultDoc } from '../protocol/types';
import { visible } from '../text/visible';

function reconcileLine(id: string, r: ReconcileAttempt): string {
  if (r.verdict === 'unknown' && r.error !== null) return `${id}: the host could not check whether its effect happened: ${r.error}`;
  const said = `${id}: the host's reconcile check says it ${verdictText(r.verdict)} (${attemptEnd(r)})`;
  return r.verdict === 'not_applied' ? `${said}: safe to retry with a new id` : said;
}

/** The lines, in the order they happened; none for a run the host saw through. */
export function runNotes(s: ResultDoc): string[] {
  const lines: string[] = [];
  if (s.orphaned && s.state === 'running') {
    lines.push(`${s.id} is still running after the host restarted: the host watches it until it ends (dw cancel ${s.id} ends it)`);
  }
  if (s.reconcile) lines.push(reconcileLine(s.id, s.reconcile));
  else if (s.resolved_by === 'reconcile') lines.push(`${s.id} was settled by the host's reconcile check`);
  if (s.resolved_by === 'human') lines.push(`${s.id} was settled by a human${s.note ? `: ${s.note}` : ''}`);
  return lines.map(visible);
}
