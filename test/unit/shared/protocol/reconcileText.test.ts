// A reconcile attempt in the words every caller uses (the CLI, dw and dw mcp, the app).
import { describe, expect, it } from 'vitest';
import { attemptEnd, verdictText } from '../../../../shared/protocol/reconcileText';

describe('attemptEnd', () => {
  it('says why there was no verdict first, else the exit code, else the signal', () => {
    expect(attemptEnd({ exit_code: 0, signal: null, error: null })).toBe('exit code 0');
    expect(attemptEnd({ exit_code: 3, signal: null, error: null })).toBe('exit code 3');
    expect(attemptEnd({ exit_code: null, signal: 'SIGKILL', error: null })).toBe('signal SIGKILL');
    expect(attemptEnd({ exit_code: null, signal: 'SIGTERM', error: 'timed out after 30 s' })).toBe('timed out after 30 s');
    expect(attemptEnd({ exit_code: null, signal: null, error: null })).toBe('no exit code');
  });
});

describe('verdictText', () => {
  it('says what each verdict found', () => {
    expect((['applied', 'not_applied', 'unknown'] as const).map(verdictText)).toEqual(['took effect', 'did not take effect', 'could not tell']);
  });
});
