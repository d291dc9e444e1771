// What a result says about a run the host lost sight of (orphaned, its reconcile check, who settled
// it), one line each; dw.py says the same.
import { describe, expect, it } from 'vitest';
import { runNotes } from '../../../../shared/client/runNotes';
import type { ResultDoc } from '../../../../shared/protocol/types';
import { dwPy, resultDoc } from '../../../helpers/clientCases';

const attempt = { at: '', argv: ['/usr/bin/gh', 'release', 'view', 'v1'], stdout: '', stderr: '', by: 'daemon (restart)', signal: null };

/** Results of runs the host lost sight of, and the lines each client says about them. */
const NOTES: [string, ResultDoc, string[]][] = [
  ['an orphaned run', resultDoc({ state: 'running', orphaned: true }), ['r-1 is still running after the host restarted: the host watches it until it ends (dw cancel r-1 ends it)']],
  ['an orphan, once it ended (said only while it runs)', resultDoc({ state: 'cancelled', orphaned: true }), []],
  ['reconciled: applied', resultDoc({ state: 'succeeded', resolved_by: 'reconcile', reconcile: { ...attempt, exit_code: 0, error: null, verdict: 'applied' } }), ["r-1: the host's reconcile check says it took effect (exit code 0)"]],
  [
    'reconciled: not applied',
    resultDoc({ state: 'failed', resolved_by: 'reconcile', reconcile: { ...attempt, exit_code: 1, error: null, verdict: 'not_applied' } }),
    ["r-1: the host's reconcile check says it did not take effect (exit code 1): safe to retry with a new id"],
  ],
  ['a check that could not tell', resultDoc({ state: 'uncertain', reconcile: { ...attempt, exit_code: 3, error: null, verdict: 'unknown' } }), ["r-1: the host's reconcile check says it could not tell (exit code 3)"]],
  ['a check killed by a signal', resultDoc({ state: 'uncertain', reconcile: { ...attempt, exit_code: null, signal: 'SIGKILL', error: null, verdict: 'unknown' } }), ["r-1: the host's reconcile check says it could not tell (signal SIGKILL)"]],
  [
    'a check that could not run',
    resultDoc({ state: 'uncertain', reconcile: { ...attempt, exit_code: null, error: 'timeout after 30 s', verdict: 'unknown' } }),
    ['r-1: the host could not check whether its effect happened: timeout after 30 s'],
  ],
  [
    'settled by a human after the check',
    resultDoc({ state: 'succeeded', resolved_by: 'human', note: 'checked by hand', reconcile: { ...attempt, exit_code: 3, error: null, verdict: 'unknown' } }),
    ["r-1: the host's reconcile check says it could not tell (exit code 3)", 'r-1 was settled by a human: checked by hand'],
  ],
  ['settled by reconcile, the attempt not given', resultDoc({ state: 'succeeded', resolved_by: 'reconcile' }), ["r-1 was settled by the host's reconcile check"]],
  ['a run the host saw through', resultDoc({ state: 'succeeded' }), []],
];

describe('what a result says about a run the host lost sight of, one line each', () => {
  it.each(NOTES)('%s', (_what, s, lines) => {
    expect(runNotes(s)).toEqual(lines);
  });

  it("shows a human's note that would act on a terminal escaped", () => {
    expect(runNotes(resultDoc({ state: 'succeeded', resolved_by: 'human', note: 'ok\u001b[2A' }))).toEqual(['r-1 was settled by a human: ok\\x1b[2A']);
  });
});

describe('dw.py says the same', () => {
  it('of every run above', () => {
    expect(dwPy(NOTES.map(([, s]) => ['notes', s])).map((r) => r.ok)).toEqual(NOTES.map(([, s]) => runNotes(s)));
  });
});
