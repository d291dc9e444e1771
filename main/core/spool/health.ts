// Whether the spool's disk takes our writes. A full disk (or quota) is said once in the log and the
// audit log, shown in host.json while it lasts, and said again when writes succeed again. Nothing is
// lost meanwhile: the ledger (in the home) has every state, and unsynced results are retried.
import type { AuditLog } from '../ledger/audit';
import type { Logger } from '../log';

const SPACE_ERRORS = new Set(['ENOSPC', 'EDQUOT']);

export class SpoolHealth {
  full = false;

  constructor(
    private readonly audit: AuditLog,
    private readonly log: Logger,
  ) {}

  /** Returns true when the error was the disk being full (already reported). */
  failed(e: unknown, what: string): boolean {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    if (!SPACE_ERRORS.has(code)) return false;
    if (!this.full) {
      this.full = true;
      const msg = `the spool's disk is full (${code} while writing ${what}): requests are still recorded in the ledger, and their results are written when space returns`;
      this.log.error(msg);
      this.audit.record({ kind: 'disk_full', message: msg });
    }
    return true;
  }

  succeeded(): void {
    if (!this.full) return;
    this.full = false;
    this.log.info('the spool has space again: writing the results that were held back');
    this.audit.record({ kind: 'disk_ok', message: 'the spool has space again; held-back results are being written' });
  }
}
