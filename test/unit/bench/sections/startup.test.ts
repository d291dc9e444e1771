// The start section's history is made through the product's own writer of request states (the
// lifecycle), so it is what the daemon would have left: each request bound once in its spool, its
// result file written from its row and marked so, nothing for a start to repair.
import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BenchHost } from '../../../../bench/lib/host';
import { makeHistory } from '../../../../bench/sections/startup';
import { openLedger } from '../../../../main/core/ledger/db';
import { Requests } from '../../../../main/core/ledger/requests';
import { AuditLog } from '../../../../main/core/ledger/audit';
import type { ResultDoc } from '../../../../shared/protocol/types';

let host: BenchHost | null = null;
afterEach(async () => {
  await host?.cleanup();
  host = null;
});

describe('the start section\'s history', () => {
  it('is requests the lifecycle recorded, each with its result file written from its row and marked written', () => {
    host = new BenchHost();
    const made = makeHistory(host, 300);
    expect(made.results).toBe(300);
    const db = openLedger(path.join(host.home, 'ledger.sqlite'));
    try {
      const requests = new Requests(db);
      expect(requests.countInSpool('default')).toBe(made.ledger_rows);
      expect(requests.unsynced('default')).toEqual([]);
      expect(new AuditLog(db).search({ limit: 10_000 }).length).toBeGreaterThanOrEqual(made.audit_entries);
      const states = requests.countByState();
      for (const s of ['succeeded', 'failed', 'rejected']) expect(states[s]).toBeGreaterThan(0);
      const files = readdirSync(host.results).filter((n) => n.endsWith('.json'));
      expect(files.length).toBe(made.results);
      for (const name of files) {
        const doc = JSON.parse(readFileSync(path.join(host.results, name), 'utf8')) as ResultDoc;
        const row = requests.get(name.slice(0, -'.json'.length));
        if (row) expect([doc.state, doc.id]).toEqual([row.state, row.wire_id]);
      }
    } finally {
      db.close();
    }
  });
});
