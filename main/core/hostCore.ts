// The host's parts for one home, built once per process and shared by every face in it: the daemon,
// the command line's host (host/) and, in the desktop app, both at once. The ledger is opened here and only
// here, and so are the request store, the audit log, the lifecycle (the one writer of a request's
// state), the decisions, the result publisher of each spool and the reconciler.
//
// A change another face must act on reaches the daemon directly when it runs in this process (the
// app), else through the home's wake file (wake.ts), which a daemon of another process watches.
import { existsSync } from 'node:fs';
import { stampOf } from './fs/stamp';
import { homePaths, type HomePaths } from './home';
import { UserError } from './errors';
import { openLedger, type Db } from './ledger/db';
import { AuditLog } from './ledger/audit';
import { Requests, type RequestRow } from './ledger/requests';
import { Grants } from './ledger/grants';
import { HostFlags } from './ledger/meta';
import { KeyStore, type SecretSealer } from './keys/keyStore';
import { Lifecycle } from './lifecycle';
import { Decisions } from './decisions';
import { readSettings, type Settings } from './settings';
import { SpoolResults } from './spool/spoolResults';
import { Reconciler } from './daemon/reconciler';
import { readHomeAllowlist } from './allowlist/homeFile';
import type { AllowlistContext } from './allowlist/roots';
import type { Allowlist } from './allowlist/types';
import { scopedLogger } from './log';
import { wakeDaemon } from './wake';

const log = scopedLogger('core');
/** How long a request is queued or running before its result says so (a file write and a ledger note
 *  fewer for one that moves on sooner: in a burst, most queued ones start within milliseconds). */
const SHOWN_AFTER_MS = 50;

/** What a daemon running in this process is told of changes (else they go through the wake file). */
export interface DaemonHook {
  /** Another face changed the ledger or the settings: look again, as at a wake. */
  wake(): void;
  /** A request's state changed (and its result was written), or a flag: what the status shows moved. */
  changed(): void;
  /** A running request was marked for cancelling: end it at once. */
  cancelRequested(): void;
  /** Runs what follows a commit, recording what it throws (a full disk, say). */
  safely(name: string, fn: () => void): void;
  /** The allowlist the daemon serves (its last good version). */
  allowlist(): Allowlist;
}

export class HostCore {
  readonly home: HomePaths;
  readonly db: Db;
  readonly keys: KeyStore;
  readonly requests: Requests;
  readonly audit: AuditLog;
  readonly grants: Grants;
  readonly flags: HostFlags;
  readonly lifecycle: Lifecycle;
  readonly decisions: Decisions;
  /** Each spool's result files: the daemon's server writes them while it serves the spool, else a pin made here. */
  readonly results: SpoolResults;
  readonly reconciler: Reconciler;
  /** The settings as last read, and the file's stamp then (see `settings`). */
  private read: { stamp: string; settings: Settings };
  private daemon: DaemonHook | null = null;

  private constructor(home: HomePaths, sealer: SecretSealer | null) {
    this.home = home;
    this.read = { stamp: stampOf(home.settings), settings: readSettings(home.settings) };
    this.db = openLedger(home.ledger);
    this.keys = new KeyStore(this.db, sealer);
    this.requests = new Requests(this.db);
    this.audit = new AuditLog(this.db);
    this.grants = new Grants(this.db);
    this.results = new SpoolResults(() => this.settings.spools, this.requests, this.keys);
    this.lifecycle = new Lifecycle(this.db, this.requests, this.audit, (row) => this.published(row), (name, fn) => this.safely(name, fn));
    this.decisions = new Decisions(this.requests, this.lifecycle, this.audit, this.grants, () => (this.daemon ? (this.daemon.cancelRequested(), this.daemon.changed()) : this.wake()));
    // A spool's problem or probe verdict, the pause: part of the status, and the daemon's to act on.
    this.flags = new HostFlags(this.db, () => (this.daemon ? this.daemon.changed() : this.wake()));
    this.reconciler = new Reconciler({
      requests: this.requests,
      audit: this.audit,
      lifecycle: this.lifecycle,
      allowlist: () => this.allowlist(),
      killGraceMs: () => this.settings.kill_grace_s * 1000,
      log: scopedLogger('reconcile'),
    });
  }

  /** The home at `homeDir`, which `init` made (else a clear error saying to run it). */
  static open(homeDir: string, sealer: SecretSealer | null = null): HostCore {
    const home = homePaths(homeDir);
    if (!existsSync(home.settings)) throw new UserError(`${home.root} is not a Dumbwaiter home yet. Run: dumbwaiter init --home '${home.root}'`);
    return new HostCore(home, sealer);
  }

  /** The settings as the file says now: the app's service lives long, and the command line or the
   *  app's other calls change them (a spool added or moved). An invalid file keeps the last good read. */
  get settings(): Settings {
    const stamp = stampOf(this.home.settings);
    if (stamp !== this.read.stamp) {
      try {
        this.read = { stamp, settings: readSettings(this.home.settings) };
      } catch {
        /* said by the daemon (settings_invalid) and by config get */
      }
    }
    return this.read.settings;
  }

  /** The allowlist a run is checked against: the daemon's when one runs in this process, else the file's now. */
  allowlist(): Allowlist {
    if (this.daemon) return this.daemon.allowlist();
    const file = readHomeAllowlist(this.home.allowlist, this.allowlistContext);
    if (!file.ok) throw new UserError(`the allowlist ${this.home.allowlist} cannot be used now: ${file.reason}`);
    return file.allowlist;
  }

  /** Where this home's spools and folder are, for the allowlist's rules on roots (allowlist/roots.ts). */
  get allowlistContext(): AllowlistContext {
    return { spools: this.settings.spools, home: this.home.root };
  }

  /** The daemon of this process, told of changes from now on; returns its detach. */
  attach(daemon: DaemonHook): () => void {
    this.daemon = daemon;
    return () => {
      if (this.daemon === daemon) this.daemon = null;
    };
  }

  /** Tells the daemon that the ledger or the settings changed (after the commit): directly when it runs
   *  in this process, else through the wake file. */
  wake(): void {
    if (this.daemon) this.daemon.wake();
    else wakeDaemon(this.home.wake);
  }

  private safely(name: string, fn: () => void): void {
    if (this.daemon) return this.daemon.safely(name, fn);
    try {
      fn();
    } catch (e) {
      log.error(`while handling ${JSON.stringify(name)}: ${(e as Error).message}`);
    }
  }

  /** After a request's change: its result file, then the status. */
  private published(row: RequestRow): void {
    // Without a daemon here (the command line) at once: this process may end before any timer.
    if (!this.daemon || (row.state !== 'running' && row.state !== 'queued')) this.results.publish(row);
    else {
      // Shown as queued or running once it has been so a moment: a request that moves on sooner (most
      // quick runs, and what waits in a burst) has its next result as its first file, written by whoever
      // moved it; the timer of that state shows it if it stays.
      setTimeout(() => {
        if (!this.db.open) return; // closed: the next start writes what is not written
        this.safely(`result of ${row.id}`, () => {
          const now = this.requests.get(row.id);
          if (now?.state === row.state && !this.requests.isSynced(now)) this.results.publish(now);
        });
      }, SHOWN_AFTER_MS).unref();
    }
    if (this.daemon) this.daemon.changed();
    else this.wake();
  }

  close(): void {
    this.requests.flushSynced();
    this.db.close();
    this.results.close();
  }
}
