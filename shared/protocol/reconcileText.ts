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

/** What the host's message on an interrupted run tells the human who runs it: the command that settles
 *  it. The message goes into the signed result as it is (the human's views show it); the sandbox's
 *  clients cut this sentence off (withoutSettleHint), since the agent cannot run a host command. */
export function settleHint(id: string, reconcilable: boolean): string {
  return reconcilable
    ? `Its operation's reconcile command can tell: dumbwaiter resolve ${id} --check; or settle it with: dumbwaiter resolve ${id} --succeeded|--failed`
    : `Settle it with: dumbwaiter resolve ${id} --succeeded|--failed`;
}

/** A host's message without settleHint's sentence, and without the full stop before it (hosts before
 *  this one wrote the same sentence). dw.py's without_settle_hint is held to this by a test. */
export function withoutSettleHint(message: string): string {
  return message.replace(/[.:]?\s*(?:Its operation's reconcile command can tell|Settle it with): dumbwaiter resolve \S+ .*$/s, '');
}
