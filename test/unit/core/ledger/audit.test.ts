// The audit log's full-text index is written in batches: an entry waits at most INDEX_AFTER_MS, a
// search adds what waits before it looks, and whatever removes entries (retention, before or after
// they were indexed, the whole log or its newest) leaves an index that matches the table.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openLedger, type Db } from '../../../../main/core/ledger/db';
import { AuditLog, HELD_MAX, INDEX_AFTER_MS } from '../../../../main/core/ledger/audit';

let dir = '';
let db: Db;
let audit: AuditLog;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-audit-'));
  db = openLedger(path.join(dir, 'ledger.sqlite'));
  audit = new AuditLog(db);
});
afterEach(() => {
  vi.useRealTimers();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const indexed = () => (db.prepare('SELECT COUNT(*) AS n FROM audit_fts_docsize').get() as { n: number }).n;
/** FTS5's own check that the index holds exactly the table's rows (it throws otherwise). */
const indexMatchesTable = () => db.prepare("INSERT INTO audit_fts (audit_fts, rank) VALUES ('integrity-check', 1)").run();
const found = (text: string) => audit.search({ text }).map((r) => r.message);
const entry = (message: string) => audit.record({ kind: 'claimed', request_id: `req-${message}`, message });

describe('the full-text index', () => {
  it('takes entries in a batch a moment after they are recorded, not one by one', () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    for (let i = 0; i < 50; i++) entry(`burst ${i}`);
    expect(indexed()).toBe(0);
    vi.advanceTimersByTime(INDEX_AFTER_MS);
    expect(indexed()).toBe(50);
    indexMatchesTable();
  });

  it('is brought up to date by a search, so that an entry recorded a moment ago is found', () => {
    entry('alpha');
    expect(indexed()).toBe(0);
    expect(found('alpha')).toEqual(['alpha']);
    expect(indexed()).toBe(1);
  });

  it('finds entries another connection recorded (the command line beside the daemon)', () => {
    const other = openLedger(path.join(dir, 'ledger.sqlite'));
    try {
      new AuditLog(other).record({ kind: 'approved', request_id: 'req-cli', message: 'approved from the command line' });
    } finally {
      other.close();
    }
    expect(found('command line')).toEqual(['approved from the command line']);
  });

  it('stays whole when entries are removed before they were indexed, and after', () => {
    entry('old indexed');
    audit.indexPending();
    entry('old waiting');
    db.prepare("DELETE FROM audit WHERE message LIKE 'old %'").run(); // as retention removes them
    entry('new');
    expect(found('old')).toEqual([]);
    expect(found('new')).toEqual(['new']);
    indexMatchesTable();
  });

  it('finds an entry whose seq was used before, once the whole log was removed', () => {
    entry('first');
    entry('second');
    audit.indexPending();
    db.prepare('DELETE FROM audit').run();
    entry('again'); // seq 1 again: at or below where the index had got to
    expect(found('again')).toEqual(['again']);
    expect(found('first')).toEqual([]);
    indexMatchesTable();
  });

  it('gives back nothing twice after batches that overlap in time', () => {
    entry('one');
    expect(audit.indexPending()).toBe(1);
    expect(audit.indexPending()).toBe(0);
    entry('two');
    expect(audit.indexPending()).toBe(1);
    expect(found('one')).toEqual(['one']);
    indexMatchesTable();
  });
});

describe('a ledger whose disk refuses writes', () => {
  /** The ledger as full as a full disk leaves it (SQLite says SQLITE_FULL), or given room again. */
  const full = () => db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
  const room = () => db.pragma('max_page_count = 1073741823');
  const big = (message: string) => audit.record({ kind: 'claimed', message: `${message} ${'x'.repeat(5000)}` });
  const messages = () => audit.search({ limit: 10_000 }).map((r) => r.message.split(' ')[0]!).reverse();

  it("holds the daemon's entries in memory, and writes them, oldest first with their own times, once it can", () => {
    const failures: unknown[] = [];
    audit.onWriteFailure = (e) => failures.push(e);
    full();
    expect(() => big('one')).not.toThrow();
    big('two');
    expect(failures.map((e) => (e as { code: string }).code)).toEqual(['SQLITE_FULL', 'SQLITE_FULL']);
    expect(audit.waiting).toEqual({ held: 2, dropped: 0 });
    expect(messages()).toEqual([]);
    const heldAt = Date.now();
    room();
    big('three'); // the next entry that can be written brings the held ones first
    expect(messages()).toEqual(['one', 'two', 'three']);
    expect(Date.parse(audit.search({ limit: 3 }).at(-1)!.at)).toBeLessThanOrEqual(heldAt);
    expect(audit.waiting).toEqual({ held: 0, dropped: 0 });
  });

  it('counts what it cannot hold, and records the count', () => {
    audit.onWriteFailure = () => {};
    full();
    for (let i = 0; i < HELD_MAX + 5; i++) audit.record({ kind: 'claimed', message: `m${i} ${'x'.repeat(5000)}` });
    expect(audit.waiting).toEqual({ held: HELD_MAX, dropped: 5 });
    expect(audit.writeHeld()).toBe(false); // still no room: kept for the next try
    room();
    expect(audit.writeHeld()).toBe(true);
    expect(audit.search({ kind: 'internal_error' })[0]!.message).toContain('5 audit entries were lost');
    expect(audit.search({ kind: 'claimed', limit: 10_000 })).toHaveLength(HELD_MAX);
  });

  it("throws a command's entry (nobody would write it later), and any entry inside a transaction", () => {
    full();
    expect(() => big('cli')).toThrow(expect.objectContaining({ code: 'SQLITE_FULL' }));
    audit.onWriteFailure = () => {};
    expect(() => db.transaction(() => big('in a commit'))()).toThrow(expect.objectContaining({ code: 'SQLITE_FULL' }));
    expect(audit.waiting).toEqual({ held: 0, dropped: 0 });
  });
});
