// The service API: what the command line (and later the desktop app, over IPC) can ask of the host.
// Each call works whether or not a daemon runs; the daemon picks up ledger changes within a tick.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { homePaths, type HomePaths } from './home';
import { UserError } from './errors';
import { openLedger, type Db } from './ledger/db';
import { AuditLog, type AuditQuery, type AuditRow } from './ledger/audit';
import { Requests, type RequestRow } from './ledger/requests';
import { KeyStore, keyFileOf, type KeyInfo, type KeyWithSecret, type Scope } from './keys/keyStore';
import { readSettings, type Settings } from './settings';
import { spoolPaths } from './spool/layout';
import { ResultWriter } from './spool/results';
import { parseAllowlist } from './allowlist/load';
import { isLocked, readHolder, type LockHolder } from './daemon/lock';
import { writeJsonAtomic } from './fs/atomicWrite';
import type { HostStatusDoc, RequestState } from '../../shared/protocol/types';

export interface StatusReport {
  home: string;
  spool: string | null;
  daemon: { running: boolean; holder: LockHolder | null; heartbeat_at: string | null };
  allowlist: { ok: boolean; operations: string[]; error: string | null };
  requests: Record<RequestState, number>;
  running: Pick<RequestRow, 'id' | 'op' | 'key_id' | 'started_at' | 'pid'>[];
  uncertain: Pick<RequestRow, 'id' | 'op' | 'key_id' | 'started_at' | 'error_message'>[];
  keys: { active: number; revoked: number };
}

export class HostService {
  readonly home: HomePaths;
  readonly settings: Settings;
  readonly spoolDir: string | null;
  private readonly db: Db;
  readonly keys: KeyStore;
  readonly requests: Requests;
  readonly audit: AuditLog;

  constructor(homeDir: string, spoolFlag?: string) {
    this.home = homePaths(homeDir);
    if (!existsSync(this.home.settings)) {
      throw new UserError(`${this.home.root} is not a Dumbwaiter home yet. Run: dumbwaiter init --home '${this.home.root}'`);
    }
    this.settings = readSettings(this.home.settings);
    const spool = spoolFlag ?? this.settings.spool;
    this.spoolDir = spool ? path.resolve(spool) : null;
    this.db = openLedger(this.home.ledger);
    this.keys = new KeyStore(this.db);
    this.requests = new Requests(this.db);
    this.audit = new AuditLog(this.db);
  }

  close(): void {
    this.db.close();
  }

  createKey(name: string, scope: Scope, ops: string[] | null, actor: string): KeyWithSecret {
    const key = this.keys.create(name, scope, ops);
    this.audit.record({ kind: 'key_created', actor, key_id: key.key_id, message: `key ${key.key_id} "${name}" created (${scope}${ops ? `, ops ${ops.join(',')}` : ''})` });
    return key;
  }

  revokeKey(keyId: string, actor: string): boolean {
    const changed = this.keys.revoke(keyId);
    if (changed) this.audit.record({ kind: 'key_revoked', actor, key_id: keyId, message: `key ${keyId} revoked` });
    return changed;
  }

  rotateKey(keyId: string, actor: string): KeyWithSecret {
    const fresh = this.keys.rotate(keyId);
    this.audit.record({ kind: 'key_rotated', actor, key_id: keyId, message: `key ${keyId} rotated: replaced by ${fresh.key_id} and revoked` });
    return fresh;
  }

  listKeys(): KeyInfo[] {
    return this.keys.list();
  }

  /** Writes a key file for the sandbox, readable by its owner only. */
  writeKeyFile(key: KeyWithSecret, file: string): void {
    writeJsonAtomic(file, keyFileOf(key), 0o600);
  }

  /** A human settles an `uncertain` run. */
  resolve(id: string, outcome: 'succeeded' | 'failed', note: string, actor: string): RequestRow {
    const row = this.requests.get(id);
    if (!row) throw new UserError(`no request ${id} in the ledger`);
    if (row.state !== 'uncertain') throw new UserError(`request ${id} is ${row.state}, not uncertain: nothing to resolve`);
    const next = this.requests.transition(id, ['uncertain'], { state: outcome, resolved_by: 'human', note });
    if (!next) throw new UserError(`request ${id} changed while resolving; look again`);
    this.audit.record({ kind: 'resolved', actor, request_id: id, key_id: row.key_id, op: row.op, message: `uncertain run resolved as ${outcome} by ${actor}${note ? `: ${note}` : ''}` });
    // Publish now when we can; a running daemon would also do it within a tick.
    if (this.spoolDir) new ResultWriter(spoolPaths(this.spoolDir).results, this.requests).publish(next);
    return next;
  }

  searchAudit(q: AuditQuery): AuditRow[] {
    return this.audit.search(q);
  }

  status(): StatusReport {
    const counts = this.requests.countByState() as Record<RequestState, number>;
    let allowlist: StatusReport['allowlist'];
    try {
      const a = parseAllowlist(readFileSync(this.home.allowlist, 'utf8'), this.home.allowlist);
      allowlist = { ok: true, operations: [...a.operations.keys()], error: null };
    } catch (e) {
      allowlist = { ok: false, operations: [], error: (e as Error).message };
    }
    let heartbeat: string | null = null;
    if (this.spoolDir) {
      try {
        heartbeat = (JSON.parse(readFileSync(spoolPaths(this.spoolDir).hostJson, 'utf8')) as HostStatusDoc).heartbeat_at;
      } catch {
        /* no heartbeat yet */
      }
    }
    const running = isLocked(this.home.lock);
    const keys = this.keys.list();
    return {
      home: this.home.root,
      spool: this.spoolDir,
      daemon: { running, holder: running ? readHolder(this.home.lockInfo) : null, heartbeat_at: heartbeat },
      allowlist,
      requests: counts,
      running: this.requests.inState('running').map(({ id, op, key_id, started_at, pid }) => ({ id, op, key_id, started_at, pid })),
      uncertain: this.requests.inState('uncertain').map(({ id, op, key_id, started_at, error_message }) => ({ id, op, key_id, started_at, error_message })),
      keys: { active: keys.filter((k) => !k.revoked_at).length, revoked: keys.filter((k) => k.revoked_at).length },
    };
  }
}
