// Small host-wide flags kept in the ledger, so the command line can set them while a daemon runs.
import type { Db } from './db';

export class HostFlags {
  constructor(private readonly db: Db) {}

  get paused(): boolean {
    return (this.db.prepare("SELECT v FROM meta WHERE k = 'paused'").get() as { v: string } | undefined)?.v === '1';
  }

  /** Returns false when it already was in that state. */
  setPaused(paused: boolean): boolean {
    if (this.paused === paused) return false;
    this.db.prepare("INSERT INTO meta (k, v) VALUES ('paused', ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v").run(paused ? '1' : '0');
    return true;
  }

  /** Why the daemon stopped touching the spool (unsafe, unreadable...), or null while it is fine. Kept
   *  in the ledger so that `status` and the app can say it when host.json cannot be written. */
  get spoolProblem(): string | null {
    return (this.db.prepare("SELECT v FROM meta WHERE k = 'spool_problem'").get() as { v: string } | undefined)?.v || null;
  }

  setSpoolProblem(problem: string | null): void {
    this.db.prepare("INSERT INTO meta (k, v) VALUES ('spool_problem', ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v").run(problem ?? '');
  }
}
