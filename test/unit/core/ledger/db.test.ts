// The ledger's upgrade to several spools: a ledger written by the previous version (one spool) opens
// with every request, key and request's audit entry in the spool named `default`, and its spool
// problem kept under that spool's name. A commit without its own fsync leaves the safety level as it
// was, and inside a transaction is part of that one's commit. The audit log's full-text index, now
// written in batches, takes up what was indexed entry by entry. A grant made before grants named their
// arguments keeps covering any arguments until it expires. Every request's id is, after the upgrade,
// the id its sandbox gave, bound within its spool. Who approved a request, once text, is in a column of
// its kind. A connection's page cache is small.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commitUnsynced, openLedger, type Db } from '../../../../main/core/ledger/db';
import { AuditLog } from '../../../../main/core/ledger/audit';
import { HostFlags } from '../../../../main/core/ledger/meta';
import { Grants } from '../../../../main/core/ledger/grants';
import { Requests } from '../../../../main/core/ledger/requests';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-db-'));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * What each migration since the spools did, undone (by its index in db.ts's list): a ledger of an
 * earlier version is the newest one with every later migration undone, newest first. A migration
 * added later needs its undo here, or the tests of the earlier upgrades cannot build their ledgers.
 */
const UNDO: Record<number, string> = {
  // Several spools.
  6: `DROP INDEX audit_spool; DROP INDEX requests_spool;
      ALTER TABLE requests DROP COLUMN spool; ALTER TABLE keys DROP COLUMN spool; ALTER TABLE audit DROP COLUMN spool;`,
  // The full-text index written in batches: each entry indexed by a trigger as it is recorded.
  7: `DROP TRIGGER audit_ai; DROP TRIGGER audit_ad; DROP TABLE audit_fts_through;
      CREATE TRIGGER audit_ai AFTER INSERT ON audit BEGIN
        INSERT INTO audit_fts (rowid, kind, request_id, key_id, op, message, details)
        VALUES (new.seq, new.kind, new.request_id, new.key_id, new.op, new.message, new.details);
      END;
      CREATE TRIGGER audit_ad AFTER DELETE ON audit BEGIN
        INSERT INTO audit_fts (audit_fts, rowid, kind, request_id, key_id, op, message, details)
        VALUES ('delete', old.seq, old.kind, old.request_id, old.key_id, old.op, old.message, old.details);
      END;`,
  // A grant's rule per argument.
  8: 'ALTER TABLE grants DROP COLUMN args_json;',
  // Ids bound within their spool.
  9: 'DROP INDEX requests_wire; ALTER TABLE requests DROP COLUMN wire_id;',
  // Who approved a request, typed.
  10: 'ALTER TABLE requests DROP COLUMN approved_by_actor; ALTER TABLE requests DROP COLUMN approved_by_grant; ALTER TABLE requests DROP COLUMN approved_by_plan;',
  // A reconcile check still to come.
  11: 'ALTER TABLE requests DROP COLUMN reconcile_pending;',
};

/** A new ledger at `file` as the version with the first `version` migrations left it. */
function ledgerOfVersion(file: string, version: number): Db {
  const db = openLedger(file);
  for (let v = (db.pragma('user_version', { simple: true }) as number) - 1; v >= version; v--) {
    if (UNDO[v] === undefined) throw new Error(`migration ${v} has no undo in this test`);
    db.exec(UNDO[v]!);
  }
  db.pragma(`user_version = ${version}`);
  return db;
}

/** A ledger as the version before spools left it. */
function previousVersionLedger(file: string): void {
  const db = ledgerOfVersion(file, 6);
  db.prepare("INSERT INTO keys (key_id, name, scope, secret, created_at) VALUES ('k_old', 'old', 'read', 's', '2026-01-01T00:00:00Z')").run();
  db.prepare(
    `INSERT INTO requests (id, key_id, op, args_json, binding_hash, mac, created_at, claimed_at, state, updated_at)
     VALUES ('r-old', 'k_old', 'echo', '{}', 'h', 'm', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'succeeded', '2026-01-01T00:00:00Z')`,
  ).run();
  db.prepare("INSERT INTO audit (at, kind, actor, request_id, message) VALUES ('2026-01-01T00:00:00Z', 'claimed', 'daemon', 'r-old', 'claimed')").run();
  db.prepare("INSERT INTO audit (at, kind, actor, message) VALUES ('2026-01-01T00:00:00Z', 'daemon_started', 'daemon', 'started')").run();
  db.prepare("INSERT INTO meta (k, v) VALUES ('spool_problem', 'unsafe spool: it is a link')").run();
  db.close();
}

