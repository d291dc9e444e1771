// How a request ended, in one wording per outcome: each thing said once, never a host command the agent
// cannot run, and what it can do; dw.py says the same, line for line.
import { describe, expect, it } from 'vitest';
import { outcomeLines, pendingNotes, statusLines, type Ended } from '../../../../shared/client/runNotes';
import { settleHint, withoutSettleHint } from '../../../../shared/protocol/reconcileText';
import { dwPy, resultDoc } from '../../../helpers/clientCases';

const attempt = { at: '', argv: ['/usr/bin/gh', 'release', 'view', 'v1'], stdout: '', stderr: '', by: 'daemon (restart)', signal: null };
/** The host's words on a run a crash interrupted (main/core/daemon/runner.ts), its settle hint included. */
const interrupted = (hint: boolean) =>
  `the host stopped while it ran (process group 4242); it may or may not have taken effect and will not be re-run. ${settleHint('r-1', hint)}`;

/** Every outcome, and the lines both clients say on stderr about it (after "dw: "). */
const OUTCOMES: [string, Ended, string[]][] = [
  ['succeeded', resultDoc({ state: 'succeeded', exit_code: 0 }), []],
  ['failed with an exit code', resultDoc({ state: 'failed', exit_code: 3 }), ['r-1 failed: the operation exited with 3']],
  ['failed to start', resultDoc({ state: 'failed', error: { code: 'spawn_failed', message: 'cannot run /nope: ENOENT' } }), ['r-1 failed: spawn_failed: cannot run /nope: ENOENT']],
  ['killed without an exit code', resultDoc({ state: 'failed', signal: 'SIGKILL' }), ['r-1 failed without an exit code (signal SIGKILL)']],
  ['denied with a reason', resultDoc({ state: 'denied', error: { code: 'denied', message: 'denied by cli:root: not on a Friday' } }), ['r-1 denied by cli:root: not on a Friday']],
  [
    'denied when nobody decided',
    resultDoc({ state: 'denied', error: { code: 'approval_timeout', message: 'no decision within the approval timeout of 60 s' } }),
    ['r-1 denied: approval_timeout: no decision within the approval timeout of 60 s'],
  ],
  ['expired', resultDoc({ state: 'expired', error: { code: 'expired', message: 'the request expired at 2026-12-04T10:00:00.000Z, before it could start' } }), ['r-1 expired: the request expired at 2026-12-04T10:00:00.000Z, before it could start']],
  ['rejected with a code', resultDoc({ state: 'rejected', error: { code: 'bad_args', message: 'workers: must be at most 8' } }), ['r-1 rejected: bad_args: workers: must be at most 8']],
  ['cancelled', resultDoc({ state: 'cancelled', cancelled_by: 'sandbox' }), ['r-1 cancelled by sandbox']],
  [
    'uncertain, its operation without a reconcile command',
    resultDoc({ state: 'uncertain', error: { code: 'interrupted', message: interrupted(false) } }),
    ['r-1 uncertain: the host stopped while it ran (process group 4242); it may or may not have taken effect and will not be re-run; ask the person who runs the host to settle it'],
  ],
  [
    'uncertain, checked by nobody yet',
    resultDoc({ state: 'uncertain', error: { code: 'interrupted', message: interrupted(true) } }),
    ['r-1 uncertain: the host stopped while it ran (process group 4242); it may or may not have taken effect and will not be re-run; ask the person who runs the host to settle it'],
  ],
  [
    'uncertain, the reconcile check could not tell',
    resultDoc({
      state: 'uncertain',
      error: { code: 'interrupted', message: `the run was interrupted: it may or may not have taken effect and will not be re-run; its reconcile command could not tell (exit code 3). ${settleHint('r-1', true)}` },
      reconcile: { ...attempt, exit_code: 3, error: null, verdict: 'unknown' },
    }),
    ["r-1 uncertain: the host's reconcile check says it could not tell (exit code 3); ask the person who runs the host to settle it"],
  ],
  [
    'uncertain, the reconcile check could not run',
    resultDoc({ state: 'uncertain', error: { code: 'interrupted', message: interrupted(true) }, reconcile: { ...attempt, exit_code: null, error: 'timeout after 30 s', verdict: 'unknown' } }),
    ['r-1 uncertain: the host could not check whether its effect happened: timeout after 30 s; ask the person who runs the host to settle it'],
  ],
  [
    'reconciled: applied',
    resultDoc({ state: 'succeeded', resolved_by: 'reconcile', reconcile: { ...attempt, exit_code: 0, error: null, verdict: 'applied' } }),
    ["r-1 succeeded: the host's reconcile check says it took effect (exit code 0)"],
  ],
  [
    'reconciled: not applied (said once, not as the host message and again as a note)',
    resultDoc({
      state: 'failed',
      resolved_by: 'reconcile',
      error: { code: 'not_applied', message: 'its reconcile command says it did not take effect (exit code 1): it is safe to retry with a new request id' },
      reconcile: { ...attempt, exit_code: 1, error: null, verdict: 'not_applied' },
    }),
    ["r-1 failed: the host's reconcile check says it did not take effect (exit code 1): safe to retry with a new id"],
  ],
  ['settled by reconcile, the attempt not given', resultDoc({ state: 'succeeded', resolved_by: 'reconcile' }), ["r-1 succeeded: settled by the host's reconcile check"]],
  ['settled by a human', resultDoc({ state: 'failed', resolved_by: 'human', note: 'the release is not there' }), ['r-1 failed: settled by a human: the release is not there']],
  [
    'settled by a human after a check that could not tell',
    resultDoc({ state: 'succeeded', resolved_by: 'human', note: 'checked by hand', reconcile: { ...attempt, exit_code: 3, error: null, verdict: 'unknown' } }),
    ['r-1 succeeded: settled by a human: checked by hand', "r-1: the host's reconcile check says it could not tell (exit code 3)"],
  ],
  [
    'a conflict',
    { id: 'r-1', state: 'conflict', message: 'request id r-1 is already bound to another request; nothing was run: use a new id' },
    ['r-1 conflict: request id r-1 is already bound to another request; nothing was run: use a new id'],
  ],
  [
    'a refusal the host could not sign',
    { id: 'r-1', state: 'rejected', unsigned: true, error: { code: 'unknown_key', message: 'no key k-1' } },
    ["r-1 rejected (not signed by the host, so it may not be the host's): unknown_key: no key k-1; the host signs every answer to a request it could authenticate: check the key with dw doctor"],
  ],
  [
    'a refusal of a revoked key',
    { id: 'r-1', state: 'rejected', unsigned: true, error: { code: 'revoked_key', message: 'key k-1 is revoked' }, revoked: true },
    ["r-1 rejected (not signed by the host, so it may not be the host's): revoked_key: key k-1 is revoked; the host says this key was revoked (dw inbox): ask the person who runs the host for a new key"],
  ],
];

