// Writes the allowlist's field table into docs/PROTOCOL.md from shared/allowlist/schema.ts
// (`npx tsx scripts/allowlist-table.ts`); test/unit/shared/allowlist/fieldTable.test.ts fails until it is run.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { withFieldTable } from '../shared/allowlist/fieldTable';

const file = path.join(import.meta.dirname, '..', 'docs', 'PROTOCOL.md');
const next = withFieldTable(readFileSync(file, 'utf8'));
if (next === null) throw new Error(`${file} has no allowlist field table markers`);
writeFileSync(file, next);
