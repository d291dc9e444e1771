// The daemon's current allowlist: reloaded when the file changes, or when the home's spools do (a root
// may now overlap a new spool, a `spools:` name may be gone); an invalid edit keeps the last good
// version (also across restarts, via a copy in the home) and says so in the log and the audit log.
// The last good version is kept only while it still loads with the spools as they are: one whose root
// now holds a new spool's folder would hand that spool's files to another sandbox, so then nothing is
// offered, as after a restart. An operation whose folder a link now leads into a spool or the home (a
// sandbox may plant one any time) is disabled alone, with its reason (allowlist/roots.ts
// linkedRootProblem): looked at again at every tick, it comes back once its folders are safe.
// A file replaced whole (a new inode: the app, the command line, an editor that renames) is read at
// once; one written in place (truncate, then write) only once it has stopped changing (fs/settle.ts):
// half-written, it would be refused, or worse, a valid prefix of it served (an operation without the
// `spools:` or `approval:` lines that came after). What is served, since when, and why the file is
// refused, is published for `status` and the app (the ledger's meta: HostFlags.allowlist).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { inodeOf, stampOf } from '../fs/stamp';
import { Settle, SETTLE_MS } from '../fs/settle';
import { parseAllowlist, AllowlistError } from '../allowlist/load';
import { disabledOf, type Allowlist } from '../allowlist/types';
import { NO_CONTEXT, operationWorldProblem, realForm, type AllowlistContext } from '../allowlist/roots';
import { writeFileAtomic } from '../fs/atomicWrite';
import { sha256Hex } from '../../../shared/protocol/canonicalJson';
import type { AuditLog } from '../ledger/audit';
import type { Logger } from '../log';
import { nowIso } from '../time';

/** What the daemon serves, as `status` and the app show it. */
export interface AllowlistStatus {
  /** Whether the file on disk is what is served; else `error` says why it is refused. */
  ok: boolean;
  error: string | null;
  /** Where the version served comes from: the file as it is, the last good version (the file is
   *  refused, or was at the start), or nowhere (no operation is offered). */
  serving: 'file' | 'last_good' | 'none';
  /** When the version served was loaded from the file (by this daemon, or by one before it for the
   *  last good copy read at a start). */
  since: string | null;
  /** The operations served, who sees them (null: every spool), and whether they declare a reconcile. */
  operations: { name: string; spools: string[] | null; reconcilable: boolean }[];
  /** The operations in use that cannot run as the disk is now, and why. */
  disabled: { name: string; reason: string }[];
}

const EMPTY: Allowlist = { version: 1, operations: new Map(), disabled: new Map(), context: NO_CONTEXT };

export class AllowlistSource {
  private current: Allowlist = EMPTY;
  /** The text of `current` (null: nothing loaded). */
  private currentText: string | null = null;
  private lastHash: string | null = null;
  /** The text's hash, the context it was checked against and what the links made of its folders
   *  (keyOf): any of them changing means checking again. */
  private lastKey: string | null = null;
  private lastStamp = '';
  /** When `current` was loaded from the file. */
  private since: string | null = null;
  private ok = false;
  private error: string | null = 'not loaded yet';
  /** Waits out a write in place before the file is read. */
  private readonly settle: Settle;

  constructor(
    private readonly file: string,
    private readonly lastGoodFile: string,
    /** Where the spools and the home are: roots that overlap them are refused (allowlist/roots.ts).
     *  A function when the spools can change while the daemon runs: asked at every poll. */
    private readonly ctx: AllowlistContext | (() => AllowlistContext),
    private readonly audit: AuditLog,
    private readonly log: Logger,
    private readonly onChange: (a: Allowlist) => void,
    /** Told each new status (published for `status` and the app). */
    private readonly onStatus: (s: AllowlistStatus) => void = () => {},
  ) {
    this.settle = new Settle(file, () => this.reload(false));
  }

  get status(): AllowlistStatus {
    const serving = this.ok ? 'file' : this.currentText === null ? 'none' : 'last_good';
    return {
      ok: this.ok,
      error: this.error,
      serving,
      since: serving === 'none' ? null : this.since,
      operations: [...this.current.operations.values()].map((op) => ({ name: op.name, spools: op.spools, reconcilable: op.reconcile !== null })),
      disabled: disabledOf(this.current),
    };
  }

  private publish(): void {
    this.onStatus(this.status);
  }

  /** Stops the wait for a file being written. */
  close(): void {
    this.settle.stop();
  }

  get(): Allowlist {
    return this.current;
  }

  private context(): AllowlistContext {
    return typeof this.ctx === 'function' ? this.ctx() : this.ctx;
  }

  /** First load at start: the file, else the last good copy, else nothing allowed. */
  loadInitial(): void {
    if (this.reload(true)) return;
    if (existsSync(this.lastGoodFile)) {
      try {
        const ctx = this.context();
        const text = readFileSync(this.lastGoodFile, 'utf8');
        this.use(parseAllowlist(text, this.lastGoodFile, ctx), text, statSync(this.lastGoodFile).mtime.toISOString());
        if (this.lastHash !== null) this.lastKey = this.keyOf(this.lastHash, ctx); // the failure is reported already
        this.log.warn(`using the last good allowlist (${this.current.operations.size} operations) until ${this.file} is fixed`);
        this.onChange(this.current);
        this.publish();
        return;
      } catch {
        /* fall through to the empty allowlist */
      }
    }
    this.log.error('no valid allowlist: every request will be rejected with unknown_op until it is fixed');
    this.onChange(this.current);
    this.publish();
  }

