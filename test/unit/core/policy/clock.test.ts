// The clock rules of a request, to the millisecond: created_at at most 5 minutes ahead of the host
// (rejected, clock_skew), not older than the host's maximum age (expired), not past its own expires_at
// (expired); the first rule broken is the one reported.
import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_MS, clockProblem } from '../../../../main/core/policy/clock';

const now = Date.parse('2026-06-01T12:00:00.000Z');
const MAX_AGE_MS = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('clockProblem', () => {
  it('lets a request made now, with no expiry or one ahead, start', () => {
    expect(clockProblem(iso(now), null, now, MAX_AGE_MS)).toBeNull();
    expect(clockProblem(iso(now), undefined, now, MAX_AGE_MS)).toBeNull();
    expect(clockProblem(iso(now), iso(now + 1), now, MAX_AGE_MS)).toBeNull();
  });

  it('allows the sandbox clock up to 5 minutes ahead, and rejects it a millisecond further', () => {
    expect(CLOCK_SKEW_MS).toBe(5 * 60_000);
    expect(clockProblem(iso(now + CLOCK_SKEW_MS), null, now, MAX_AGE_MS)).toBeNull();
    expect(clockProblem(iso(now + CLOCK_SKEW_MS + 1), null, now, MAX_AGE_MS)).toEqual({
      state: 'rejected',
      code: 'clock_skew',
      message: `created_at ${iso(now + CLOCK_SKEW_MS + 1)} is more than 5 minutes in the future: check the sandbox's clock`,
    });
  });

  it("expires a request older than the host's maximum age, not one exactly that old", () => {
    expect(clockProblem(iso(now - MAX_AGE_MS), null, now, MAX_AGE_MS)).toBeNull();
    expect(clockProblem(iso(now - MAX_AGE_MS - 1), null, now, MAX_AGE_MS)).toEqual({
      state: 'expired',
      code: 'expired',
      message: `created_at ${iso(now - MAX_AGE_MS - 1)} is older than this host's maximum request age (3600 s)`,
    });
  });

  it('expires a request past its own expires_at, not one that expires this very millisecond', () => {
    expect(clockProblem(iso(now), iso(now), now, MAX_AGE_MS)).toBeNull();
    expect(clockProblem(iso(now - 2), iso(now - 1), now, MAX_AGE_MS)).toEqual({ state: 'expired', code: 'expired', message: `the request expired at ${iso(now - 1)}` });
  });

  it('reports the first rule broken: skew before expiry, age before expires_at', () => {
    expect(clockProblem(iso(now + CLOCK_SKEW_MS + 1), iso(now - 1), now, MAX_AGE_MS)?.code).toBe('clock_skew');
    expect(clockProblem(iso(now - MAX_AGE_MS - 1), iso(now - 1), now, MAX_AGE_MS)?.message).toContain('maximum request age');
  });
});
