// The line a client says once when its request comes to wait for a human: why, and when the host denies
// it if nobody decides (in UTC, and how far off); dw.py says the same.
import { describe, expect, it } from 'vitest';
import { waitingText } from '../../../../shared/client/approvalWait';
import type { ApprovalInfo, ResultDoc } from '../../../../shared/protocol/types';
import { dwPy, resultDoc } from '../../../helpers/clientCases';

const now = Date.parse('2026-12-04T23:00:00.000Z');
const card: ApprovalInfo = {
  operation: 'deploy',
  argv: ['/usr/bin/deploy', 'production'],
  cwd: '/work',
  key_id: 'k_1',
  key_name: 'agent',
  intent: null,
  requested_at: '2026-12-04T23:00:00.000Z',
  timeout_at: '2026-12-04T23:30:00.000Z',
  ceiling: null,
};
const waiting = (approval: Partial<ApprovalInfo> | undefined, over: Partial<ResultDoc> = {}) =>
  resultDoc({ state: 'awaiting_approval', ...(approval ? { approval: { ...card, ...approval } } : {}), ...over });
const deniedAt = 'unless decided, it is denied automatically at';
const reason = 'no step of plan p-1 is deploy with these arguments: the closest, step 1, differs in target (step "staging", request "production")';

const CASES: [string, ResultDoc, string][] = [
  ['a request that asks a human', waiting({}), `request r-1 waits for a human's decision; ${deniedAt} 2026-12-04 23:30:00 UTC (in 30 min)`],
  [
    'a request that claims a plan it is not a step of',
    waiting({ plan_claim: { plan_id: 'p-1', reason } }),
    `request r-1 waits for a human's decision because it is not a step of plan p-1: ${reason}; ${deniedAt} 2026-12-04 23:30:00 UTC (in 30 min)`,
  ],
  ['a deadline given in another zone, shown in UTC', waiting({ timeout_at: '2026-12-05T01:15:29.900+02:00' }), `request r-1 waits for a human's decision; ${deniedAt} 2026-12-04 23:15:29 UTC (in 15 min)`],
  ['a deadline under a minute off', waiting({ timeout_at: '2026-12-04T23:00:20.000Z' }), `request r-1 waits for a human's decision; ${deniedAt} 2026-12-04 23:00:20 UTC (in less than a minute)`],
  ['a deadline already past', waiting({ timeout_at: '2026-12-04T22:59:00.000Z' }), `request r-1 waits for a human's decision; ${deniedAt} 2026-12-04 22:59:00 UTC (in less than a minute)`],
  ['a plan, with its steps', waiting({ operation: 'dumbwaiter.plan', steps: [] }, { op: 'dumbwaiter.plan' }), `plan r-1 waits for a human to approve its 0 steps; ${deniedAt} 2026-12-04 23:30:00 UTC (in 30 min)`],
  ['no deadline that is a time', waiting({ timeout_at: 'soon' }), "request r-1 waits for a human's decision"],
  ['no approval in the result', waiting(undefined), "request r-1 waits for a human's decision"],
];

describe('what a client says when its request comes to wait for a human', () => {
  it.each(CASES)('%s', (_what, s, line) => {
    expect(waitingText(s, now)).toBe(line);
  });

  it('shows a reason that would act on a terminal escaped', () => {
    expect(waitingText(waiting({ plan_claim: { plan_id: 'p-1', reason: 'x\u001b[2A\u202e' } }), now)).toContain('plan p-1: x\\x1b[2A\\u202e;');
  });
});

describe('dw.py says the same', () => {
  it('of every request above', () => {
    expect(dwPy(CASES.map(([, s]) => ['waiting', s, now])).map((r) => r.ok)).toEqual(CASES.map(([, s]) => waitingText(s, now)));
  });
});
