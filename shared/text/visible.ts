// What the sandbox wrote, made safe to show a human: every character a terminal, a notification or a
// text view would act on or hide instead of showing is replaced by a visible escape such as \x1b or
// \u202e. Without this, an intent holding `ESC[2A ESC[2K` redraws the lines above it (a fake argv over
// the real one), and a bidi override makes `gpj.exe` read as `exe.jpg`.
//
// Escaped: C0 controls (U+0000-U+001F), DEL, C1 controls (U+0080-U+009F), every invisible format
// character (Unicode category Cf: bidi embeddings, overrides, isolates and marks, zero-width spaces,
// U+FEFF, soft hyphen, tag characters...), the line and paragraph separators U+2028/U+2029 and lone
// surrogates. Kept: the zero-width joiner and non-joiner (U+200C, U+200D), which emoji and several
// scripts need and which cannot move or hide other text. A backslash is not escaped, so plain text
// (a Windows path) is shown unchanged; a literal `\x1b` typed by the sandbox therefore reads the same as
// an escaped ESC, which misleads no terminal.
const HIDDEN = /(?!\u200c|\u200d)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
const HIDDEN_BUT_LINE_FEED = /(?!\u200c|\u200d|\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escape(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const cp = ch.codePointAt(0)!;
  if (cp <= 0xff) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return `\\u{${cp.toString(16)}}`;
}

/** One line for a human: line feeds are escaped too, so nothing can pass for a line of its own. */
export function visible(text: string): string {
  return text.replace(HIDDEN, escape);
}

/** A block of several lines (a log message with a stack trace): as `visible`, but line feeds kept. */
export function visibleLines(text: string): string {
  return text.replace(HIDDEN_BUT_LINE_FEED, escape);
}

/**
 * JSON text (from JSON.stringify) with the same characters written as JSON escapes (\u001b, \u202e, a
 * surrogate pair for a tag character): the same value for a program, and safe on a terminal.
 * JSON.stringify escapes C0 controls and lone surrogates but leaves DEL, C1, bidi characters and
 * U+2028/U+2029 raw. Outside strings JSON is ASCII and its line feeds (kept) are layout, so only string
 * contents change.
 */
export function visibleJson(json: string): string {
  return json.replace(HIDDEN_BUT_LINE_FEED, (ch) => ch.split('').map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''));
}
