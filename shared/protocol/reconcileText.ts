// A reconcile attempt in words, the same wherever it is told (the CLI, dw and dw mcp, the app): how the
// look-up ended, and what its verdict says. Each caller puts them in its own sentence.
import type { ReconcileAttempt } from './types';

/** How the look-up ended: "exit code 0", "signal SIGTERM", "no exit code", or why it gave no verdict (its error). */
export function attemptEnd(a: Pick<ReconcileAttempt, 'exit_code' | 'signal' | 'error'>): string {
  if (a.error) return a.error;
  if (a.exit_code !== null) return `exit code ${a.exit_code}`;
  return a.signal ? `signal ${a.signal}` : 'no exit code';
}

const VERDICT_TEXT: Record<ReconcileAttempt['verdict'], string> = {
  applied: 'took effect',
  not_applied: 'did not take effect',
  unknown: 'could not tell',
};

/** What the look-up found of the interrupted run: "took effect", "did not take effect", "could not tell". */
export function verdictText(v: ReconcileAttempt['verdict']): string {
  return VERDICT_TEXT[v];
}
