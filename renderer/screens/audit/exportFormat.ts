// The audit log as files: CSV (for spreadsheets) and JSON Lines (for tools). Pure functions.
import type { AuditView } from '../../../shared/ipc/views';
import { visibleJson } from '../../../shared/text/visible';
import { isoToLocalInput } from './query';

const CSV_COLUMNS = ['seq', 'at', 'kind', 'actor', 'request_id', 'key_id', 'op', 'message', 'details'] as const;

// A spreadsheet runs a cell that starts with = + - @ (or tab or CR, which some strip first; or their
// full-width forms, which some read as the ASCII ones) as a formula. The file is written with `,`
// separators, but a spreadsheet may open it with `;` or tab as its separator, and then our quotes no
// longer group a cell: a field can start after any `,` `;` tab or line break inside a value, and a
// quote that starts a field is dropped. So the rule: wherever a field can start (the start of a value,
// or after one of those characters), optional quotes and spaces, then a formula character, gets a `'`
// before the formula character, which makes the spreadsheet take the field as text. Split on any of
// those separators, no piece then starts a formula. (The JSON Lines export keeps every value exact.)
const FORMULA_START = /(?<=^|[,;\t\r\n])([" ]*)(?=[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20])/g;

/** One CSV cell: formulas neutralised as above, and a value with a comma, quote or line break quoted
 *  with its quotes doubled (RFC 4180). */
export function csvCell(value: unknown): string {
  const raw = value === null || value === undefined ? '' : typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  const s = raw.replace(FORMULA_START, "$1'");
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Entries as CSV: a UTF-8 byte-order mark (so spreadsheets read non-ASCII right), a header row, CRLF line ends. */
function toCsv(entries: readonly AuditView[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const e of entries) lines.push(CSV_COLUMNS.map((c) => csvCell(e[c])).join(','));
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}

/** Entries as JSON Lines: one entry, exactly as the host gives it, per line. Characters that some
 *  readers take for a line break (U+2028, U+2029, U+0085) or that hide or reorder text (bidi controls)
 *  are written as JSON escapes: the same values, one entry per line for every reader. */
function toJsonLines(entries: readonly AuditView[]): string {
  return entries.map((e) => visibleJson(JSON.stringify(e))).join('\n') + (entries.length ? '\n' : '');
}

export type ExportFormat = 'csv' | 'jsonl';

export function exportFileName(format: ExportFormat, now = new Date()): string {
  const stamp = isoToLocalInput(now.toISOString()).replace('T', '-').replace(':', '');
  return `dumbwaiter-audit-${stamp}.${format}`;
}

export function exportFile(format: ExportFormat, entries: readonly AuditView[]): { text: string; mime: string } {
  return format === 'csv' ? { text: toCsv(entries), mime: 'text/csv' } : { text: toJsonLines(entries), mime: 'application/x-ndjson' };
}
