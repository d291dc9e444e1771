// The sandbox side of the spool: sign and write requests; read what the host answered, believing only
// what it signed for this key (docs/PROTOCOL.md, "Authenticated results and inbox messages"), since
// anyone who can write the spool can write results/ and inbox/; wait; follow the live log.
// Node built-ins only, so it bundles into one file that runs on Node 18 with no node_modules.
import { closeSync, fsyncSync, lstatSync, openSync, readdirSync, renameSync, unlinkSync, writeSync, constants } from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { computeMac, decodeSecret } from '../protocol/sign';
import { INBOX_MESSAGE_NAME, isRequestId } from '../protocol/ids';
import { openHostDoc, type HostDocKey } from '../protocol/hostAuth';
import { requestHash } from '../protocol/requestHash';
import { sha256Hex } from '../protocol/canonicalJson';
import { MAX_REQUEST_BYTES, UNAUTHENTICATED_CODES, isFinalState, type CatalogDoc, type InboxMessage, type KeyFile, type ResultDoc, type ResultError } from '../protocol/types';
import { visible } from '../text/visible';
import { newRequestId } from './requestIds';
import { MAX_LIVE_LOG_BYTES, MAX_MESSAGE_BYTES, MAX_RESULT_BYTES, MAX_SPOOL_FILE_BYTES, openSpoolFile, readAt, readSpoolFile } from './spoolFiles';
import { entryExists, inFolder, isPermissionError, permissionDenied } from './spoolAccess';
import { readHostState, type HostState } from './hostState';
import { checkedOperations } from './catalogEntries';

export type { HostState } from './hostState';

export interface SubmitRequest {
  op: string;
  args?: Record<string, unknown>;
  id?: string;
  intent?: string;
  expiresAt?: Date;
  /** Run as a step of this approved plan (dumbwaiter.plan) of the same key. */
  plan_id?: string;
  /** Tighter limits than the operation's: the host refuses larger ones (bad_args). */
  timeout_s?: number;
  max_output_bytes?: number;
}

/** A refusal the host wrote unsigned (it could not authenticate the request), or anyone else did. */
export interface UnsignedRefusal {
  id: string;
  state: 'rejected';
  unsigned: true;
  error: ResultError;
  /** The host's signed message saying it revoked this key, if there is one. */
  revoked?: string;
}

export type Status =
  /** Verified for this key, for this id, and bound to the request this process sent (when it sent one). */
  | ResultDoc
  | { id: string; state: 'unclaimed' | 'unknown' }
  /** The id is bound to another request: nothing of this one ran (exit 87). */
  | { id: string; state: 'conflict'; message: string }
  | UnsignedRefusal;

export function isResult(s: Status): s is ResultDoc {
  return 'v' in s;
}

/** Final, uncertain (a human must settle it), a conflict or an unsigned refusal: waiting changes nothing
 *  by itself. Not an uncertain run whose reconcile check the host has still to make: that check settles it. */
export function isSettled(s: Status): boolean {
  if (s.state === 'uncertain') return !(isResult(s) && s.reconcile_pending === true);
  if (s.state === 'conflict') return true;
  return s.state !== 'unclaimed' && s.state !== 'unknown' && isFinalState(s.state);
}

/** Refusals before authentication, which the host cannot sign. */
const UNSIGNABLE: ReadonlySet<string> = new Set(UNAUTHENTICATED_CODES);

/** An unsigned refusal, or a conflict the host has not written its message about, is reported only once
 *  its request has left queue/ and nothing more came for this long (the host takes a request out of
 *  queue/ before it answers). */
export const SETTLE_GRACE_MS = 2000;

/** Inbox messages looked at: the newest this many, by name (the host's names sort by time). */
export const INBOX_NEWEST = 256;
/** The live log read in one poll step at most: between steps, timers and an abort can fire. */
const LOG_STEP_BYTES = 1024 * 1024;

export class BadRequestIdError extends Error {}
/** The request would be larger than the host reads (it would refuse it unsigned): nothing was written. */
export class RequestTooLargeError extends Error {}

/** `id` if it is a request id; otherwise it would name files outside results/ and queue/. */
export function checkRequestId(id: string): string {
  if (!isRequestId(id)) throw new BadRequestIdError(`"${visible(id)}" is not a valid request id (letters, digits, . _ -; at most 128)`);
  return id;
}

