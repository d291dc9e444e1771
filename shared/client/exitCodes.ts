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
