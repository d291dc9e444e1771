// How the app words a reconcile check and a plan's progress, in Node: how a look-up ended, the first
// lines of its output (escaped: it may echo what the sandbox sent), and how many steps were used.
import { describe, expect, it } from 'vitest';
import { EXCERPT_CHARS, EXCERPT_LINES, VERDICTS, attemptEnd, outputExcerpt, stepsUsed } from '../../../../renderer/lib/reconcile';
import type { PlanStep } from '../../../../shared/protocol/types';

describe('attemptEnd', () => {
  it('says why there was no verdict first, else the exit code, else the signal', () => {
    expect(attemptEnd({ exit_code: 0, signal: null, error: null })).toBe('exit 0');
    expect(attemptEnd({ exit_code: 3, signal: null, error: null })).toBe('exit 3');
    expect(attemptEnd({ exit_code: null, signal: 'SIGKILL', error: null })).toBe('killed by SIGKILL');
    expect(attemptEnd({ exit_code: null, signal: 'SIGTERM', error: 'timed out after 30 s' })).toBe('timed out after 30 s');
    expect(attemptEnd({ exit_code: null, signal: null, error: null })).toBe('no exit code');
  });

  it('has a label and a tone for every verdict', () => {
    expect(Object.keys(VERDICTS).sort()).toEqual(['applied', 'not_applied', 'unknown']);
    expect(VERDICTS.applied.tone).toBe('good');
    expect(VERDICTS.not_applied.tone).toBe('bad');
    expect(VERDICTS.unknown.tone).toBe('warn');
  });
});

describe('outputExcerpt', () => {
  it('keeps short output whole: stdout, then stderr, without trailing line feeds', () => {
    expect(outputExcerpt({ stdout: 'v1.2 exists\n', stderr: '' })).toEqual({ text: 'v1.2 exists', cut: false });
    expect(outputExcerpt({ stdout: 'one\n', stderr: 'warning: slow\n\n' })).toEqual({ text: 'one\nwarning: slow', cut: false });
    expect(outputExcerpt({ stdout: '', stderr: '' })).toEqual({ text: '', cut: false });
  });

  it('cuts at a few lines or characters, and says so', () => {
    const many = Array.from({ length: 10 }, (_, i) => `line ${i}`).join('\n');
    const r = outputExcerpt({ stdout: many, stderr: '' });
    expect(r.text.split('\n')).toHaveLength(EXCERPT_LINES);
    expect(r.cut).toBe(true);
    const long = outputExcerpt({ stdout: 'x'.repeat(EXCERPT_CHARS * 3), stderr: '' });
    expect([long.text.length, long.cut]).toEqual([EXCERPT_CHARS, true]);
    expect(outputExcerpt({ stdout: many, stderr: '' }, Infinity, Infinity)).toEqual({ text: many, cut: false });
  });

  it('escapes controls and bidi overrides, so a look-up echoing the sandbox cannot redraw or reorder what is shown', () => {
    const r = outputExcerpt({ stdout: 'release \u202egpj.exe\x1b[2A\x1b[2K exists\n', stderr: '' });
    expect(r.text).toBe('release \\u202egpj.exe\\x1b[2A\\x1b[2K exists');
    expect(r.text.includes('\u202e') || r.text.includes('\x1b')).toBe(false);
  });
});

describe('stepsUsed', () => {
  const step = (request_id: string | null): PlanStep => ({ op: 'x', args: {}, argv: ['/bin/true'], cwd: '/tmp', scope: 'read', request_id, state: request_id ? 'succeeded' : null });
  it('counts the steps a request has used', () => {
    expect(stepsUsed([])).toBe(0);
    expect(stepsUsed([step(null), step('r1'), step(null), step('r2')])).toBe(2);
  });
});
