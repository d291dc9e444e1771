// Queue entries refused before authentication (junk: bad names, folders, FIFOs, garbage), recorded
// cheaply enough that a flood of them cannot stall the daemon. One at a time, each cost a commit (an
// fsync), a log line and often a durable result file; a flood of 100,000 took over 20 minutes. Here a
// step's refusals share one commit, and past the first few of a pass over the queue they are counted
// instead of told one by one: in the audit log per step, in the log per pass, and result files for
// unbound ids are written for the first ones only. Nothing runs for any of them either way.
import type { AuditEntry, AuditLog } from '../ledger/audit';
import type { Logger } from '../log';
import { merged } from '../merged';
import type { ResultWriter } from '../spool/results';
import type { ResultDoc } from '../../../shared/protocol/types';

/** Refusals per pass recorded and logged one by one; the rest are counted. */
const TOLD_PER_PASS = 16;
/** Result files for unbound ids per pass (each is a durable write, about 5 ms). */
const RESULTS_PER_PASS = 64;
/** Names listed in a counted entry. */
const NAMES_SHOWN = 10;

export interface Refusal {
  entry: AuditEntry & { details: { file?: string; reason?: string; code: string } };
  line: string;
  /** The rejection to publish for an unbound id, if the budget allows. */
  result: ResultDoc | null;
}

export class Refusals {
  private told = 0;
  private results = 0;
  /** Counted in this step (recorded at flush) and in this pass (logged at endPass). */
  private counted: Refusal[] = [];
  private countedInPass = 0;
  private resultsSkipped = 0;
  private pending: AuditEntry[] = [];

  constructor(
    private readonly audit: AuditLog,
    private readonly writer: ResultWriter,
    private readonly log: Logger,
    /** The spool they came through (a refused entry may name another spool's key). */
    private readonly spool: string,
  ) {}

  add(r: Refusal): void {
    if (r.result) {
      if (this.results < RESULTS_PER_PASS) {
        this.results++;
        this.writer.writeUnbound(r.result);
      } else this.resultsSkipped++;
    }
    if (this.told < TOLD_PER_PASS) {
      this.told++;
      this.pending.push(r.entry);
      this.log.warn(r.line);
    } else {
      this.counted.push(r);
      this.countedInPass++;
    }
  }

  /** End of a step: what was refused in it, in one commit. */
  flush(): void {
    const entries = [...this.pending];
    if (this.counted.length) entries.push(this.summary(this.counted));
    this.pending = [];
    this.counted = [];
    this.audit.recordAll(entries.map((e) => merged(e, { spool: this.spool })));
  }

  /** End of a pass over the queue: one log line for what was only counted; the budgets start again. */
  endPass(): void {
    this.flush();
    if (this.countedInPass) {
      const skipped = this.resultsSkipped ? `; ${this.resultsSkipped} of them with a valid id got no result file` : '';
      this.log.warn(`${this.countedInPass} more queue entries were refused and moved out of the way${skipped} (counted in the audit log)`);
    }
    this.told = this.results = this.countedInPass = this.resultsSkipped = 0;
  }

  /** One entry for the counted refusals: by code (bad_envelope, unknown_key, bad_signature...), the
   *  code itself where they share one, and by reason (a file's type, a key's name...). */
  private summary(rs: Refusal[]): AuditEntry {
    const codes: Record<string, number> = {};
    const reasons: Record<string, number> = {};
    for (const r of rs) {
      const { code, reason = code } = r.entry.details;
      codes[code] = (codes[code] ?? 0) + 1;
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    const shared = Object.keys(codes).length === 1 ? { code: rs[0]!.entry.details.code } : {};
    const names = rs.slice(0, NAMES_SHOWN).map((r) => JSON.stringify(r.entry.details.file ?? r.entry.request_id));
    return {
      kind: 'rejected',
      message: `${rs.length} more queue entries refused (${Object.entries(reasons).map(([why, n]) => `${n} ${why}`).join('; ')}): ${names.join(', ')}${rs.length > NAMES_SHOWN ? ', ...' : ''}`,
      details: { ...shared, count: rs.length, codes, reasons },
    };
  }
}
