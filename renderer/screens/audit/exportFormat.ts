// The audit log as files: CSV (for spreadsheets) and JSON Lines (for tools). Pure functions.
import type { AuditView } from '../../../shared/ipc/views';
import { isoToLocalInput } from './query';

const CSV_COLUMNS = ['seq', 'at', 'kind', 'actor', 'request_id', 'key_id', 'op', 'message', 'details'] as const;

/** One CSV cell: a formula-like value is neutralised with a leading ' (spreadsheets would run it), and a
 *  value with a comma, quote or line break is quoted with its quotes doubled (RFC 4180). */
export function csvCell(value: unknown): string {
  let s = value === null || value === undefined ? '' : typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Entries as CSV: a UTF-8 byte-order mark (so spreadsheets read non-ASCII right), a header row, CRLF line ends. */
function toCsv(entries: readonly AuditView[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const e of entries) lines.push(CSV_COLUMNS.map((c) => csvCell(e[c])).join(','));
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}

/** Entries as JSON Lines: one entry, exactly as the host gives it, per line. */
function toJsonLines(entries: readonly AuditView[]): string {
  return entries.map((e) => JSON.stringify(e)).join('\n') + (entries.length ? '\n' : '');
}

export type ExportFormat = 'csv' | 'jsonl';

export function exportFileName(format: ExportFormat, now = new Date()): string {
  const stamp = isoToLocalInput(now.toISOString()).replace('T', '-').replace(':', '');
  return `dumbwaiter-audit-${stamp}.${format}`;
}

export function exportFile(format: ExportFormat, entries: readonly AuditView[]): { text: string; mime: string } {
  return format === 'csv' ? { text: toCsv(entries), mime: 'text/csv' } : { text: toJsonLines(entries), mime: 'application/x-ndjson' };
}
