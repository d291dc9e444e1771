// The sandbox side of the spool: sign and write requests, read results (pure reads), wait, follow logs.
// Node built-ins only, so it bundles into one file that runs on Node 18 with no node_modules.
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, readSync, renameSync, writeSync, constants } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { computeMac, decodeSecret } from '../protocol/sign';
import { isRequestId } from '../protocol/ids';
import { isFinalState, type CatalogDoc, type HostStatusDoc, type InboxMessage, type KeyFile, type ResultDoc } from '../protocol/types';
import { newRequestId } from './requestIds';

export interface SubmitRequest {
  op: string;
  args?: Record<string, unknown>;
  id?: string;
  intent?: string;
  expiresAt?: Date;
}

export type Status = ResultDoc | { id: string; state: 'unclaimed' | 'unknown' };

/** Final, or uncertain (a human must settle it): waiting longer changes nothing by itself. */
export function isSettled(s: Status): s is ResultDoc {
  return s.state === 'uncertain' || (s.state !== 'unclaimed' && s.state !== 'unknown' && isFinalState(s.state));
}

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return null; // missing, or replaced between our open and read: the caller looks again
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class SpoolClient {
  constructor(
    readonly spool: string,
    /** Null for a reader that only looks (catalog, inbox, results). */
    readonly key: KeyFile | null,
  ) {}

  private p(...parts: string[]): string {
    return path.join(this.spool, ...parts);
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
    });
    const { key_id: keyId, secret } = this.key;
    const mac = computeMac(decodeSecret(secret), keyId, payload);
    return JSON.stringify({ v: 1, key_id: keyId, payload, mac });
  }

  /** Writes a request atomically (tmp/, fsync, rename into queue/, fsync the folder). Returns its id. */
  submit(r: SubmitRequest): string {
    const id = r.id ?? newRequestId();
    if (!isRequestId(id)) throw new Error(`"${id}" is not a valid request id (letters, digits, . _ -; at most 128)`);
    const tmp = this.p('tmp', `${id}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeSync(fd, this.envelope({ ...r, id }));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.p('queue', `${id}.json`));
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

  /** A pure read: the result document, else whether the request still waits in the queue. */
  status(id: string): Status {
    const doc = readJson<ResultDoc>(this.p('results', `${id}.json`));
    if (doc) return doc;
    return { id, state: existsSync(this.p('queue', `${id}.json`)) ? 'unclaimed' : 'unknown' };
  }

  /** Waits with backoff until the request is final (or uncertain), or `timeoutMs` passes. */
  async wait(id: string, opts: { timeoutMs?: number; onChange?: (s: Status) => void } = {}): Promise<Status> {
    const end = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
    let delay = 50;
    let last = '';
    for (;;) {
      const s = this.status(id);
      if (s.state !== last) {
        last = s.state;
        opts.onChange?.(s);
      }
      if (isSettled(s) || Date.now() >= end) return s;
      await sleep(Math.min(delay, Math.max(0, end - Date.now())));
      delay = Math.min(delay * 1.5, 1000);
    }
  }

  /**
   * Streams results/<id>.log as it grows, until the request is settled (or `timeoutMs` passes), then
   * drains what is left. Returns the last status.
   */
  async follow(id: string, onChunk: (b: Buffer) => void, opts: { timeoutMs?: number } = {}): Promise<Status> {
    const logFile = this.p('results', `${id}.log`);
    const end = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
    let offset = 0;
    let fd: number | null = null;
    const drain = () => {
      if (fd === null && existsSync(logFile)) fd = openSync(logFile, 'r');
      if (fd === null) return;
      const buf = Buffer.alloc(64 * 1024);
      for (let n; (n = readSync(fd, buf, 0, buf.length, offset)) > 0; offset += n) onChunk(buf.subarray(0, n));
    };
    let delay = 50;
    try {
      for (;;) {
        drain();
        const s = this.status(id);
        if (isSettled(s) || Date.now() >= end) {
          drain();
          return s;
        }
        await sleep(Math.min(delay, Math.max(0, end - Date.now())));
        delay = Math.min(delay * 1.5, 500);
      }
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  catalog(): CatalogDoc | null {
    return readJson<CatalogDoc>(this.p('catalog.json'));
  }

  host(): HostStatusDoc | null {
    return readJson<HostStatusDoc>(this.p('host.json'));
  }

  inbox(): InboxMessage[] {
    let names: string[];
    try {
      names = readdirSync(this.p('inbox'));
    } catch {
      return [];
    }
    return names
      .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
      .sort()
      .map((n) => readJson<InboxMessage>(this.p('inbox', n)))
      .filter((m): m is InboxMessage => m !== null);
  }
}
