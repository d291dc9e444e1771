// How the app shows a reconcile check, in Node: a verdict's badge, and the first lines of the look-up's
// output (escaped: it may echo what the sandbox sent).
import { describe, expect, it } from 'vitest';
import { EXCERPT_CHARS, EXCERPT_LINES, VERDICTS, outputExcerpt } from '../../../../renderer/lib/reconcile';

describe('VERDICTS', () => {
  it('gives every verdict a badge in the shared words, and a tone', () => {
    expect(VERDICTS).toEqual({
      applied: { label: 'Took effect', tone: 'good' },
      not_applied: { label: 'Did not take effect', tone: 'bad' },
      unknown: { label: 'Could not tell', tone: 'warn' },
    });
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
