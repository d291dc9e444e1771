// How the app words a reconcile attempt (the operation's look-up of whether an interrupted run took
// effect) and a plan's progress. Pure: no DOM, no IPC.
import type { PlanStep, ReconcileAttempt } from '../../shared/protocol/types';
import { visibleLines } from '../../shared/text/visible';

export const VERDICTS: Record<ReconcileAttempt['verdict'], { label: string; tone: 'good' | 'bad' | 'warn' }> = {
  applied: { label: 'Took effect', tone: 'good' },
  not_applied: { label: 'Did not take effect', tone: 'bad' },
  unknown: { label: 'Could not tell', tone: 'warn' },
};

/** How the look-up ended: "exit 0", "killed by SIGTERM", or why it gave no verdict. */
export function attemptEnd(a: Pick<ReconcileAttempt, 'exit_code' | 'signal' | 'error'>): string {
  if (a.error) return a.error;
  if (a.exit_code !== null) return `exit ${a.exit_code}`;
  if (a.signal) return `killed by ${a.signal}`;
  return 'no exit code';
}

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

/** How far a plan has got: how many of its steps a request has used. */
export function stepsUsed(steps: PlanStep[]): number {
  return steps.filter((s) => s.request_id !== null).length;
}
