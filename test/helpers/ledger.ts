// A real ledger (SQLite file in a temporary folder) with the stores the daemon builds on it, and a way
// to put a request in any state, for unit tests of what acts on requests. States are written the one
// way the product writes them, through the lifecycle: a request in a state no request enters in is
// entered and moved there along the shortest legal path (without audit entries).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openLedger, type Db } from '../../main/core/ledger/db';
import { AuditLog } from '../../main/core/ledger/audit';
import { Grants } from '../../main/core/ledger/grants';
import { Requests, type NewRequest, type RequestPatch, type RequestRow } from '../../main/core/ledger/requests';
import { KeyStore } from '../../main/core/keys/keyStore';
import { Decisions } from '../../main/core/decisions';
import { ENTRY_STATES, Lifecycle, TRANSITIONS, type EntryState } from '../../main/core/lifecycle';
import type { ApprovalInfo, RequestState } from '../../shared/protocol/types';

/** The states the lifecycle takes a new request through to reach `state`: an entry state, then moves. */
export function pathTo(state: RequestState): [EntryState, ...RequestState[]] {
  const ways: [EntryState, ...RequestState[]][] = ENTRY_STATES.map((s) => [s]);
  for (let way = ways.shift(); way; way = ways.shift()) {
    const last = way[way.length - 1]!;
    if (last === state) return way;
    for (const next of TRANSITIONS[last] as readonly RequestState[]) if (!way.includes(next)) ways.push([...way, next]);
  }
  throw new Error(`the lifecycle has no way to ${state}`);
}

/** The stores on one ledger connection, and requests put in any state through its lifecycle. */
export class LedgerParts {
  readonly requests: Requests;
  readonly audit: AuditLog;
  readonly grants: Grants;
  readonly keys: KeyStore;
  /** Result files are not written here: tests of the spool build a ResultWriter of their own. */
  readonly lifecycle: Lifecycle;
  readonly decisions: Decisions;

  constructor(readonly db: Db) {
    this.requests = new Requests(db);
    this.audit = new AuditLog(db);
    this.grants = new Grants(db);
    this.keys = new KeyStore(db);
    this.lifecycle = new Lifecycle(db, this.requests, this.audit, () => {});
    this.decisions = new Decisions(this.requests, this.lifecycle, this.audit, this.grants);
  }

  /** Records `r` in its state, as the lifecycle would have left it there (no audit entries). */
  plant(r: NewRequest): RequestRow {
    const [entry, ...moves] = pathTo(r.state);
    let row = this.lifecycle.enter({ ...r, state: entry }, []);
    for (const to of moves) row = this.lifecycle.move(row, to, {}, [])!;
    return row;
  }

  /** Moves request `id` to `to` (or changes it where it is) with `patch`, through the lifecycle. */
  move(id: string, to: RequestState, patch: RequestPatch = {}): RequestRow {
    const row = this.requests.get(id);
    if (!row) throw new Error(`no request ${id}`);
    const moved = this.lifecycle.move(row, to, patch, []);
    if (!moved) throw new Error(`${id} moved on meanwhile`);
    return moved;
  }
}

export class TestLedger extends LedgerParts {
  readonly dir: string;
  readonly file: string;

  constructor() {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-ledger-'));
    const file = path.join(dir, 'ledger.sqlite');
    super(openLedger(file));
    this.dir = dir;
    this.file = file;
  }

  /** A request as intake would record it (queued unless `fields` say otherwise). */
  newRequest(id: string, fields: Partial<NewRequest> = {}): NewRequest {
    return {
      id,
      key_id: 'k_test',
      op: 'deploy',
      args_json: '{}',
      binding_hash: `hash-${id}`,
      mac: `mac-${id}`,
      intent: null,
      created_at: new Date().toISOString(),
      expires_at: null,
      state: 'queued',
      plan: null,
      spool: 'default',
      ...fields,
    };
  }

  /** Records a request as intake (and the moves since) would have left it, in any state. */
  add(id: string, fields: Partial<NewRequest> = {}): RequestRow {
    return this.plant(this.newRequest(id, fields));
  }

  /** What a request waiting for a human carries; `ceiling` when a spend ceiling is why. */
  approval(keyId: string, ceiling: string | null = null): ApprovalInfo {
    const now = new Date();
    return {
      operation: 'deploy',
      argv: ['deploy'],
      cwd: '/',
      key_id: keyId,
      key_name: 'test',
      intent: null,
      requested_at: now.toISOString(),
      timeout_at: new Date(now.getTime() + 3600_000).toISOString(),
      ceiling,
    };
  }

  close(): void {
    this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
