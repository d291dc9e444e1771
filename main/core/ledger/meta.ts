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
}