describe('the upgrade to several spools', () => {
  it("puts what there was in the spool named default, and a host-wide entry in none", () => {
    const file = path.join(dir, 'ledger.sqlite');
    previousVersionLedger(file);
    const db = openLedger(file);
    try {
      expect(db.prepare("SELECT spool FROM requests WHERE id = 'r-old'").get()).toEqual({ spool: 'default' });
      expect(db.prepare("SELECT spool FROM keys WHERE key_id = 'k_old'").get()).toEqual({ spool: 'default' });
      expect(db.prepare('SELECT kind, spool FROM audit ORDER BY seq').all()).toEqual([
        { kind: 'claimed', spool: 'default' },
        { kind: 'daemon_started', spool: null },
      ]);
      expect(new HostFlags(db).spoolProblem('default')).toBe('unsafe spool: it is a link');
    } finally {
      db.close();
    }
  });
});

describe('the upgrade to a full-text index written in batches', () => {
  it('finds the entries indexed one by one before, and those recorded after, in an index that matches the table', () => {
    const own = mkdtempSync(path.join(os.tmpdir(), 'dw-fts-'));
    const file = path.join(own, 'ledger.sqlite');
    const before = ledgerOfVersion(file, 7);
    new AuditLog(before).record({ kind: 'claimed', request_id: 'req-before', message: 'recorded before the upgrade' });
    before.close();
    const db = openLedger(file);
    try {
      const audit = new AuditLog(db);
      audit.record({ kind: 'claimed', request_id: 'req-after', message: 'recorded after the upgrade' });
      expect(audit.search({ text: 'recorded upgrade' }).map((r) => r.request_id)).toEqual(['req-after', 'req-before']);
      db.prepare("INSERT INTO audit_fts (audit_fts, rank) VALUES ('integrity-check', 1)").run();
    } finally {
      db.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('the upgrade to grants that name their arguments', () => {
  it('keeps a grant made before covering any arguments, until it expires', () => {
    const own = mkdtempSync(path.join(os.tmpdir(), 'dw-grants-'));
    const file = path.join(own, 'ledger.sqlite');
    const before = ledgerOfVersion(file, 8);
    const until = new Date(Date.now() + 3600_000).toISOString();
    before
      .prepare("INSERT INTO grants (id, key_id, op, created_at, expires_at, created_by) VALUES ('g_old', 'k_old', 'deploy', ?, ?, 'cli:alice')")
      .run(new Date().toISOString(), until);
    before.close();
    const db = openLedger(file);
    try {
      const grants = new Grants(db);
      expect(grants.get('g_old')).not.toHaveProperty('args');
      expect(grants.active('k_old', 'deploy', { target: 'anything', n: 3 })?.id).toBe('g_old');
      expect(grants.active('k_old', 'deploy', {}, new Date(Date.parse(until) + 1))).toBeNull();
    } finally {
      db.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('the upgrade to ids bound within their spool', () => {
  it("keeps every request under its id, now its id as its sandbox gave it, bound within its spool", () => {
    const own = mkdtempSync(path.join(os.tmpdir(), 'dw-wire-'));
    const file = path.join(own, 'ledger.sqlite');
    const before = ledgerOfVersion(file, 9);
    const insert = before.prepare(
      `INSERT INTO requests (id, key_id, op, args_json, binding_hash, mac, created_at, claimed_at, state, updated_at, spool)
       VALUES (?, 'k_old', 'echo', '{}', 'h', 'm', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'succeeded', '2026-01-01T00:00:00Z', ?)`,
    );
    insert.run('run-1', 'default');
    insert.run('run-2', 'work');
    before.close();
    const db = openLedger(file);
    try {
      expect(db.prepare('SELECT id, wire_id, spool FROM requests ORDER BY id').all()).toEqual([
        { id: 'run-1', wire_id: 'run-1', spool: 'default' },
        { id: 'run-2', wire_id: 'run-2', spool: 'work' },
      ]);
      const requests = new Requests(db);
      expect(requests.bound('default', 'run-1')?.id).toBe('run-1');
      expect(requests.bound('work', 'run-1')).toBeNull();
      // Bound: a second request of that id in that spool cannot be recorded, whatever its handle.
      expect(() => db.prepare("INSERT INTO requests (id, wire_id, key_id, op, args_json, binding_hash, mac, created_at, claimed_at, state, updated_at, spool) SELECT 'run-1@default', wire_id, key_id, op, args_json, binding_hash, mac, created_at, claimed_at, state, updated_at, spool FROM requests WHERE id = 'run-1'").run()).toThrow(/UNIQUE/);
    } finally {
      db.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('the upgrade to typed approvals', () => {
  it('puts who approved each request in the column of its kind: a grant, a plan or a person; a denial approved nothing', () => {
    const own = mkdtempSync(path.join(os.tmpdir(), 'dw-approved-'));
    const file = path.join(own, 'ledger.sqlite');
    const before = ledgerOfVersion(file, 10);
    const insert = before.prepare(
      `INSERT INTO requests (id, wire_id, key_id, op, args_json, binding_hash, mac, created_at, claimed_at, state, updated_at, decided_by)
       VALUES (?, ?, 'k_old', 'echo', '{}', 'h', 'm', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', ?, '2026-01-01T00:00:00Z', ?)`,
    );
    for (const [id, state, by] of [
      ['by-grant', 'succeeded', 'grant g_x'],
      ['by-plan', 'queued', 'plan r-1'],
      ['by-person', 'failed', 'cli:root'],
      ['denied', 'denied', 'host (approval timeout)'],
      ['never-asked', 'succeeded', null],
    ] as const) insert.run(id, id, state, by);
    before.close();
    const db = openLedger(file);
    try {
      expect(db.prepare('SELECT id, decided_by, approved_by_actor, approved_by_grant, approved_by_plan FROM requests ORDER BY id').all()).toEqual([
        { id: 'by-grant', decided_by: 'grant g_x', approved_by_actor: null, approved_by_grant: 'g_x', approved_by_plan: null },
        { id: 'by-person', decided_by: 'cli:root', approved_by_actor: 'cli:root', approved_by_grant: null, approved_by_plan: null },
        { id: 'by-plan', decided_by: 'plan r-1', approved_by_actor: null, approved_by_grant: null, approved_by_plan: 'r-1' },
        { id: 'denied', decided_by: 'host (approval timeout)', approved_by_actor: null, approved_by_grant: null, approved_by_plan: null },
        { id: 'never-asked', decided_by: null, approved_by_actor: null, approved_by_grant: null, approved_by_plan: null },
      ]);
    } finally {
      db.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('statements', () => {
  it('compiles each statement once per connection, and a reused one still reads what was committed since, by any connection', () => {
    const own = mkdtempSync(path.join(os.tmpdir(), 'dw-db-stmt-'));
    const db = openLedger(path.join(own, 'ledger.sqlite'));
    const other = openLedger(path.join(own, 'ledger.sqlite'));
    try {
      const sql = "SELECT v FROM meta WHERE k = 'paused'";
      expect(db.prepare(sql)).toBe(db.prepare(sql));
      expect(db.prepare(sql)).not.toBe(other.prepare(sql));
      expect(db.prepare(sql).get()).toBeUndefined();
      new HostFlags(other).setPaused(true);
      expect(db.prepare(sql).get()).toEqual({ v: '1' });
      expect(new HostFlags(db).paused).toBe(true);
    } finally {
      db.close();
      other.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('a commit without its own fsync', () => {
  it('commits, leaves the ledger at synchronous=FULL, and inside a transaction is part of its commit', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-unsynced-'));
    const db = openLedger(path.join(dir, 'ledger.sqlite'));
    try {
      db.exec('CREATE TABLE t (x)');
      commitUnsynced(db, () => db.prepare('INSERT INTO t VALUES (1)').run());
      expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
      expect(() =>
        db.transaction(() => {
          db.prepare('INSERT INTO t VALUES (2)').run();
          commitUnsynced(db, () => db.prepare('INSERT INTO t VALUES (3)').run());
          throw new Error('the enclosing commit fails');
        })(),
      ).toThrow('the enclosing commit fails');
      db.transaction(() => commitUnsynced(db, () => db.prepare('INSERT INTO t VALUES (4)').run()))();
      expect(db.prepare('SELECT x FROM t ORDER BY x').pluck().all()).toEqual([1, 4]);
      expect(db.pragma('synchronous', { simple: true })).toBe(2);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a connection', () => {
  it("keeps at most 2 MB of pages in its cache (SQLite's default), not better-sqlite3's 16 MB that a daemon's sweep fills and then holds", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-cache-'));
    const db = openLedger(path.join(dir, 'ledger.sqlite'));
    try {
      expect(db.pragma('cache_size', { simple: true })).toBe(-2000); // KiB
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps its temporary tables in memory, so that a request makes no temporary file of SQLite', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-temp-'));
    const db = openLedger(path.join(dir, 'ledger.sqlite'));
    try {
      expect(db.pragma('temp_store', { simple: true })).toBe(2); // MEMORY
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
