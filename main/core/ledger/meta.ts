// Small host-wide flags kept in the ledger, so the command line can set them while a daemon runs.
import type { Db } from './db';
import type { ProbeReport } from '../../../shared/protocol/probe';
import type { AllowlistStatus } from '../daemon/allowlistSource';

export class HostFlags {
  constructor(
    private readonly db: Db,
    /** Told after each write (the daemon tells the app's status feed). */
    private readonly written: () => void = () => {},
  ) {}

  get paused(): boolean {
    return (this.db.prepare("SELECT v FROM meta WHERE k = 'paused'").get() as { v: string } | undefined)?.v === '1';
  }

  /** Returns false when it already was in that state. */
  setPaused(paused: boolean): boolean {
    if (this.paused === paused) return false;
    this.db.prepare("INSERT INTO meta (k, v) VALUES ('paused', ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v").run(paused ? '1' : '0');
    this.written();
    return true;
  }

  private get(k: string): string | null {
    return (this.db.prepare('SELECT v FROM meta WHERE k = ?').get(k) as { v: string } | undefined)?.v || null;
  }

  /** `tell`: false for what the status does not show (nobody needs a pass for it). */
  private set(k: string, v: string | null, tell = true): void {
    this.db.prepare('INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v').run(k, v ?? '');
    if (tell) this.written();
  }

  /** Why the daemon stopped touching a spool (unsafe, unreadable...), or null while it is fine. Kept
   *  in the ledger so that `status` and the app can say it when host.json cannot be written. */
  spoolProblem(spool: string): string | null {
    return this.get(`spool_problem:${spool}`);
  }

  setSpoolProblem(spool: string, problem: string | null): void {
    this.set(`spool_problem:${spool}`, problem);
  }

  /** The last probe of a spool's mount (spool/probe.ts), as the daemon or a `spools check` made it. */
  probe(spool: string): ProbeReport | null {
    const v = this.get(`spool_probe:${spool}`);
    return v ? (JSON.parse(v) as ProbeReport) : null;
  }

  setProbe(spool: string, report: ProbeReport | null): void {
    this.set(`spool_probe:${spool}`, report ? JSON.stringify(report) : null);
  }

  /** What the sweeps over a spool's result files proved (spool/resultsHorizon.ts), as its text; not
   *  part of the status. */
  resultsHorizon(spool: string): string | null {
    return this.get(`results_horizon:${spool}`);
  }

  setResultsHorizon(spool: string, text: string | null): void {
    this.set(`results_horizon:${spool}`, text, false);
  }

  /** What the daemon of process `pid` serves of the allowlist (daemon/allowlistSource.ts), as it last
   *  said: null when that daemon did not say (another one's word is stale). */
  allowlist(pid: number): AllowlistStatus | null {
    const v = this.get('allowlist_served');
    const said = v ? (JSON.parse(v) as AllowlistStatus & { pid: number }) : null;
    if (said?.pid !== pid) return null;
    const { pid: _, ...status } = said;
    return status;
  }

  setAllowlist(status: AllowlistStatus): void {
    this.set('allowlist_served', JSON.stringify({ pid: process.pid, ...status }));
  }

  /** The run keeper the daemon's new runs go to (its instance: exec/keeper.ts), for the next start;
   *  '' when none gets them yet; null when no daemon has said (an earlier version's). */
  get keeper(): string | null {
    const v = this.get('keeper_instance');
    return v === 'none' ? '' : v;
  }

  setKeeper(instance: string): void {
    this.set('keeper_instance', instance || 'none', false);
  }

  /** What the ledger keeps of a spool that is removed from the home. */
  forgetSpool(spool: string): void {
    this.db.prepare('DELETE FROM meta WHERE k IN (?, ?)').run(`spool_problem:${spool}`, `spool_probe:${spool}`);
    this.written();
  }
}
