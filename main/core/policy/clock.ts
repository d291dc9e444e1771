// The clock rules of a request (protocol-v1 section 3): not from the future beyond a skew, not older than
// the host's maximum age, not past its own expiry. Checked at intake and again before a run starts.
import type { ErrorCode } from '../../../shared/protocol/types';

export const CLOCK_SKEW_MS = 5 * 60 * 1000;

/** Why a request may not start now, by the clock; null when it may. */
export function clockProblem(
  createdAt: string,
  expiresAt: string | null | undefined,
  nowMs: number,
  maxAgeMs: number,
): { state: 'rejected' | 'expired'; code: ErrorCode; message: string } | null {
  const created = Date.parse(createdAt);
  if (created > nowMs + CLOCK_SKEW_MS) {
    return { state: 'rejected', code: 'clock_skew', message: `created_at ${createdAt} is more than 5 minutes in the future: check the sandbox's clock` };
  }
  if (created < nowMs - maxAgeMs) {
    return { state: 'expired', code: 'expired', message: `created_at ${createdAt} is older than this host's maximum request age (${Math.round(maxAgeMs / 1000)} s)` };
  }
  if (expiresAt && Date.parse(expiresAt) < nowMs) {
    return { state: 'expired', code: 'expired', message: `the request expired at ${expiresAt}` };
  }
  return null;
}
