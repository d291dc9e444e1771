// What a human is shown of sandbox text: every class of character a terminal acts on or hides is
// escaped, plain text (any script, emoji, Windows paths) is left as it is.
import { describe, expect, it } from 'vitest';
import { visible, visibleJson, visibleLines } from '../../../../shared/text/visible';

/** Any character left that a terminal or a text view acts on or hides. */
// eslint-disable-next-line no-control-regex -- raw controls are what this looks for
const RAW = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udfff]/u;

describe('visible', () => {
  it.each([
    ['ESC and a CSI sequence', '\x1b[2A\x1b[2Kok', '\\x1b[2A\\x1b[2Kok'],
    ['NUL, BEL and backspace', 'a\0b\x07c\bd', 'a\\x00b\\x07c\\x08d'],
    ['carriage return, line feed and tab', 'one\rtwo\nthree\tfour', 'one\\rtwo\\nthree\\tfour'],
    ['DEL', 'rm\x7f', 'rm\\x7f'],
    ['C1 controls (8-bit CSI, OSC, NEL)', '\u009b2J\u009d0;title\u0085', '\\x9b2J\\x9d0;title\\x85'],
    ['bidi overrides and embeddings', 'invoice\u202egpj.exe\u202c \u202a\u202b\u202d', 'invoice\\u202egpj.exe\\u202c \\u202a\\u202b\\u202d'],
    ['bidi isolates and marks', '\u2066a\u2069\u2067b\u2068\u200e\u200f\u061c', '\\u2066a\\u2069\\u2067b\\u2068\\u200e\\u200f\\u061c'],
    ['zero-width space, word joiner, BOM, soft hyphen', 'r\u200bm \u2060\ufeff\u00ad', 'r\\u200bm \\u2060\\ufeff\\xad'],
    ['line and paragraph separators', 'a\u2028b\u2029c', 'a\\u2028b\\u2029c'],
    ['tag characters (hidden text)', 'hi\u{e0001}\u{e0069}', 'hi\\u{e0001}\\u{e0069}'],
    ['a lone surrogate', 'x\ud800y\udfff', 'x\\ud800y\\udfff'],
  ])('escapes %s', (_what, raw, shown) => {
    expect(visible(raw)).toBe(shown);
    expect(visible(raw)).not.toMatch(RAW);
  });

  it.each([
    ['ASCII with backslashes', String.raw`C:\Users\me\x1b "quoted" {curly} $HOME`],
    ['other scripts', 'Grüße, Привет, 日本語, עברית, العربية, हिन्दी'],
    ['non-BMP characters, with joiners', '𝕏 🚀 👩‍💻 🏳️‍🌈 क्‍ष'],
    ['an empty string', ''],
  ])('leaves %s unchanged (and is idempotent on its own output)', (_what, text) => {
    expect(visible(text)).toBe(text);
    const once = visible(`${text}\x1b[2K\u202e`);
    expect(visible(once)).toBe(once);
  });
});

describe('visibleLines', () => {
  it('keeps line feeds and escapes everything else', () => {
    expect(visibleLines('Error: bad\n    at x (\x1b[31mfile\u202e.ts:1)\r\n')).toBe('Error: bad\n    at x (\\x1b[31mfile\\u202e.ts:1)\\r\n');
  });
});

describe('visibleJson', () => {
  it('writes what JSON.stringify leaves raw as JSON escapes, so the value read back is the same', () => {
    const value = { intent: 'a\x7f\u009b\u202e\u2028\u{e0041}\ud800\x1b', argv: ['plain', '👩‍💻'] };
    const json = visibleJson(JSON.stringify(value, null, 2));
    expect(json.replaceAll('\n', '')).not.toMatch(RAW); // its line feeds are layout
    expect(json).toContain(String.raw`a\u007f\u009b\u202e\u2028\udb40\udc41\ud800\u001b`);
    expect(json).toContain('👩‍💻');
    expect(JSON.parse(json)).toEqual(value);
  });
});