describe('how a request ended, one wording per outcome', () => {
  it.each(OUTCOMES)('%s', (_what, s, lines) => {
    expect(outcomeLines(s)).toEqual(lines);
  });

  it('never tells the agent to run a host command, nor says a word of the outcome twice', () => {
    for (const [, s] of OUTCOMES) {
      for (const line of outcomeLines(s)) {
        expect(line).not.toContain('dumbwaiter resolve');
        for (const word of ['denied', 'not_applied', 'did not take effect', 'may or may not']) expect(line.split(word).length).toBeLessThanOrEqual(2);
      }
    }
  });

  it("shows a human's note that would act on a terminal escaped", () => {
    expect(outcomeLines(resultDoc({ state: 'succeeded', resolved_by: 'human', note: 'ok\u001b[2A' }))).toEqual(['r-1 succeeded: settled by a human: ok\\x1b[2A']);
  });
});

describe('withoutSettleHint', () => {
  it("cuts the host command off the host's message, whichever hint it gave, and leaves any other message as it is", () => {
    expect(withoutSettleHint(`terminated because the host was stopping; it may or may not have taken effect. ${settleHint('r-1', true)}`)).toBe(
      'terminated because the host was stopping; it may or may not have taken effect',
    );
    expect(withoutSettleHint(`operation "plain" declares no reconcile command: ${settleHint('p1', false)}`)).toBe('operation "plain" declares no reconcile command');
    expect(withoutSettleHint('denied by cli:root: see dumbwaiter resolve')).toBe('denied by cli:root: see dumbwaiter resolve');
  });
});

/** A request still going, and what dw status says of each state. */
const STATUSES: [string, Parameters<typeof statusLines>[0], boolean, string[]][] = [
  ['unclaimed', { id: 'r-1', state: 'unclaimed' }, false, ['r-1 unclaimed']],
  ['unknown', { id: 'r-1', state: 'unknown' }, false, ['r-1 unknown']],
  ['running', resultDoc({ state: 'running' }), false, ['r-1 running']],
  ['an orphaned run', resultDoc({ state: 'running', orphaned: true }), false, ['r-1 running', 'r-1 is still running after the host restarted: the host watches it until it ends (dw cancel r-1 ends it)']],
  ['an uncertain run whose reconcile check is still to come', resultDoc({ state: 'uncertain', reconcile_pending: true, error: { code: 'interrupted', message: 'the host stopped' } }), false, ['r-1 uncertain', 'r-1 was interrupted by a stop of the host: its reconcile check of whether it took effect is still to come']],
  ['succeeded', resultDoc({ state: 'succeeded', exit_code: 0 }), true, ['r-1 succeeded']],
  ...OUTCOMES.filter(([, , lines]) => lines.length > 0).map(([what, s, lines]): [string, Ended, boolean, string[]] => [what, s, true, lines]),
];

describe('dw status says how it ended in the same words, or its state while it goes on', () => {
  it.each(STATUSES)('%s', (_what, s, settled, lines) => {
    expect(statusLines(s, settled)).toEqual(lines);
  });

  it('an orphan is noted only while it runs', () => {
    expect(pendingNotes(resultDoc({ state: 'cancelled', orphaned: true }))).toEqual([]);
  });
});

describe('dw.py says the same', () => {
  it('of every outcome', () => {
    expect(dwPy(OUTCOMES.map(([, s]) => ['outcome', s])).map((r) => r.ok)).toEqual(OUTCOMES.map(([, s]) => outcomeLines(s)));
  });

  it('in dw status', () => {
    expect(dwPy(STATUSES.map(([, s]) => ['status_lines', s])).map((r) => r.ok)).toEqual(STATUSES.map(([, s, settled]) => statusLines(s, settled)));
  });

  it('of a host message with a settle hint, and of an orphan', () => {
    const message = `the run was interrupted. ${settleHint('r-1', true)}`;
    expect(dwPy([['without_hint', message], ['pending', resultDoc({ state: 'running', orphaned: true })]]).map((r) => r.ok)).toEqual([
      withoutSettleHint(message),
      pendingNotes(resultDoc({ state: 'running', orphaned: true })),
    ]);
  });
});
