// When the daemon runs retention (retention.ts), and how a pass is recorded: every ten minutes, and once
// a moment after the start, over every spool served and the ledger.
import type { Db } from '../ledger/db';
import type { Requests } from '../ledger/requests';
import type { AuditLog } from '../ledger/audit';
import type { Settings } from '../settings';
import { reapLedger, reapedText, type ReapReport } from '../retention';
import { scopedLogger } from '../log';
import type { SpoolServer } from '../spool/server';

const log = scopedLogger('daemon');
const REAP_INTERVAL_MS = 10 * 60_000;
const START_REAP_DELAY_MS = 5000;

export interface RetentionDeps {
  db: Db;
  requests: Requests;
  audit: AuditLog;
  spools: () => Iterable<SpoolServer>;
  settings: () => Settings;
  stopping: () => boolean;
  safely: (name: string, fn: () => void) => void;
}

export class RetentionSchedule {
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly d: RetentionDeps) {}

  start(): void {
    this.timers.push(setInterval(() => this.d.safely('retention', () => this.pass()), REAP_INTERVAL_MS));
    // Retention walks the whole spool (a second or two over 100,000 results): a moment after the start,
    // so that it never delays the requests waiting for it, nor the start's sweep.
    this.timers.push(setTimeout(() => !this.d.stopping() && this.d.safely('retention', () => this.pass()), START_REAP_DELAY_MS));
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
  }

  /** One pass of retention over every spool and the ledger, recorded as one entry: the counts summed,
   *  and which spools they came from. */
  private pass(): void {
    const total: Record<string, number> = {};
    const from: string[] = [];
    const add = (r: Partial<ReapReport>) => Object.entries(r).forEach(([k, n]) => (total[k] = (total[k] ?? 0) + n));
    for (const s of this.d.spools()) {
      this.d.safely(`retention of spool ${s.name}`, () => {
        const r = s.reap();
        if (r && reapedText(r)) from.push(s.name);
        if (r) add(r);
      });
    }
    add(reapLedger({ db: this.d.db, requests: this.d.requests, audit: this.d.audit }, this.d.settings()));
    const what = reapedText(total);
    if (!what) return;
    const where = from.length ? ` (from spool${from.length === 1 ? '' : 's'} ${from.join(', ')})` : '';
    log.info(`retention: removed ${what}${where}`);
    this.d.audit.record({ kind: 'reaped', message: `retention removed ${what}${where}`, details: total });
  }
}