function defaultConflictText(id: string): string {
  return `request id ${id} is already bound to another request; nothing was run: use a new id`;
}

export interface ClientOptions {
  /** What the sandbox should know while it waits: files ignored (once per version), the host going down or coming back. */
  onNotice?: (text: string) => void;
}

export interface WaitOptions {
  timeoutMs?: number;
  onChange?: (s: Status) => void;
  signal?: AbortSignal;
}

/** What `follow` streamed, and whether it is what the host logged (its signed log_sha256); `capped`:
 *  the log went past MAX_LIVE_LOG_BYTES, was not shown further and so could not be checked. */
export interface LogCheck {
  streamed: number;
  check: 'none' | 'match' | 'mismatch' | 'unchecked' | 'capped';
}

export type Followed = Status & { log: LogCheck };

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}

function unsignedRefusalOf(text: string, id: string): ResultError | null {
  try {
    const d = JSON.parse(text) as Partial<ResultDoc>;
    const code = d?.error?.code;
    if (d?.id === id && d.state === 'rejected' && typeof code === 'string' && UNSIGNABLE.has(code)) {
      // Unsigned, so possibly anyone's words: shown only with what a terminal would act on escaped.
      return { code, message: visible(String(d.error?.message ?? '')) };
    }
  } catch {
    /* not JSON: not a refusal */
  }
  return null;
}

type OwnResult = { doc: ResultDoc } | { refusal: ResultError } | null;

/** One look at a request: its status, and whether more may still come (a signed result instead of an
 *  unsigned refusal, the host's message about a conflict) once the host has taken it. */
interface Look {
  s: Status;
  moreMayCome: boolean;
}

export class SpoolClient {
  private readonly hostKey: HostDocKey | null;
  private readonly onNotice: (text: string) => void;
  /** The request hash of each id this process submitted: what its result must be bound to. */
  private readonly hashes = new Map<string, string>();
  /** For each file ignored, the version last said (a notice once per version, not once per poll). */
  private readonly said = new Map<string, string>();
  /** Inbox messages by name and version (inode, size, mtime): each file is read and verified once. */
  private readonly inboxSeen = new Map<string, { version: string; msg: InboxMessage | null }>();
  /** The inbox as last listed (folder version and names) and its messages: unchanged, nothing is looked at again. */
  private inboxLast: { folder: string; listedAt: number; listing: string; msgs: InboxMessage[] } | null = null;
  /** Whether the host has signed anything for this key in this process: then it knows the key, and an
   *  unsigned "unknown key" (or bad signature, bad envelope) refusal of a request of ours is not its. */
  private keyKnown = false;
  /** Ids whose result this process has seen signed: an unsigned refusal at their name is never theirs. */
  private readonly signedIds = new Set<string>();

  constructor(
    readonly spool: string,
    /** Null for a reader that only looks at the catalog. */
    readonly key: KeyFile | null,
    opts: ClientOptions = {},
  ) {
    this.hostKey = key ? { keyId: key.key_id, secret: decodeSecret(key.secret) } : null;
    this.onNotice = opts.onNotice ?? (() => {});
  }

  private p(...parts: string[]): string {
    return path.join(this.spool, ...parts);
  }

  private sayOnce(file: string, version: string, text: string): void {
    if (this.said.get(file) === version) return;
    this.said.set(file, version);
    this.onNotice(text);
  }

  /** The envelope text for a request, signed over the exact payload bytes. */
  envelope(r: SubmitRequest & { id: string }, now = new Date()): string {
    if (!this.key) throw new Error('a key file is needed to sign requests');
    const payload = JSON.stringify({
      id: r.id,
      op: r.op,
      args: r.args ?? {},
      created_at: now.toISOString(),
      ...(r.expiresAt ? { expires_at: r.expiresAt.toISOString() } : {}),
      ...(r.intent ? { intent: r.intent } : {}),
      ...(r.plan_id !== undefined ? { plan_id: r.plan_id } : {}),
      ...(r.timeout_s !== undefined ? { timeout_s: r.timeout_s } : {}),
      ...(r.max_output_bytes !== undefined ? { max_output_bytes: r.max_output_bytes } : {}),
    });
    const { key_id: keyId, secret } = this.key;
    const mac = computeMac(decodeSecret(secret), keyId, payload);
    return JSON.stringify({ v: 1, key_id: keyId, payload, mac });
  }

