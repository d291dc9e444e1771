// The SQLite ledger: requests, keys and the audit log, in the host's home. WAL lets the CLI and the
// daemon use it at once; synchronous=FULL makes every committed state change survive a power cut.
import { chmodSync, existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { scopedLogger } from '../log';

export type Db = Database.Database;

const log = scopedLogger('ledger');

const MIGRATIONS: string[] = [
  `
  CREATE TABLE keys (
    key_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    ops TEXT,
    secret TEXT NOT NULL,
    secret_format TEXT NOT NULL DEFAULT 'plain',
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    rotated_to TEXT,
    last_used_at TEXT
  );

  CREATE TABLE requests (
    id TEXT PRIMARY KEY,
    key_id TEXT NOT NULL,
    op TEXT NOT NULL,
    args_json TEXT NOT NULL,
    binding_hash TEXT NOT NULL,
    mac TEXT NOT NULL,
    intent TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    claimed_at TEXT NOT NULL,
    state TEXT NOT NULL,
    plan_json TEXT,
    error_code TEXT,
    error_message TEXT,
    exit_code INTEGER,
    signal TEXT,
    stdout TEXT NOT NULL DEFAULT '',
    stderr TEXT NOT NULL DEFAULT '',
    stdout_truncated INTEGER NOT NULL DEFAULT 0,
    stderr_truncated INTEGER NOT NULL DEFAULT 0,
    started_at TEXT,
    finished_at TEXT,
    duration_ms INTEGER,
    pid INTEGER,
    resolved_by TEXT,
    note TEXT,
    updated_at TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    synced INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX requests_state ON requests (state, claimed_at);
  CREATE INDEX requests_unsynced ON requests (synced) WHERE synced = 0;

  CREATE TABLE audit (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    actor TEXT NOT NULL,
    request_id TEXT,
    key_id TEXT,
    op TEXT,
    message TEXT NOT NULL,
    details TEXT
  );
  CREATE INDEX audit_request ON audit (request_id);
  CREATE VIRTUAL TABLE audit_fts USING fts5 (
    kind, request_id, key_id, op, message, details,
    content = 'audit', content_rowid = 'seq'
  );
  CREATE TRIGGER audit_ai AFTER INSERT ON audit BEGIN
    INSERT INTO audit_fts (rowid, kind, request_id, key_id, op, message, details)
    VALUES (new.seq, new.kind, new.request_id, new.key_id, new.op, new.message, new.details);
  END;
  CREATE TRIGGER audit_ad AFTER DELETE ON audit BEGIN
    INSERT INTO audit_fts (audit_fts, rowid, kind, request_id, key_id, op, message, details)
    VALUES ('delete', old.seq, old.kind, old.request_id, old.key_id, old.op, old.message, old.details);
  END;
  `,
  `
  ALTER TABLE requests ADD COLUMN approval_json TEXT;
  ALTER TABLE requests ADD COLUMN decided_by TEXT;
  ALTER TABLE requests ADD COLUMN decided_at TEXT;
  ALTER TABLE requests ADD COLUMN ceiling_override INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE requests ADD COLUMN cancel_requested_by TEXT;
  ALTER TABLE requests ADD COLUMN cost INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX requests_started ON requests (started_at) WHERE started_at IS NOT NULL;
  CREATE INDEX requests_updated ON requests (updated_at);
  CREATE INDEX audit_at ON audit (at);

  CREATE TABLE grants (
    id TEXT PRIMARY KEY,
    key_id TEXT NOT NULL,
    op TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    revoked_at TEXT,
    revoked_by TEXT,
    uses INTEGER NOT NULL DEFAULT 0
  );

  CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
  `,
  // Filtering the audit log by kind (and paging by seq) must not scan a million rows.
  `CREATE INDEX audit_kind ON audit (kind, seq);`,
  // The app filters the audit log and the request list by operation and by key.
  `CREATE INDEX audit_op ON audit (op, seq);
   CREATE INDEX audit_key ON audit (key_id, seq);
   CREATE INDEX requests_key ON requests (key_id);`,
  // What a finished run left in results/<id>.log, for its signed result (NULL: it had no log).
  `ALTER TABLE requests ADD COLUMN log_bytes INTEGER;
   ALTER TABLE requests ADD COLUMN log_sha256 TEXT;`,
  `ALTER TABLE requests ADD COLUMN plan_id TEXT;
   ALTER TABLE requests ADD COLUMN limits_json TEXT;
   ALTER TABLE requests ADD COLUMN steps_json TEXT;
   ALTER TABLE requests ADD COLUMN orphaned INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE requests ADD COLUMN run_marker TEXT;
   ALTER TABLE requests ADD COLUMN run_since INTEGER;
   ALTER TABLE requests ADD COLUMN reconcile_json TEXT;`,
  // Several spools per home: each request, key and audit entry belongs to one (an earlier single
  // spool is 'default'). An audit entry of no spool in particular (the daemon's start) has NULL.
  `ALTER TABLE requests ADD COLUMN spool TEXT NOT NULL DEFAULT 'default';
   ALTER TABLE keys ADD COLUMN spool TEXT NOT NULL DEFAULT 'default';
   ALTER TABLE audit ADD COLUMN spool TEXT;
   UPDATE audit SET spool = 'default' WHERE request_id IS NOT NULL OR key_id IS NOT NULL;
   CREATE INDEX audit_spool ON audit (spool, seq);
   CREATE INDEX requests_spool ON requests (spool);
   UPDATE meta SET k = 'spool_problem:default' WHERE k = 'spool_problem';`,
  // The full-text index is written in batches (AuditLog.indexPending) instead of at each entry: it
  // was a quarter of a request's ledger CPU. It holds the entries up to audit_fts_through's seq; one
  // whose seq is at most that (a seq used again once the newest entries were removed) is indexed at
  // once, and only an indexed entry's removal is told to the index (FTS5 needs what it indexed).
  `CREATE TABLE audit_fts_through (seq INTEGER NOT NULL);
   INSERT INTO audit_fts_through SELECT COALESCE(MAX(seq), 0) FROM audit;
   DROP TRIGGER audit_ai;
   DROP TRIGGER audit_ad;
   CREATE TRIGGER audit_ai AFTER INSERT ON audit WHEN new.seq <= (SELECT seq FROM audit_fts_through) BEGIN
     INSERT INTO audit_fts (rowid, kind, request_id, key_id, op, message, details)
     VALUES (new.seq, new.kind, new.request_id, new.key_id, new.op, new.message, new.details);
   END;
   CREATE TRIGGER audit_ad AFTER DELETE ON audit WHEN old.seq <= (SELECT seq FROM audit_fts_through) BEGIN
     INSERT INTO audit_fts (audit_fts, rowid, kind, request_id, key_id, op, message, details)
     VALUES ('delete', old.seq, old.kind, old.request_id, old.key_id, old.op, old.message, old.details);
   END;`,
  // A grant's rule per argument (JSON, policy/grantRules.ts). NULL on a grant made before: it keeps
  // covering any arguments until it expires (a day at most).
  `ALTER TABLE grants ADD COLUMN args_json TEXT;`,
  // A request id binds within its spool: another sandbox's ids neither conflict with its own nor tell
  // it anything. `wire_id` is the id the sandbox gave (every earlier row's `id`); `id` stays the host's
  // handle for the request (Requests.handleFor).
  `ALTER TABLE requests ADD COLUMN wire_id TEXT NOT NULL DEFAULT '';
   UPDATE requests SET wire_id = id;
   CREATE UNIQUE INDEX requests_wire ON requests (spool, wire_id);`,
  // Who approved a request, typed (ledger/approvedBy.ts): a person, a grant or a plan, each in its own
  // column, read by whatever needs it. `decided_by` was all three as text ("grant <id>", "plan <id>",
  // or the actor); it is parsed this once. A denied request was decided, never approved.
  `ALTER TABLE requests ADD COLUMN approved_by_actor TEXT;
   ALTER TABLE requests ADD COLUMN approved_by_grant TEXT;
   ALTER TABLE requests ADD COLUMN approved_by_plan TEXT;
   UPDATE requests SET
     approved_by_grant = CASE WHEN substr(decided_by, 1, 6) = 'grant ' THEN substr(decided_by, 7) END,
     approved_by_plan = CASE WHEN substr(decided_by, 1, 5) = 'plan ' THEN substr(decided_by, 6) END,
     approved_by_actor = CASE WHEN substr(decided_by, 1, 6) <> 'grant ' AND substr(decided_by, 1, 5) <> 'plan ' THEN decided_by END
   WHERE decided_by IS NOT NULL AND state <> 'denied';`,
  // 1 while an uncertain request waits for the daemon's reconcile check (its result says so, and the
  // clients keep waiting): an interim "uncertain" is not the outcome.
  `ALTER TABLE requests ADD COLUMN reconcile_pending INTEGER NOT NULL DEFAULT 0;`,
];

/** Each connection's page cache (KiB): SQLite's own default. better-sqlite3 builds with 16 MiB, which a
 *  daemon's first sweep over a large history fills and then holds while it idles; the pages a
 *  request needs are few, and the rest are in the OS's cache (a read, not a disk access). */
const CACHE_KIB = 2000;

export function openLedger(file: string): Db {
  const isNew = !existsSync(file);
  const db = new Database(file, { timeout: 10_000 });
  if (isNew) chmodSync(file, 0o600); // holds key secrets: never readable by others
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma(`cache_size = -${CACHE_KIB}`);
  // SQLite's temporary tables and statement journals in memory: on disk, each was a file made and
  // removed in /var/tmp (two in ten requests of a burst did so).
  db.pragma('temp_store = MEMORY');
  migrate(db);
  reuseStatements(db);
  return db;
}

/** More distinct statements than the code has are not kept (SQL built from many filters, say). */
const MAX_KEPT_STATEMENTS = 256;

/**
 * Each statement is compiled once per connection, then reused: the idle daemon runs the same few
 * queries every second, and compiling them was most of what it spent. Safe as no statement here is
 * iterated (a statement is busy while an iterator is open) or switched to pluck/raw/expand.
 */
function reuseStatements(db: Db): void {
  const compile = db.prepare.bind(db);
  const kept = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let stmt = kept.get(sql);
    if (!stmt) {
      stmt = compile(sql);
      if (kept.size < MAX_KEPT_STATEMENTS) kept.set(sql, stmt);
    }
    return stmt;
  }) as Db['prepare'];
}

