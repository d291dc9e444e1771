// A real ledger (SQLite file in a temporary folder) with the stores the daemon builds on it, and a way
// to put a request in any state directly, for unit tests of what acts on requests.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openLedger, type Db } from '../../main/core/ledger/db';
import { AuditLog } from '../../main/core/ledger/audit';
import { Grants } from '../../main/core/ledger/grants';
import { Requests, type NewRequest, type RequestRow } from '../../main/core/ledger/requests';
import { KeyStore } from '../../main/core/keys/keyStore';
import { Decisions } from '../../main/core/decisions';
import { Lifecycle } from '../../main/core/lifecycle';
import type { ApprovalInfo } from '../../shared/protocol/types';

export class TestLedger {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'dw-ledger-'));
  readonly file = path.join(this.dir, 'ledger.sqlite');
  readonly db: Db = openLedger(this.file);
  readonly requests = new Requests(this.db);
  readonly audit = new AuditLog(this.db);
  readonly grants = new Grants(this.db);
  readonly keys = new KeyStore(this.db);
  /** Result files are not written here: tests of the spool build a ResultWriter of their own. */
  readonly lifecycle = new Lifecycle(this.db, this.requests, this.audit, () => {});
  readonly decisions = new Decisions(this.requests, this.lifecycle, this.audit, this.grants);

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

  /** Inserts a request as intake would have left it (any state). */
  add(id: string, fields: Partial<NewRequest> = {}): RequestRow {
    return this.requests.insert(this.newRequest(id, fields));
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
