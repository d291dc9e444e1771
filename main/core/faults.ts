// Test-only fault injection: DUMBWAITER_FAULT=<step> makes the daemon SIGKILL itself the first time it
// reaches that step, so the crash tests can stop it exactly there. Unset in normal use: a no-op.
export const FAULT_STEPS = [
  'after_claim',
  'after_ledger_insert',
  'after_start_at_once',
  'after_mark_running',
  'after_spawn',
  'after_exit_before_result',
  'after_result',
  'during_approval_wait',
] as const;
export type FaultStep = (typeof FAULT_STEPS)[number];

const armed = process.env.DUMBWAITER_FAULT;

export function faultPoint(step: FaultStep): void {
  if (armed === step) process.kill(process.pid, 'SIGKILL');
}
