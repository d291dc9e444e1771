// The daemon's current allowlist: reloaded when the file changes, or when the home's spools do (a root
// may now overlap a new spool, a `spools:` name may be gone); an invalid edit keeps the last good
// version (also across restarts, via a copy in the home) and says so in the log and the audit log.
// The last good version is kept only while it still loads with the spools as they are: one whose root
// now holds a new spool's folder would hand that spool's files to another sandbox, so then nothing is
// offered, as after a restart.
import { existsSync, readFileSync } from 'node:fs';
import { stampOf } from '../fs/stamp';
import { parseAllowlist, AllowlistError } from '../allowlist/load';
import type { Allowlist } from '../allowlist/types';
import type { AllowlistContext } from '../allowlist/roots';
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
}

const EMPTY: Allowlist = { version: 1, operations: new Map() };

export class AllowlistSource {
  private current: Allowlist = EMPTY;
  /** The text of `current` and the context it was checked against (null: nothing loaded). */
  private currentText: string | null = null;
  private currentCtx: string | null = null;
  private lastHash: string | null = null;
  /** The text's hash and the context it was checked against: either changing means checking again. */
  private lastKey: string | null = null;
  private lastStamp = '';
  status: AllowlistStatus = { ok: false, error: 'not loaded yet', operations: 0, loaded_at: null };

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
        this.use(parseAllowlist(text, this.lastGoodFile, ctx), text, ctx);
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

  private keyOf(hash: string, ctx = this.context()): string {
    return `${hash} ${JSON.stringify(ctx)}`;
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
      this.use(next, text, ctx);
      this.lastHash = hash;
      this.lastKey = key;
      this.status = { ok: true, error: null, operations: next.operations.size, loaded_at: new Date().toISOString() };
      writeFileAtomic(this.lastGoodFile, text);
      this.audit.record({
        kind: 'allowlist_loaded',
        message: `allowlist ${initial ? 'loaded' : 'reloaded'}: ${next.operations.size} operations (${[...next.operations.keys()].join(', ') || 'none'})`,
        details: { hash },
      });
      this.log.info(`allowlist ${initial ? 'loaded' : 'reloaded'}: ${next.operations.size} operations`);
      this.onChange(next);
      return true;
    } catch (e) {
      if (!(e instanceof AllowlistError)) throw e;
      return this.fail(e.message, hash, key, initial);
    }
  }

  private use(a: Allowlist, text: string, ctx: AllowlistContext): void {
    this.current = a;
    this.currentText = text;
    this.currentCtx = JSON.stringify(ctx);
  }

  private fail(message: string, hash: string, key: string, initial: boolean): false {
    if (key === this.lastKey) return false; // already reported
    this.lastHash = hash;
    this.lastKey = key;
    const keeping = initial ? 'the last good version will be used if there is one' : this.keepLastGood();
    this.status = { ...this.status, ok: false, error: message, operations: this.current.operations.size };
    this.log.error(`${message}\n${keeping}`);
    this.audit.record({ kind: 'allowlist_invalid', message: `${message}\n${keeping}` });
    return false;
  }

  /** What becomes of the allowlist in use when the file is invalid: kept if it still loads with the
   *  spools as they are now, else nothing (as a restart would find). Says which, for the log. */
  private keepLastGood(): string {
    const ctx = this.context();
    if (this.currentText !== null && this.currentCtx !== JSON.stringify(ctx)) {
      try {
        this.use(parseAllowlist(this.currentText, this.lastGoodFile, ctx), this.currentText, ctx);
        this.onChange(this.current);
      } catch (e) {
        if (!(e instanceof AllowlistError)) throw e;
        this.current = EMPTY;
        this.currentText = null;
        this.currentCtx = null;
        this.onChange(EMPTY);
        return `the last good allowlist does not load with the spools as they are now either, so no operation is offered until ${this.file} is fixed: ${e.message}`;
      }
    }
    if (this.currentText === null) return `no operation is offered until ${this.file} is fixed`;
    return `keeping the last good allowlist (${this.current.operations.size} operations)`;
  }
}
