// docs/PROTOCOL.md's table of allowlist fields is the one generated from the schema: a field, default or
// bound changed in shared/allowlist/schema.ts without running scripts/allowlist-table.ts fails here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TABLE_END, TABLE_START, fieldTable, withFieldTable } from '../../../../shared/allowlist/fieldTable';
import { OPERATION_FIELDS } from '../../../../shared/allowlist/schema';

const doc = () => readFileSync(path.join(import.meta.dirname, '../../../../docs/PROTOCOL.md'), 'utf8');

describe('the allowlist field table in docs/PROTOCOL.md', () => {
  it('is the table generated from the schema (run npx tsx scripts/allowlist-table.ts after changing it)', () => {
    const text = doc();
    const between = text.slice(text.indexOf(TABLE_START) + TABLE_START.length, text.indexOf(TABLE_END));
    expect(between.trim()).toBe(fieldTable());
    expect(withFieldTable(text)).toBe(text);
  });

  it('has one row per operation field, with its bounds and default', () => {
    const table = fieldTable();
    for (const name of Object.keys(OPERATION_FIELDS)) expect(table).toContain(`| operation \`${name}\` |`);
    expect(table).toContain('| operation `timeout_s` | whole number, 1 to 604800 | 600 |');
    expect(table).toContain('| operation `spools` | non-empty list of spool names | every spool |');
  });

  it('is not written into a document without its markers', () => {
    expect(withFieldTable('# no table here\n')).toBeNull();
  });
});