  /** Cheap check on every tick and file event (events are hints only): the file is read again when
   *  it changed (at once when replaced whole, else once it settles), and checked again when the
   *  spools or the disk's links changed. */
  poll(): void {
    const stamp = stampOf(this.file);
    if (stamp !== this.lastStamp) {
      const before = inodeOf(this.lastStamp);
      const replaced = before !== null && inodeOf(stamp) !== null && inodeOf(stamp) !== before;
      if (replaced && !this.settle.waiting) return void this.reload(false);
      if (!this.settle.waiting) this.log.info(`${this.file} is being written in place: read once it has not changed for ${SETTLE_MS} ms`);
      this.settle.start();
    }
    if (this.lastHash === null || this.keyOf(this.lastHash) === this.lastKey) return;
    if (!this.settle.waiting) return void this.reload(false);
    // The spools or the links changed while the file is being written: the version served is
    // checked against them now, not once the file settles.
    const kept = this.keepLastGood();
    if (this.currentText === null) [this.ok, this.error] = [false, kept];
    this.lastKey = this.keyOf(this.lastHash);
    this.log.warn(`the spools or the disk changed while ${this.file} is being written: ${kept}`);
    this.publish();
  }

  /** The text's hash, the context, and what the disk's links make of the folders in use now: an
   *  operation of `current` led into a spool or the home since, or a disabled one's folders leading
   *  elsewhere (perhaps fixed). Not where a safe folder leads: that is looked at only on a reload. */
  private keyOf(hash: string, ctx = this.context()): string {
    const world = [[...this.current.operations.values()].map((op) => operationWorldProblem(op, ctx)), [...this.current.disabled.values()].map((d) => d.folders.map(realForm))];
    return `${hash} ${JSON.stringify(ctx)} ${JSON.stringify(world)}`;
  }

  /** Returns true when the file on disk is valid (and now in use). */
  reload(initial: boolean): boolean {
    let text: string;
    this.lastStamp = stampOf(this.file);
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (e) {
      return this.fail(`cannot read ${this.file}: ${(e as Error).message}`, 'missing', this.keyOf('missing'), initial);
    }
    // Written to while it was read: read again once it settles.
    if (stampOf(this.file) !== this.lastStamp) {
      this.settle.start();
      return false;
    }
    const hash = sha256Hex(text);
    const ctx = this.context();
    const key = this.keyOf(hash, ctx);
    if (key === this.lastKey) return this.ok;
    try {
      const next = parseAllowlist(text, this.file, ctx);
      this.use(next, text, nowIso());
      this.lastHash = hash;
      this.lastKey = this.keyOf(hash, ctx);
      this.ok = true;
      this.error = null;
      writeFileAtomic(this.lastGoodFile, text);
      const off = disabledOf(next);
      const disabledText = off.map((d) => `\n${d.name} is disabled: ${d.reason}`).join('');
      this.audit.record({
        kind: 'allowlist_loaded',
        message: `allowlist ${initial ? 'loaded' : 'reloaded'}: ${next.operations.size} operations (${[...next.operations.keys()].join(', ') || 'none'})${off.length ? `; ${off.length} disabled (${off.map((d) => d.name).join(', ')})` : ''}${disabledText}`,
        details: { hash },
      });
      this.log.info(`allowlist ${initial ? 'loaded' : 'reloaded'}: ${next.operations.size} operations`);
      if (off.length) this.log.warn(disabledText.slice(1));
      this.onChange(next);
      this.publish();
      return true;
    } catch (e) {
      if (!(e instanceof AllowlistError)) throw e;
      return this.fail(e.message, hash, key, initial);
    }
  }

  /** `since`: when this text was loaded from the file (kept when the same text is checked again). */
  private use(a: Allowlist, text: string, since: string | null = this.since): void {
    this.current = a;
    this.currentText = text;
    this.since = since;
  }

  private fail(message: string, hash: string, key: string, initial: boolean): false {
    if (key === this.lastKey) return false; // already reported
    this.lastHash = hash;
    const keeping = initial ? 'the last good version will be used if there is one' : this.keepLastGood();
    this.lastKey = initial ? key : this.keyOf(hash);
    this.ok = false;
    this.error = message;
    this.log.error(`${message}\n${keeping}`);
    this.audit.record({ kind: 'allowlist_invalid', message: `${message}\n${keeping}` });
    this.publish();
    return false;
  }

  /** What becomes of the allowlist in use when the file is invalid: kept if it still loads with the
   *  spools and the disk as they are now (an operation whose folder a link leads astray since is
   *  disabled), else nothing (as a restart would find). Says which, for the log. */
  private keepLastGood(): string {
    const ctx = this.context();
    if (this.currentText !== null) {
      try {
        this.use(parseAllowlist(this.currentText, this.lastGoodFile, ctx), this.currentText);
        this.onChange(this.current);
      } catch (e) {
        if (!(e instanceof AllowlistError)) throw e;
        this.current = EMPTY;
        this.currentText = null;
        this.onChange(EMPTY);
        return `the last good allowlist does not load with the spools as they are now either, so no operation is offered until ${this.file} is fixed: ${e.message}`;
      }
    }
    if (this.currentText === null) return `no operation is offered until ${this.file} is fixed`;
    return `keeping the last good allowlist (${this.current.operations.size} operations)`;
  }
}
