// `dw` exit codes (docs/SANDBOX.md). The operation's own exit code passes through when it ran and exited.
import type { Status } from './spoolClient';

export const EXIT = {
  ok: 0,
  usage: 64,
  badArgs: 65,
  noKey: 66,
  unavailable: 69,
  noPerm: 77,
  rejected: 80,
  denied: 81,
  expired: 82,
  cancelled: 83,
  uncertain: 84,
  waitTimeout: 85,
  failedNoCode: 86,
  conflict: 87,
} as const;

/** What each exit code means, for `dw --help` and the agent's guide (main/core/spool/agentGuide.ts). */
export const EXIT_MEANINGS: readonly { code: string; meaning: string }[] = [
  { code: `${EXIT.ok}`, meaning: 'the operation succeeded' },
  { code: '1-255', meaning: 'the operation failed with this exit code (its own; read its output)' },
  { code: `${EXIT.usage}`, meaning: 'usage error of dw itself' },
  { code: `${EXIT.badArgs}`, meaning: 'bad arguments: nothing was written (the message names the argument)' },
  { code: `${EXIT.noKey}`, meaning: 'no key file, or not a valid key file' },
  { code: `${EXIT.unavailable}`, meaning: 'the spool or the host is not available; for `dw doctor`: a check failed' },
  { code: `${EXIT.noPerm}`, meaning: "permission denied: this sandbox runs as another user than the spool's owner (the message says which uid to use)" },
  { code: `${EXIT.rejected}`, meaning: 'rejected by the host (the error code says why: `bad_args`, `scope_denied`, ...): fix the request, do not just retry' },
  { code: `${EXIT.denied}`, meaning: 'denied by the human (or the approval timed out): do not retry the same request without asking' },
  { code: `${EXIT.expired}`, meaning: 'expired before it started' },
  { code: `${EXIT.cancelled}`, meaning: 'cancelled' },
  { code: `${EXIT.uncertain}`, meaning: 'uncertain: the host stopped while it ran; a human will settle it. Do not run it again on your own' },
  { code: `${EXIT.waitTimeout}`, meaning: 'still pending after `--timeout` (how long `dw wait`, `dw run` or `dw plan` waits): it may still run; `dw wait ID` again (never resubmit with a new id)' },
  { code: `${EXIT.failedNoCode}`, meaning: 'failed without an exit code: could not start, killed by its timeout or a signal, or `not_applied` (the host checked that an interrupted run did not take effect: safe to retry with a new id)' },
  { code: `${EXIT.conflict}`, meaning: 'conflict: this id is already bound to another request; nothing ran. Use a new id' },
];

export function exitCodeOf(s: Status): number {
  switch (s.state) {
    case 'succeeded':
      return EXIT.ok;
    case 'failed':
      return 'exit_code' in s && s.exit_code !== null && s.exit_code !== 0 ? s.exit_code : EXIT.failedNoCode;
    case 'rejected':
      return EXIT.rejected; // an unsigned refusal too: never a success
    case 'denied':
      return EXIT.denied;
    case 'expired':
      return EXIT.expired;
    case 'cancelled':
      return EXIT.cancelled;
    case 'uncertain':
      return EXIT.uncertain;
    case 'conflict':
      return EXIT.conflict;
    default:
      return EXIT.waitTimeout;
  }
}
