// How the app shows a reconcile attempt (the operation's look-up of whether an interrupted run took
// effect), in the words of shared/protocol/reconcileText.ts. Pure: no DOM, no IPC.
import { verdictText } from '../../shared/protocol/reconcileText';
import type { ReconcileAttempt } from '../../shared/protocol/types';
import { visibleLines } from '../../shared/text/visible';

type Verdict = ReconcileAttempt['verdict'];
const badge = (v: Verdict, tone: 'good' | 'bad' | 'warn') => ({ label: verdictText(v).replace(/^./, (c) => c.toUpperCase()), tone });

/** A verdict's badge: "Took effect", "Did not take effect", "Could not tell". */
export const VERDICTS: Record<Verdict, { label: string; tone: 'good' | 'bad' | 'warn' }> = {
  applied: badge('applied', 'good'),
  not_applied: badge('not_applied', 'bad'),
  unknown: badge('unknown', 'warn'),
};

/** Lines of output kept in a list row; the request's page shows it all. */
export const EXCERPT_LINES = 4;
export const EXCERPT_CHARS = 400;

/**
 * The first lines of a look-up's output, as one block a human can trust: controls and bidi overrides
 * escaped (the output may echo what the sandbox asked for), cut at `lines` lines or `chars` characters.
 */
export function outputExcerpt(a: Pick<ReconcileAttempt, 'stdout' | 'stderr'>, lines = EXCERPT_LINES, chars = EXCERPT_CHARS): { text: string; cut: boolean } {
  const all = [a.stdout, a.stderr].map((s) => s.replace(/\n+$/, '')).filter((s) => s !== '').join('\n');
  let text = all.split('\n').slice(0, lines).join('\n');
  if (text.length > chars) text = text.slice(0, chars);
  return { text: visibleLines(text), cut: text.length < all.length };
}
