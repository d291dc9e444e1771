// settings.json read again when it changed (a wake, the rescan, a file event): a new version is handed
// to the daemon to apply; one written in place (by hand) that reads half-written is refused only once it
// has stopped changing (fs/settle.ts), and until then the current settings are kept.
import { stampOf } from '../fs/stamp';
import { Settle, SETTLE_MS } from '../fs/settle';
import type { AuditLog } from '../ledger/audit';
import { readSettings, type Settings } from '../settings';
import { scopedLogger } from '../log';

const log = scopedLogger('daemon');

export class SettingsReload {
  /** The file's stamp when last read (or refused). */
  private stamp = '';
  /** Waits out a write of settings.json in place that did not read. */
  private readonly settle: Settle;

  constructor(
    private readonly file: string,
    private readonly audit: AuditLog,
    /** Applies a version that read whole. */
    private readonly apply: (next: Settings) => void,
    safely: (name: string, fn: () => void) => void,
  ) {
    this.settle = new Settle(file, () => safely('settings', () => this.reload(true)));
  }

  /** The version read at the start is the current one: only a change after this is read again. */
  readNow(): void {
    this.stamp = stampOf(this.file);
  }

  /** `settled`: called again once a file that did not read has stopped changing. */
  reload(settled = false): void {
    const stamp = stampOf(this.file);
    if (stamp === this.stamp && !settled) return;
    this.stamp = stamp;
    let next: Settings;
    try {
      next = readSettings(this.file);
      this.settle.stop();
    } catch (e) {
      // Written in place (by hand), it reads half-written: refused only once it has stopped changing.
      if (!settled) {
        if (!this.settle.waiting) log.info(`${this.file} does not read whole yet: looked at again once it has not changed for ${SETTLE_MS} ms`);
        return this.settle.start();
      }
      const msg = `${(e as Error).message}\nkeeping the current settings`;
      log.error(msg);
      this.audit.record({ kind: 'settings_invalid', message: msg });
      return;
    }
    this.apply(next);
  }

  stop(): void {
    this.settle.stop();
  }
}
