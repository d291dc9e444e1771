// Keeping untouched text: the edited document as text, with every line the edit did not change taken
// byte for byte from the original (comment alignment, spacing, blank lines), since the YAML library
// re-spaces comments and flow collections and people's files should not churn.
import type { Document } from 'yaml';
import { deepEqual } from './formValue';
import { STRINGIFY, parse } from './yamlText';

const norm = (l: string) => l.replace(/\s+/g, ' ').replace(/ #/g, ' #').trim();

/** Pairs of equal lines (longest common subsequence), as a map from a's index to b's. */
function lcs(a: string[], b: string[], eq: (x: string, y: string) => boolean): Map<number, number> {
  const n = a.length;
  const m = b.length;
  const t = new Array<Uint32Array>(n + 1);
  for (let i = 0; i <= n; i++) t[i] = new Uint32Array(m + 1);
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) t[i]![j] = eq(a[i]!, b[j]!) ? t[i + 1]![j + 1]! + 1 : Math.max(t[i + 1]![j]!, t[i]![j + 1]!);
  const out = new Map<number, number>();
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (eq(a[i]!, b[j]!)) out.set(i++, j++);
    else if (t[i + 1]![j]! >= t[i]![j + 1]!) i++;
    else j++;
  }
  return out;
}

const COMMENTED = /^(\s*)(\S.*?) (#.*)$/;

/** A changed line whose trailing comment the original aligned to a column keeps that column. */
function alignComment(line: string, original: string[]): string {
  const m = COMMENTED.exec(line);
  if (!m) return line;
  const [, indent, content, comment] = m as unknown as [string, string, string, string];
  const key = `${indent}${content.split(':')[0]}:`;
  for (const o of original) {
    if (!o.startsWith(key) || !o.endsWith(comment)) continue;
    const col = o.length - comment.length;
    const width = indent.length + content.length;
    return col > width + 1 && /\s$/.test(o.slice(0, col)) ? `${indent}${content}${' '.repeat(col - width)}${comment}` : line;
  }
  return line;
}

/**
 * The edited document as text, with every line the edit did not change taken from the original
 * (the library re-spaces comments and flow collections; people's files should not churn). Falls
 * back to the library's text whenever the result would mean anything else.
 */
export function keepUntouchedLines(original: string, doc: Document): string {
  const edited = doc.toString(STRINGIFY);
  const before = parse(original).toString(STRINGIFY);
  const o = original.split('\n');
  const b = before.split('\n');
  const e = edited.split('\n');
  if (o.length * b.length > 4_000_000 || b.length * e.length > 4_000_000) return edited;
  const bToO = lcs(b, o, (x, y) => norm(x) === norm(y));
  const bToE = lcs(b, e, (x, y) => x === y);
  const eFromB = new Map<number, number>();
  for (const [bi, ei] of bToE) eFromB.set(ei, bi);
  const out: string[] = [];
  let lastO = -1;
  e.forEach((line, ei) => {
    const bi = eFromB.get(ei);
    const oi = bi === undefined ? undefined : bToO.get(bi);
    if (oi !== undefined) {
      // Blank lines the library dropped between two kept lines come back too.
      const gap = lastO >= 0 ? o.slice(lastO + 1, oi) : [];
      if (gap.every((l) => l.trim() === '') && out[out.length - 1]?.trim() !== '') out.push(...gap);
      out.push(o[oi]!);
      lastO = oi;
    } else out.push(alignComment(line, o));
  });
  const merged = out.join('\n');
  const check = parse(merged);
  if (check.errors.length > 0 || !deepEqual(check.toJS(), parse(edited).toJS())) return edited;
  return merged;
}
