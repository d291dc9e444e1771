// How the app tells a plan's progress, in Node.
import { describe, expect, it } from 'vitest';
import { stepsUsed } from '../../../../renderer/lib/plans';
import type { PlanStep } from '../../../../shared/protocol/types';

describe('stepsUsed', () => {
  const step = (request_id: string | null): PlanStep => ({ op: 'x', args: {}, argv: ['/bin/true'], cwd: '/tmp', scope: 'read', request_id, state: request_id ? 'succeeded' : null });
  it('counts the steps a request has used', () => {
    expect(stepsUsed([])).toBe(0);
    expect(stepsUsed([step(null), step('r1'), step(null), step('r2')])).toBe(2);
  });
});
