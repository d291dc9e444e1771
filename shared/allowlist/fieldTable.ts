// The allowlist's field table in Markdown, generated from the schema: docs/PROTOCOL.md holds it between
// two markers (scripts/allowlist-table.ts writes it there; a unit test fails when they differ).
import { ARG_FIELDS, ARG_TYPE_FIELDS, ARG_TYPES, FILE_FIELDS, OPERATION_FIELDS, RECONCILE_FIELDS, defaultWords, typeWords, type FieldSpec } from './schema';

export const TABLE_START = '<!-- allowlist fields: generated from shared/allowlist/schema.ts by scripts/allowlist-table.ts -->';
export const TABLE_END = '<!-- end of allowlist fields -->';

const cell = (s: string) => s.replaceAll('|', '\\|');

function rows(where: string, fields: Record<string, FieldSpec>): string[] {
  return Object.entries(fields).map(([name, f]) => `| ${where}\`${name}\` | ${cell(typeWords(f.type))} | ${cell(defaultWords(f))} | ${cell(f.about)} |`);
}

/** The table, without the markers. */
export function fieldTable(): string {
  return [
    '| Field | Value | Default | What it does |',
    '| --- | --- | --- | --- |',
    ...rows('', FILE_FIELDS),
    ...rows('operation ', OPERATION_FIELDS),
    ...rows('reconcile ', RECONCILE_FIELDS),
    ...rows('argument ', ARG_FIELDS),
    ...ARG_TYPES.flatMap((t) => rows(`${t} `, ARG_TYPE_FIELDS[t])),
  ].join('\n');
}

/** `doc` with the text between the markers replaced by the table; null when the markers are missing. */
export function withFieldTable(doc: string): string | null {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) return null;
  return `${doc.slice(0, start + TABLE_START.length)}\n${fieldTable()}\n${doc.slice(end)}`;
}
