// The daemon's current allowlist: reloaded when the file changes, or when the home's spools do (a root
// may now overlap a new spool, a `spools:` name may be gone); an invalid edit keeps the last good
// version (also across restarts, via a copy in the home) and says so in the log and the audit log.
// The last good version is kept only while it still loads with the spools as they are: one whose root
// now holds a new spool's folder would hand that spool's files to another sandbox, so then nothing is
// offered, as after a restart. An operation whose folder a link now leads into a spool or the home (a
// sandbox may plant one any time) is disabled alone, with its reason (allowlist/roots.ts
// linkedRootProblem): looked at again at every tick, it comes back once its folders are safe.
import { existsSync, readFileSync } from 'node:fs';
import { stampOf } from '../fs/stamp';
import { parseAllowlist, AllowlistError } from '../allowlist/load';
import { disabledOf, type Allowlist } from '../allowlist/types';
import { NO_CONTEXT, operationWorldProblem, realForm, type AllowlistContext } from '../allowlist/roots';
import { writeFileAtomic } from '../fs/atomicWrite';
import { sha256Hex } from '../../../shared/protocol/canonicalJson';
import type { AuditLog } from '../ledger/audit';
import type { Logger } from '../log';

export interface AllowlistStatus {
  ok: boolean;
  /** The problems of the file on disk when it is invalid (the last good version is in use). */
  error: string | null;
  operations: number;
  loaded_at: string | null;
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
  status: AllowlistStatus = { ok: false, error: 'not loaded yet', operations: 0, loaded_at: null, disabled: [] };

  constructor(
    private readonly file: string,
    private readonly lastGoodFile: string,
    /** Where the spools and the home are: roots that overlap them are refused (allowlist/roots.ts).
     *  A function when the spools can change while the daemon runs: asked at every poll. */
    private readonly ctx: AllowlistContext | (() => AllowlistContext),
    private readonly audit: AuditLog,
    private readonly log: Logger,
    private readonly onChange: (a: Allowlist) => void,
  ) {}

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
        this.use(parseAllowlist(text, this.lastGoodFile, ctx), text);
        if (this.lastHash !== null) this.lastKey = this.keyOf(this.lastHash, ctx); // the failure is reported already
        this.log.warn(`using the last good allowlist (${this.current.operations.size} operations) until ${this.file} is fixed`);
        this.onChange(this.current);
        return;
      } catch {
        /* fall through to the empty allowlist */
      }
    }
    this.log.error('no valid allowlist: every request will be rejected with unknown_op until it is fixed');
    this.onChange(this.current);
  }

  /** Cheap check on every tick (file events are hints only); reloads when the content or the context changed. */
  poll(): void {
    if (stampOf(this.file) !== this.lastStamp || (this.lastHash !== null && this.keyOf(this.lastHash) !== this.lastKey)) this.reload(false);
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
    const hash = sha256Hex(text);
    const ctx = this.context();
    const key = this.keyOf(hash, ctx);
    if (key === this.lastKey) return this.status.ok;
    try {
      const next = parseAllowlist(text, this.file, ctx);
      this.use(next, text);
      this.lastHash = hash;
      this.lastKey = this.keyOf(hash, ctx);
      this.status = { ok: true, error: null, operations: next.operations.size, loaded_at: new Date().toISOString(), disabled: disabledOf(next) };
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
      return true;
    } catch (e) {
      if (!(e instanceof AllowlistError)) throw e;
      return this.fail(e.message, hash, key, initial);
    }
  }

  private use(a: Allowlist, text: string): void {
    this.current = a;
    this.currentText = text;
    this.status = { ...this.status, operations: a.operations.size, disabled: disabledOf(a) };
  }

  private fail(message: string, hash: string, key: string, initial: boolean): false {
    if (key === this.lastKey) return false; // already reported
    this.lastHash = hash;
    const keeping = initial ? 'the last good version will be used if there is one' : this.keepLastGood();
    this.lastKey = initial ? key : this.keyOf(hash);
    this.status = { ...this.status, ok: false, error: message, operations: this.current.operations.size, disabled: disabledOf(this.current) };
    this.log.error(`${message}\n${keeping}`);
    this.audit.record({ kind: 'allowlist_invalid', message: `${message}\n${keeping}` });
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