/**
 * Runs `fn` as one commit without its own fsync (synchronous=NORMAL for it): for what only a power cut
 * could lose, where that loss is harmless (the next synced commit makes it durable with its own, and
 * a daemon's crash loses nothing that was written). Inside a transaction (a group commit) it is part
 * of that one's commit: SQLite cannot change the safety level there.
 */
export function commitUnsynced<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return db.transaction(fn)();
  db.prepare('PRAGMA synchronous = NORMAL').run();
  try {
    return db.transaction(fn)();
  } finally {
    db.prepare('PRAGMA synchronous = FULL').run();
  }
}

/** Each connection's writes waiting for the end of this turn of the event loop (commitSoon). */
const soon = new WeakMap<Db, { work: () => void; then?: () => void }[]>();

/**
 * Runs `work` in one commit without its own fsync (as commitUnsynced) with the others given in this
 * turn of the event loop, then `then`: for notes whose loss leaves nothing worse than the crash that
 * lost them (a result marked written is written again; a run without its pid is uncertain, as it
 * would be with a crash just before), so that a burst makes one commit for all of them, not one each.
 * A step that throws undoes the others: they are all of that kind.
 */
export function commitSoon(db: Db, work: () => void, then?: () => void): void {
  let list = soon.get(db);
  if (!list) {
    soon.set(db, (list = []));
    setImmediate(() => {
      try {
        flushSoon(db);
      } catch (e) {
        // Nothing of it is needed for safety (commitSoon): a full disk or a long lock must not stop the host.
        log.warn(`could not record ${list!.length} note(s) in the ledger: ${(e as Error).message}`);
      }
    });
  }
  list.push(then ? { work, then } : { work });
}

/** Commits what commitSoon() holds for `db` now (before the ledger is closed). */
export function flushSoon(db: Db): void {
  const list = soon.get(db);
  if (!list) return;
  soon.delete(db);
  if (!db.open) return; // closed meanwhile: what it held is redone (the next start writes the results again)
  commitUnsynced(db, () => list.forEach((w) => w.work()));
  for (const w of list) w.then?.();
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`the ledger was written by a newer Dumbwaiter (schema ${current}); upgrade this one`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}
