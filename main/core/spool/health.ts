// Whether the spool takes our writes and may be touched at all. A full disk (or quota, or one failing
// with EIO) is said once in
// the log and the audit log, shown in host.json while it lasts, and said again when writes succeed
// again. A spool the daemon must not touch (unsafe, unreadable, incomplete) is said once per distinct
// problem, and kept in the ledger for `status` and the app, which cannot rely on host.json then.
// Nothing is lost meanwhile: the ledger (in the home) has every state, and unsynced results are retried.
import type { AuditLog } from '../ledger/audit';
import type { HostFlags } from '../ledger/meta';
import type { Logger } from '../log';
import { writeFailureCode } from '../ledger/room';

export class SpoolHealth {
  full = false;
  /** Why the spool is not touched now, or null: as the ledger says, so a restart repeats nothing. */
  problem: string | null;

  constructor(
    /** The spool's name, in what is said and recorded. */
    private readonly spool: string,
    private readonly audit: AuditLog,
    private readonly log: Logger,
    private readonly flags: HostFlags,
  ) {
    this.problem = flags.spoolProblem(spool);
  }

  /** Returns true when the error was the disk being full or failing (EIO) (already reported). */
  failed(e: unknown, what: string): boolean {
    const code = writeFailureCode(e);
    if (!code) return false;
    if (!this.full) {
      this.full = true;
      const msg = `the disk of spool "${this.spool}" ${code === 'EIO' ? 'fails' : 'is full'} (${code} while writing ${what}): requests are still recorded in the ledger, and their results are written when space returns`;
      this.log.error(msg);
      this.audit.record({ kind: 'disk_full', spool: this.spool, message: msg });
    }
    return true;
  }

  succeeded(): void {
    if (!this.full) return;
    this.full = false;
    this.log.info(`spool "${this.spool}" has space again: writing the results that were held back`);
    this.audit.record({ kind: 'disk_ok', spool: this.spool, message: `spool "${this.spool}" has space again; held-back results are being written` });
  }

  /** Why the spool may not be touched (null: it may again). Says each change once. */
  setProblem(problem: string | null): void {
    if (problem === this.problem) return;
    if (problem) {
      this.log.error(`spool "${this.spool}": ${problem}; not touching it until it is fixed (other spools go on)`);
      this.audit.record({ kind: 'spool_unsafe', spool: this.spool, message: `spool "${this.spool}": ${problem}; the host does not touch it until it is fixed` });
    } else {
      this.log.info(`spool "${this.spool}" is usable again; resuming`);
      this.audit.record({ kind: 'spool_ok', spool: this.spool, message: `spool "${this.spool}" is usable again (it was: ${this.problem})` });
    }
    this.problem = problem;
    this.flags.setSpoolProblem(this.spool, problem);
  }
}