  /** Writes a request atomically (tmp/, fsync, rename into queue/, fsync the folder). Returns its id,
   *  and remembers what it is bound to, so that a result for another request with this id is a conflict. */
  submit(r: SubmitRequest): string {
    const id = checkRequestId(r.id ?? newRequestId());
    if (r.plan_id !== undefined) checkRequestId(r.plan_id);
    // The args as the host will read them (what JSON drops or changes, such as undefined, is not sent),
    // so that the hash is the one the host binds the id to.
    const args = JSON.parse(JSON.stringify(r.args ?? {})) as Record<string, unknown>;
    const text = this.envelope({ ...r, id, args });
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_REQUEST_BYTES) throw new RequestTooLargeError(`the request would be ${bytes} bytes, more than the ${MAX_REQUEST_BYTES} a request may have`);
    this.hashes.set(id, requestHash(this.key!.key_id, r.op, args));
    const tmp = this.p('tmp', `${id}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    const fd = inFolder(this.p('tmp'), () => openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    inFolder(this.p('queue'), () => renameSync(tmp, this.p('queue', `${id}.json`)));
    try {
      const dfd = openSync(this.p('queue'), constants.O_RDONLY);
      try {
        fsyncSync(dfd);
      } finally {
        closeSync(dfd);
      }
    } catch {
      /* folders cannot be synced on every platform */
    }
    return id;
  }

  /** results/<id>.json if the host signed it for this key and this id; else why not, said once. */
  private ownResult(id: string): OwnResult {
    const rel = `results/${id}.json`;
    const r = readSpoolFile(this.p('results', `${id}.json`), MAX_RESULT_BYTES);
    if (!r.ok) {
      if (r.why === 'missing') return null;
      // Denied: if results/ itself cannot be entered, that is a permission problem of the spool (thrown);
      // a file of its own that cannot be read is anyone's doing, and absent like any other.
      if (r.why === 'denied') inFolder(this.p('results'), () => lstatSync(this.p('results', `${id}.json`)));
      const why = { denied: 'it cannot be read (permission denied)', not_a_file: 'it is not a regular file', too_big: `it is larger than ${MAX_RESULT_BYTES} bytes` }[r.why];
      this.sayOnce(rel, r.why, `ignored ${rel}: ${why}`);
      return null;
    }
    const text = r.data.toString('utf8');
    const opened = this.hostKey ? openHostDoc('result', text, this.hostKey) : ({ ok: false, why: 'unsigned', keyId: null } as const);
    if (opened.ok) {
      this.keyKnown = true;
      if (opened.doc.id === id) {
        this.signedIds.add(id);
        return { doc: opened.doc as unknown as ResultDoc };
      }
      this.sayOnce(rel, sha256Hex(text), `ignored ${rel}: it is signed for this key but answers another request id`);
      return null;
    }
    const refusal = opened.why === 'unsigned' ? unsignedRefusalOf(text, id) : null;
    const why = opened.why === 'unsigned' ? 'unsigned' : opened.why === 'other_key' ? `signed for key ${opened.keyId}` : 'its signature does not match';
    this.sayOnce(rel, sha256Hex(text), `ignored ${rel}: the host did not sign it for this key (${why})`);
    return refusal ? { refusal } : null;
  }

  /**
   * The inbox messages the host signed for this key, oldest first: of the newest INBOX_NEWEST names in
   * the host's format. Anyone can fill inbox/, so nothing is read again while the folder and its names
   * stay as they were (a file changed in place is not the host's doing: it writes each message once).
   */
  inbox(): InboxMessage[] {
    if (!this.hostKey) return [];
    const dir = this.p('inbox');
    let names: string[];
    let folder: string;
    const listedAt = Date.now();
    try {
      const st = lstatSync(dir);
      folder = `${st.ino}:${st.mtimeMs}`;
      // A folder unchanged since it was listed is not listed again (a flood of names would make every
      // look cost as much). Only a listing taken well after the folder's last change counts: one taken
      // within the same clock tick as a new name may have missed it (git's "racy" rule).
      const last = this.inboxLast;
      if (last?.folder === folder && last.listedAt - st.mtimeMs > 1000) return [...last.msgs];
      names = readdirSync(dir)
        .filter((n) => INBOX_MESSAGE_NAME.test(n)) // anything else is not the host's
        .sort()
        .slice(-INBOX_NEWEST);
    } catch (e) {
      if (isPermissionError(e)) throw permissionDenied(dir);
      return [];
    }
    const listing = names.join('/');
    if (this.inboxLast?.listing === listing) {
      this.inboxLast = { ...this.inboxLast, folder, listedAt };
      return [...this.inboxLast.msgs];
    }
    const present = new Set<string>();
    const out: InboxMessage[] = [];
    for (const name of names) {
      present.add(name);
      let version: string;
      try {
        const st = lstatSync(path.join(dir, name));
        version = `${st.ino}:${st.size}:${st.mtimeMs}`;
      } catch {
        continue;
      }
      let seen = this.inboxSeen.get(name);
      if (seen?.version !== version) {
        seen = { version, msg: this.readMessage(path.join(dir, name), name.slice(0, -'.json'.length)) };
        this.inboxSeen.set(name, seen);
      }
      if (seen.msg) out.push(seen.msg);
    }
    for (const name of this.inboxSeen.keys()) if (!present.has(name)) this.inboxSeen.delete(name);
    this.inboxLast = { folder, listedAt, listing, msgs: out };
    return [...out];
  }

  private readMessage(file: string, msgId: string): InboxMessage | null {
    const r = readSpoolFile(file, MAX_MESSAGE_BYTES);
    if (!r.ok) return null;
    const opened = openHostDoc('inbox', r.data.toString('utf8'), this.hostKey!);
    if (!opened.ok) return null;
    this.keyKnown = true;
    const m = opened.doc as Partial<InboxMessage>;
    // Signed, but still held to the shape the host writes: whatever is printed of it is text.
    const shaped = typeof m.kind === 'string' && typeof m.text === 'string' && typeof m.created_at === 'string' && (m.ref === null || typeof m.ref === 'string');
    return m.id === msgId && shaped ? (m as InboxMessage) : null;
  }

  /** The host's signed word that it revoked this key, if any. */
  private revokedText(): string | undefined {
    return this.inbox().filter((m) => m.kind === 'key_revoked' && m.ref === this.key!.key_id).pop()?.text;
  }

  /**
   * An unsigned refusal at an id's name, if it may be the host's. Not once this process has seen the
   * id's result signed (the host answered it, so it authenticated it); not a refusal saying the host
   * cannot authenticate this key's requests once it has signed something for this key; and a revoked
   * key only with the host's signed message saying so. Anyone can write such a refusal over a result.
   */
  private unsignedRefusal(id: string, error: ResultError): UnsignedRefusal | null {
    if (this.signedIds.has(id)) return null;
    const revoked = this.revokedText();
    if (this.keyKnown && (error.code !== 'revoked_key' || revoked === undefined)) return null;
    return { id, state: 'rejected', unsigned: true, error, ...(revoked !== undefined ? { revoked } : {}) };
  }

  /** The host's words on a conflict of `id`: about the request this process sent, when it knows which. */
  private conflictText(id: string, hash: string | undefined): string | null {
    const m = this.inbox().filter((m) => m.kind === 'conflict' && m.ref === id && (hash === undefined || m.request_hash === hash));
    return m.length > 0 ? m[m.length - 1]!.text : null;
  }

  private look(id: string): Look {
    const own = this.ownResult(id);
    const hash = this.hashes.get(id);
    if (own && 'doc' in own) {
      const bound = own.doc.request_hash;
      if (hash === undefined || bound === undefined || bound === hash) return { s: own.doc, moreMayCome: false };
      // Bound to another request of this key: whatever that result says, it is not this request's outcome.
      const text = this.conflictText(id, hash);
      return { s: { id, state: 'conflict', message: text ?? defaultConflictText(id) }, moreMayCome: text === null };
    }
    const text = this.conflictText(id, hash);
    if (text !== null) return { s: { id, state: 'conflict', message: text }, moreMayCome: false };
    if (this.inQueue(id)) return { s: { id, state: 'unclaimed' }, moreMayCome: false };
    const refusal = own ? this.unsignedRefusal(id, own.refusal) : null;
    if (refusal) return { s: refusal, moreMayCome: true };
    return { s: { id, state: 'unknown' }, moreMayCome: false };
  }

  private inQueue(id: string): boolean {
    return entryExists(this.p('queue', `${id}.json`));
  }

  /** Takes a request the host has not taken yet back out of queue/ (once taken, it is no longer there). */
  withdraw(id: string): void {
    try {
      unlinkSync(this.p('queue', `${checkRequestId(id)}.json`));
    } catch {
      /* taken meanwhile, or never there */
    }
  }

  /** A pure read: what the host answered for this key, else whether the request still waits in queue/. */
  status(id: string): Status {
    return this.look(checkRequestId(id)).s;
  }

  hostState(): HostState {
    return readHostState(this.spool);
  }

  /** Waits with backoff until the request is settled (see isSettled), or `timeoutMs` passes, or `signal` aborts. */
  async wait(id: string, opts: WaitOptions = {}): Promise<Status> {
    return this.poll(checkRequestId(id), opts, 1000);
  }

  /**
   * Polls until settled. An unsigned refusal counts only once it has stood SETTLE_GRACE_MS with its
   * request gone from queue/ (a signed answer written meanwhile wins); a conflict found by its hash
   * waits as long, while the host runs, for the host's message about it. Says when the host is not
   * running, and again whenever that changes. `step` returns true when it has more to do at once (the
   * next look comes without a pause).
   */
  private async poll(id: string, opts: WaitOptions, maxDelayMs: number, step?: (s: Status) => boolean): Promise<Status> {
    const end = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
    let delay = 50;
    let last = '';
    let graceFrom: number | null = null;
    let hostRunning: boolean | null = null;
    let held: string | null = null;
    for (;;) {
      const { s, moreMayCome } = this.look(id);
      const busy = step?.(s) ?? false;
      if (s.state !== last) {
        last = s.state;
        opts.onChange?.(s);
      }
      let settled = isSettled(s);
      const host = this.hostState();
      // A conflict is certain either way; only its words may come, and only from a running host.
      if (moreMayCome && ('unsigned' in s || host.running)) {
        const taken = !this.inQueue(id);
        graceFrom = taken ? (graceFrom ?? Date.now()) : null;
        settled = graceFrom !== null && Date.now() - graceFrom >= SETTLE_GRACE_MS;
      } else graceFrom = null;
      if (settled || Date.now() >= end || opts.signal?.aborted) return s;
      if (host.running !== hostRunning) {
        if (hostRunning !== null || !host.running) this.onNotice(host.running ? 'the host is running again (per host.json)' : hostDownText(host, s));
        hostRunning = host.running;
      }
      if (host.held !== held && s.state === 'unclaimed') {
        if (host.held) this.onNotice(hostDownText(host, s));
        held = host.held;
      }
      await sleep(busy ? 0 : Math.min(delay, Math.max(0, end - Date.now())), opts.signal);
      if (!busy) delay = Math.min(delay * 1.5, maxDelayMs);
    }
  }

  /**
   * Streams results/<id>.log as it grows, but only once a verified result says the run started (a log
   * planted before is never shown), until the request is settled or `timeoutMs` passes: at most
   * LOG_STEP_BYTES per look, and nothing past MAX_LIVE_LOG_BYTES (said once), since anyone can put a
   * log of any size there. At the end reads at most the log_bytes the host's final result gives, and
   * checks what was streamed against its log_sha256.
   */
  async follow(id: string, onChunk: (b: Buffer) => void, opts: WaitOptions = {}): Promise<Followed> {
    checkRequestId(id);
    const logFile = this.p('results', `${id}.log`);
    let fd: number | null = null;
    let offset = 0;
    let capped = false;
    const digest = createHash('sha256');
    const started = (s: Status): s is ResultDoc => isResult(s) && (s.state === 'running' || s.started_at !== null);
    /** Reads on up to `limit` (and the cap), `budget` bytes at most; true when more is there already. */
    const drain = (limit: number, budget: number): boolean => {
      fd ??= openSpoolFile(logFile);
      if (fd === null) return false;
      const stop = Math.min(limit, MAX_LIVE_LOG_BYTES);
      for (let chunk; offset < Math.min(stop, offset + budget) && (chunk = readAt(fd, offset, stop - offset)).length > 0; offset += chunk.length, budget -= chunk.length) {
        digest.update(chunk);
        onChunk(chunk);
      }
      const more = readAt(fd, offset, 1).length > 0;
      if (more && offset >= MAX_LIVE_LOG_BYTES && limit > offset && !capped) {
        capped = true;
        this.onNotice(`results/${id}.log is larger than ${MAX_LIVE_LOG_BYTES} bytes: the live output is not shown further; the host's signed output is given at the end`);
      }
      return more && offset < stop;
    };
    try {
      const s = await this.poll(id, opts, 500, (s) => started(s) && !isSettled(s) && drain(Infinity, LOG_STEP_BYTES));
      if (!started(s)) return { ...s, log: { streamed: offset, check: offset === 0 ? 'none' : 'unchecked' } };
      const final = isSettled(s);
      const logged = final && typeof s.log_bytes === 'number' ? s.log_bytes : undefined;
      if (final) drain(logged ?? Infinity, Infinity); // the rest of the log (a timeout or an abort reads no more)
      let check: LogCheck['check'] = offset === 0 ? 'none' : capped ? 'capped' : 'unchecked';
      if (offset > 0 && logged !== undefined && typeof s.log_sha256 === 'string') {
        if (offset === logged && digest.digest('hex') === s.log_sha256) check = 'match';
        else if (!capped || offset > logged) check = 'mismatch';
      }
      return { ...s, log: { streamed: offset, check } };
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  /** The catalog with only its well-formed operations; `skipped` says which entries were left out. */
  catalog(): (CatalogDoc & { skipped: string[] }) | null {
    const r = readSpoolFile(this.p('catalog.json'), MAX_SPOOL_FILE_BYTES);
    if (!r.ok) return null;
    let doc: Partial<CatalogDoc> | null;
    try {
      doc = JSON.parse(r.data.toString('utf8')) as Partial<CatalogDoc> | null;
    } catch {
      return null; // not JSON: not the host's catalog
    }
    if (!Array.isArray(doc?.operations)) return null;
    const { operations, skipped } = checkedOperations(doc.operations);
    return { v: 1, updated_at: typeof doc.updated_at === 'string' ? doc.updated_at : '', operations, skipped };
  }
}

/** What to say after live output of request `s` was shown (`shown`: `stream` on stdout, above the
 *  signed output that follows; `progress` in progress notifications, before the result that holds it),
 *  when it was not checked to be what the host logged; null when it was, or when nothing was shown.
 *  Whatever could not be checked is followed by the signed output: the sandbox can make the host's log
 *  vanish (a folder at its name) and put its own text there. dw.py's log_check_note says the same (a
 *  test holds them equal). */
export function logCheckNote(check: LogCheck['check'], s: Pick<ResultDoc, 'id' | 'state' | 'stdout' | 'stderr' | 'resolved_by'>, shown: 'stream' | 'progress'): string | null {
  const why = {
    mismatch: `is not what the host logged (results/${s.id}.log was changed by someone else)`,
    capped: `stopped at ${MAX_LIVE_LOG_BYTES} bytes of results/${s.id}.log`,
    // A run the host lost sight of (it stopped while the run ran) has no hash of its log in its result.
    unchecked:
      s.state === 'uncertain' || s.resolved_by !== undefined
        ? "could not be checked against the host's log (the host stopped while it ran), so it may not be the host's"
        : "could not be checked against the host's log (its result has no log_sha256), so it may not be the host's",
  }[check as 'mismatch' | 'capped' | 'unchecked'];
  if (why === undefined) return null;
  const kept = s.stdout !== '' || s.stderr !== '';
  const signed = !kept ? "the host's signed result holds none of its output" : shown === 'stream' ? "the host's signed output follows:" : "the output above is the host's signed one";
  return `${shown === 'stream' ? 'the live output above' : 'the live output sent as progress'} ${why}; ${signed}`;
}

/** What to say while the host is down, or holds new requests back: where the request is. */
export function hostDownText(host: HostState, s: Status): string {
  if (s.state !== 'unclaimed' || host.held) return host.text;
  return `${host.text}; the request waits in queue/ until it ${host.since ? 'is back' : 'runs'}`;
}
