// The sandbox client library: what it signs is what the host verifies; what it believes is only what
// the host signed for its key (the host vectors); ids; typed arguments.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { BadRequestIdError, INBOX_NEWEST, RequestTooLargeError, SpoolClient, isSettled, logCheckNote, type LogCheck, type Status } from '../../../../shared/client/spoolClient';
import { dwPy, resultDoc } from '../../../helpers/clientCases';
import { MAX_LIVE_LOG_BYTES } from '../../../../shared/client/spoolFiles';
import { signHostDoc } from '../../../../shared/protocol/hostAuth';
import { requestHash } from '../../../../shared/protocol/requestHash';
import { decodeSecret } from '../../../../shared/protocol/sign';
import { newRequestId, stableId } from '../../../../shared/client/requestIds';
import { canonicalJson } from '../../../../shared/protocol/canonicalJson';
import { argsFromPairs, checkArgs, ArgError } from '../../../../shared/client/typedArgs';
import { parseKeyFile, KeyFileError } from '../../../../shared/client/keyFile';
import { authenticate } from '../../../../main/core/daemon/authenticate';
import { isRequestId } from '../../../../shared/protocol/ids';
import { MAX_REQUEST_BYTES, type InboxMessage, type KeyFile, type ResultDoc } from '../../../../shared/protocol/types';

const vectors = JSON.parse(readFileSync(path.join(import.meta.dirname, '../../../fixtures/vectors-v1.json'), 'utf8')) as {
  valid: { key_file: KeyFile; envelope: { payload: string; mac: string } }[];
};
const key = vectors.valid[0]!.key_file;
const hostKey = { ...key, name: 'k', scope: 'write' as const, ops: null, created_at: '', revoked_at: null, rotated_to: null, last_used_at: null, spool: 'default' };

describe('the client signs what the host verifies', () => {
  it('an envelope made by the client passes the host verifier', () => {
    const c = new SpoolClient('/nowhere', key);
    const text = c.envelope({ id: 'c-1', op: 'echo', args: { msg: 'héllo ✓ "q"' }, intent: 'why' });
    const auth = authenticate(Buffer.from(text), 'c-1', (id) => (id === key.key_id ? hostKey : null));
    expect(auth).toMatchObject({ ok: true, payload: { id: 'c-1', op: 'echo', args: { msg: 'héllo ✓ "q"' }, intent: 'why' } });
  });

  it('gives the vectors\' MACs for their payloads', async () => {
    const { computeMac, decodeSecret } = await import('../../../../shared/protocol/sign');
    for (const v of vectors.valid) expect(computeMac(decodeSecret(v.key_file.secret), v.key_file.key_id, v.envelope.payload)).toBe(v.envelope.mac);
  });

  it('binds the request by the args as sent: an undefined value (dropped by JSON) or a Date gives the host\'s hash, not a false conflict', () => {
    const spool = mkdtempSync(path.join(os.tmpdir(), 'client-hash-'));
    try {
      for (const d of ['queue', 'tmp', 'results']) mkdirSync(path.join(spool, d));
      const c = new SpoolClient(spool, key);
      const id = c.submit({ op: 'echo', args: { msg: 'x', gone: undefined, when: new Date(0), n: Number.NaN } });
      // What the host makes of the file it finds: its hash is the one the id is bound to (main/core/daemon/intake.ts).
      const auth = authenticate(readFileSync(path.join(spool, 'queue', `${id}.json`)), id, (k) => (k === key.key_id ? hostKey : null));
      if (!auth.ok) throw new Error(auth.message);
      expect(auth.payload.args).toEqual({ msg: 'x', when: '1970-01-01T00:00:00.000Z', n: null });
      const answer = (hash: string) => writeFileSync(path.join(spool, 'results', `${id}.json`), signedResult(id, { request_hash: hash }, signerOf(key)));
      answer(requestHash(key.key_id, auth.payload.op, auth.payload.args));
      expect(c.status(id)).toMatchObject({ id, state: 'running' });
      answer(requestHash(key.key_id, 'echo', { msg: 'x' })); // the id bound to another request: the check is live
      expect(c.status(id)).toMatchObject({ id, state: 'conflict' });
    } finally {
      rmSync(spool, { recursive: true, force: true });
    }
  });

  it('signs plan_id, timeout_s and max_output_bytes into the payload, and binds the id to op and args alone', () => {
    const spool = mkdtempSync(path.join(os.tmpdir(), 'client-fields-'));
    try {
      for (const d of ['queue', 'tmp', 'results']) mkdirSync(path.join(spool, d));
      const c = new SpoolClient(spool, key);
      const id = c.submit({ op: 'echo', args: { msg: 'x' }, plan_id: 'r-plan-1', timeout_s: 5, max_output_bytes: 1024 });
      const payload = JSON.parse((JSON.parse(readFileSync(path.join(spool, 'queue', `${id}.json`), 'utf8')) as { payload: string }).payload) as Record<string, unknown>;
      expect(payload).toMatchObject({ op: 'echo', args: { msg: 'x' }, plan_id: 'r-plan-1', timeout_s: 5, max_output_bytes: 1024 });
      // The host binds the id to {args, key_id, op}: a result with that hash is this request's, limits or not.
      writeFileSync(path.join(spool, 'results', `${id}.json`), signedResult(id, { request_hash: requestHash(key.key_id, 'echo', { msg: 'x' }) }, signerOf(key)));
      expect(c.status(id)).toMatchObject({ id, state: 'running' });
      expect(() => c.submit({ op: 'echo', plan_id: '../results/x' })).toThrow(BadRequestIdError);
    } finally {
      rmSync(spool, { recursive: true, force: true });
    }
  });

  it('refuses a request larger than the host reads (it would be refused unsigned), writing nothing', () => {
    const spool = mkdtempSync(path.join(os.tmpdir(), 'client-big-'));
    try {
      for (const d of ['queue', 'tmp', 'results']) mkdirSync(path.join(spool, d));
      const c = new SpoolClient(spool, key);
      expect(() => c.submit({ op: 'echo', args: { msg: 'x'.repeat(MAX_REQUEST_BYTES) } })).toThrow(RequestTooLargeError);
      expect([...readdirSync(path.join(spool, 'queue')), ...readdirSync(path.join(spool, 'tmp'))]).toEqual([]);
    } finally {
      rmSync(spool, { recursive: true, force: true });
    }
  });

  it('refuses to sign without a key', () => {
    expect(() => new SpoolClient('/nowhere', null).envelope({ id: 'x', op: 'echo' })).toThrow('key file');
  });
});

interface HostVectors {
  key_file: KeyFile;
  other_key_file: KeyFile;
  request_hash: { about: string; key_id: string; op: string; args_json: string; request_hash: string }[];
  stable_id: { about: string; key_id: string; op: string; args_json: string; intent: string; canonical: string; stable_id: string }[];
  signed: { about: string; kind: 'result' | 'inbox'; id: string; text: string; file: string }[];
  refused: { about: string; kind: 'result' | 'inbox'; file: string; why: string }[];
  settled: { about: string; doc: ResultDoc; settled: boolean }[];
}
const hostVectors = JSON.parse(readFileSync(path.join(import.meta.dirname, '../../../../docs/vectors-host-v1.json'), 'utf8')) as HostVectors;

describe('the client believes only what the host signed for its key (docs/vectors-host-v1.json)', () => {
  const spools: string[] = [];
  afterAll(() => spools.forEach((s) => rmSync(s, { recursive: true, force: true })));
  /** A spool with the folders a client reads, and a client of the vectors' key that records its notices. */
  function spoolWith(key: KeyFile = hostVectors.key_file) {
    const spool = mkdtempSync(path.join(os.tmpdir(), 'client-vectors-'));
    spools.push(spool);
    for (const d of ['queue', 'tmp', 'results', 'inbox']) mkdirSync(path.join(spool, d));
    const notices: string[] = [];
    return { spool, notices, client: new SpoolClient(spool, key, { onNotice: (t) => notices.push(t) }) };
  }

  it.each(hostVectors.request_hash)('binds what it submits by the request hash: $about', (v) => {
    const keyFile = { ...hostVectors.key_file, key_id: v.key_id };
    const { spool, client } = spoolWith(keyFile);
    const id = client.submit({ op: v.op, args: JSON.parse(v.args_json) as Record<string, unknown> });
    // The host's result bound to the vector's hash is this request's: not a conflict.
    writeFileSync(path.join(spool, 'results', `${id}.json`), signedResult(id, { request_hash: v.request_hash }, signerOf(keyFile)));
    expect(client.status(id)).toMatchObject({ id, state: 'running', request_hash: v.request_hash });
  });

  it.each(hostVectors.signed.filter((v) => v.kind === 'result'))('takes the signed result: $about', (v) => {
    const { spool, client, notices } = spoolWith();
    writeFileSync(path.join(spool, 'results', `${v.id}.json`), v.file);
    expect(client.status(v.id)).toEqual(JSON.parse(v.text));
    expect(notices).toEqual([]);
  });

  it.each(hostVectors.signed.filter((v) => v.kind === 'inbox'))('takes the signed inbox message: $about', (v) => {
    const { spool, client } = spoolWith();
    writeFileSync(path.join(spool, 'inbox', `${v.id}.json`), v.file);
    expect(client.inbox()).toEqual([JSON.parse(v.text)]);
    // Not under another name: an inbox message is its file's.
    rmSync(path.join(spool, 'inbox', `${v.id}.json`));
    writeFileSync(path.join(spool, 'inbox', `20991231T000000000Z-00000000.json`), v.file);
    expect(client.inbox()).toEqual([]);
  });

  const WHY: Record<string, string> = { unsigned: '(unsigned)', other_key: `(signed for key ${hostVectors.other_key_file.key_id})`, bad_mac: '(its signature does not match)' };
  it.each(hostVectors.refused)('refuses $about ($why), saying so once', (v) => {
    const { spool, client, notices } = spoolWith();
    const id = (JSON.parse(v.file.trim().replace(/^\{"auth": ?\{[^}]*\},/, '{')) as { id: string }).id;
    if (v.kind === 'inbox') {
      writeFileSync(path.join(spool, 'inbox', `${id}.json`), v.file);
      expect(client.inbox()).toEqual([]);
      return;
    }
    writeFileSync(path.join(spool, 'results', `${id}.json`), v.file);
    expect(client.status(id)).toEqual({ id, state: 'unknown' });
    expect(client.status(id)).toEqual({ id, state: 'unknown' });
    expect(notices).toEqual([`ignored results/${id}.json: the host did not sign it for this key ${WHY[v.why]}`]);
  });

  it('a signed result of another id at this id\'s name is not this request\'s', () => {
    const { spool, client, notices } = spoolWith();
    writeFileSync(path.join(spool, 'results', 'other.json'), hostVectors.signed[0]!.file);
    expect(client.status('other')).toEqual({ id: 'other', state: 'unknown' });
    expect(notices[0]).toContain('answers another request id');
  });

  it('a signed result bound to another request of this key is a conflict, not its outcome', () => {
    const v = hostVectors.signed[0]!;
    const { spool, client } = spoolWith();
    writeFileSync(path.join(spool, 'results', `${v.id}.json`), v.file);
    client.submit({ id: v.id, op: 'echo', args: { msg: 'something else' } });
    expect(client.status(v.id)).toEqual({ id: v.id, state: 'conflict', message: `request id ${v.id} is already bound to another request; nothing was run: use a new id` });
    // The same request again (the vector's hash) is a replay: its result is this request's.
    const again = spoolWith();
    writeFileSync(path.join(again.spool, 'results', `${v.id}.json`), v.file);
    again.client.submit({ id: v.id, op: 'echo', args: { msg: 'hello' } });
    expect(again.client.status(v.id)).toEqual(JSON.parse(v.text));
  });
});

const signerOf = (k: KeyFile) => ({ keyId: k.key_id, secret: decodeSecret(k.secret) });
const signer = signerOf(hostVectors.key_file);

function signedResult(id: string, over: Partial<ResultDoc> = {}, by = signer): string {
  const doc: ResultDoc = {
    v: 1, id, op: 'echo', state: 'running', updated_at: new Date().toISOString(), exit_code: null, signal: null, stdout: '', stderr: '',
    stdout_truncated: false, stderr_truncated: false, started_at: new Date().toISOString(), finished_at: null, duration_ms: null, error: null, ...over,
  };
  return signHostDoc('result', by, JSON.stringify(doc, null, 2) + '\n');
}

function signedMessage(msgId: string, over: Partial<InboxMessage> = {}): string {
  const msg: InboxMessage = { v: 1, id: msgId, kind: 'notice', created_at: new Date().toISOString(), ref: null, text: `message ${msgId}`, ...over };
  return signHostDoc('inbox', signer, JSON.stringify(msg, null, 2) + '\n');
}

const unsignedRefusal = (id: string, code: string) =>
  JSON.stringify({ v: 1, id, op: null, state: 'rejected', updated_at: new Date().toISOString(), error: { code, message: `refused: ${code}` } });

/** The inbox name the host would give a message written `n` ms after 2026-12-01. */
const messageName = (n: number) => `${new Date(Date.parse('2026-12-01T00:00:00.000Z') + n).toISOString().replace(/[-:]/g, '').replace('.', '')}-${n.toString(16).padStart(8, '0')}`;

describe('what a writer of the spool cannot make the client believe', () => {
  const spools: string[] = [];
  afterAll(() => spools.forEach((s) => rmSync(s, { recursive: true, force: true })));
  function spoolWith() {
    const spool = mkdtempSync(path.join(os.tmpdir(), 'client-attacks-'));
    spools.push(spool);
    for (const d of ['queue', 'tmp', 'results', 'inbox']) mkdirSync(path.join(spool, d));
    const notices: string[] = [];
    return { spool, notices, client: new SpoolClient(spool, hostVectors.key_file, { onNotice: (t) => notices.push(t) }) };
  }

  it('an unsigned refusal put over a result the host signed is not a rejection; once the host signed for this key, its "unknown key" is not believed, and a revoked key only with the host\'s signed message', () => {
    const { spool, client } = spoolWith();
    const result = (id: string) => path.join(spool, 'results', `${id}.json`);
    writeFileSync(result('seen-1'), signedResult('seen-1'));
    expect(client.status('seen-1').state).toBe('running');
    writeFileSync(result('seen-1'), unsignedRefusal('seen-1', 'bad_signature'));
    expect(client.status('seen-1')).toEqual({ id: 'seen-1', state: 'unknown' });
    // Another id, never seen signed: the host has signed for this key, so it knows it.
    for (const code of ['unknown_key', 'bad_signature', 'bad_envelope', 'revoked_key']) {
      writeFileSync(result(`other-${code}`), unsignedRefusal(`other-${code}`, code));
      expect(client.status(`other-${code}`)).toEqual({ id: `other-${code}`, state: 'unknown' });
    }
    writeFileSync(path.join(spool, 'inbox', `${messageName(1)}.json`), signedMessage(messageName(1), { kind: 'key_revoked', ref: hostVectors.key_file.key_id, text: 'revoked by the human' }));
    expect(client.status('other-revoked_key')).toMatchObject({ state: 'rejected', unsigned: true, error: { code: 'revoked_key' }, revoked: 'revoked by the human' });
    expect(client.status('other-unknown_key').state).toBe('unknown');
    // A process that has seen nothing signed for its key (a key the host does not know) is told of the refusal.
    const fresh = spoolWith();
    writeFileSync(path.join(fresh.spool, 'results', 'r-1.json'), unsignedRefusal('r-1', 'unknown_key'));
    expect(fresh.client.status('r-1')).toMatchObject({ state: 'rejected', unsigned: true, error: { code: 'unknown_key' } });
  });

  it('an inbox flood is bounded: only the host\'s names, the newest 256, none over 64 KiB, and nothing read again while the folder is unchanged', () => {
    const { spool, client } = spoolWith();
    const inbox = (name: string) => path.join(spool, 'inbox', name);
    // Sparse files of 8 MiB under the host's names, and signed messages under names it never gives.
    for (let i = 0; i < 300; i++) {
      writeFileSync(inbox(`${messageName(i)}.json`), '');
      truncateSync(inbox(`${messageName(i)}.json`), 8 * 1024 * 1024);
    }
    writeFileSync(inbox('20261201T000000000Z-0000000g.json'), signedMessage('20261201T000000000Z-0000000g'));
    writeFileSync(inbox('other.json'), signedMessage('other'));
    const big = messageName(1000);
    writeFileSync(inbox(`${big}.json`), signedMessage(big, { text: 'x'.repeat(64 * 1024) }));
    expect(client.inbox()).toEqual([]);
    // Real messages, more than are looked at: the newest 256 are.
    for (let i = 2000; i < 2000 + INBOX_NEWEST + 10; i++) writeFileSync(inbox(`${messageName(i)}.json`), signedMessage(messageName(i)));
    const msgs = client.inbox();
    expect(msgs.length).toBe(INBOX_NEWEST);
    expect(msgs[0]!.id).toBe(messageName(2010));
    expect(msgs.at(-1)!.id).toBe(messageName(2000 + INBOX_NEWEST + 9));
    // Changed in place (the host never does that): the folder's names and version are as they were, so nothing is read.
    writeFileSync(inbox(`${messageName(2100)}.json`), 'garbage');
    expect(client.inbox()).toEqual(msgs);
    // A new message changes the folder: read again.
    writeFileSync(inbox(`${messageName(5000)}.json`), signedMessage(messageName(5000)));
    const again = client.inbox();
    expect(again.at(-1)!.id).toBe(messageName(5000));
    expect(again.some((m) => m.id === messageName(2100))).toBe(false);
    expect(readdirSync(path.join(spool, 'inbox')).length).toBe(300 + 3 + INBOX_NEWEST + 10 + 1);
  });

  it('does not list an inbox folder unchanged since it was listed, but lists again one changed within the same second (a name added in that clock tick)', () => {
    const { spool, client } = spoolWith();
    const dir = path.join(spool, 'inbox');
    const add = (i: number, mtime: Date) => {
      writeFileSync(path.join(dir, `${messageName(i)}.json`), signedMessage(messageName(i)));
      utimesSync(dir, mtime, mtime); // as if the folder had not changed since that time
    };
    // The folder changed just now: a listing taken now may miss a name added in the same tick, so the next look lists it again.
    const now = new Date();
    add(1, now);
    expect(client.inbox().map((m) => m.id)).toEqual([messageName(1)]);
    add(2, now);
    expect(client.inbox().map((m) => m.id)).toEqual([messageName(1), messageName(2)]);
    // Long unchanged when listed: its listing stands while its version does (this name, added under the old version, is not listed).
    const old = new Date(Date.now() - 60_000);
    utimesSync(dir, old, old);
    expect(client.inbox()).toHaveLength(2);
    add(3, old);
    expect(client.inbox()).toHaveLength(2);
    // Any change of the folder's version: listed again.
    utimesSync(dir, now, now);
    expect(client.inbox().map((m) => m.id)).toContain(messageName(3));
  });

  it.each(['../../x', '../queue/a', 'a/b', '.hidden', ''])('refuses to look at the id %j (it would name files outside results/ and queue/)', async (id) => {
    const { client } = spoolWith();
    expect(() => client.status(id)).toThrow(BadRequestIdError);
    await expect(client.wait(id)).rejects.toThrow(BadRequestIdError);
    await expect(client.follow(id, () => {})).rejects.toThrow(BadRequestIdError);
  });
});

describe('following a huge planted log', () => {
  const spools: string[] = [];
  afterAll(() => spools.forEach((s) => rmSync(s, { recursive: true, force: true })));
  const GiB = 1024 * 1024 * 1024;
  /** A run the host signed as running, whose log someone made a sparse 100 GiB file starting with `head`. */
  function hugeLog(id: string, head = 'started\n', onNotice?: (t: string) => void) {
    const spool = mkdtempSync(path.join(os.tmpdir(), 'client-huge-log-'));
    spools.push(spool);
    for (const d of ['queue', 'tmp', 'results', 'inbox']) mkdirSync(path.join(spool, d));
    writeFileSync(path.join(spool, 'results', `${id}.json`), signedResult(id));
    const log = path.join(spool, 'results', `${id}.log`);
    writeFileSync(log, head);
    truncateSync(log, 100 * GiB);
    const notices: string[] = [];
    const client = new SpoolClient(spool, hostVectors.key_file, { onNotice: (t) => (notices.push(t), onNotice?.(t)) });
    return { spool, notices, client };
  }

  it('an abort between chunks ends follow after one step, not at the end of the file', async () => {
    const { client } = hugeLog('huge-abort');
    const stop = new AbortController();
    let streamed = 0;
    const s = await client.follow('huge-abort', (b) => {
      streamed += b.length;
      stop.abort();
    }, { signal: stop.signal });
    expect(s.state).toBe('running');
    expect(streamed).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
  });

  it('streams no more than the cap, says so once, and --timeout still ends it', async () => {
    const stop = new AbortController();
    const { client, notices } = hugeLog('huge-cap', 'started\n', (t) => t.includes('larger than') && stop.abort());
    let streamed = 0;
    const capped = await client.follow('huge-cap', (b) => void (streamed += b.length), { signal: stop.signal });
    expect(streamed).toBe(MAX_LIVE_LOG_BYTES);
    expect(capped.log).toEqual({ streamed: MAX_LIVE_LOG_BYTES, check: 'capped' });
    expect(notices.filter((n) => n.includes('larger than'))).toEqual([`results/huge-cap.log is larger than ${MAX_LIVE_LOG_BYTES} bytes: the live output is not shown further; the host's signed output is given at the end`]);
    // A timeout (what dw run --timeout gives) ends a follow of the same file too.
    const timed = await client.follow('huge-cap', () => {}, { timeoutMs: 500 });
    expect(timed.state).toBe('running');
  });

  it('at the end reads no further than the log_bytes the host signed, and a log that differs is a mismatch', async () => {
    const id = 'huge-final';
    const { spool, client } = hugeLog(id, 'PLANTED\n');
    const real = 'started\n';
    writeFileSync(path.join(spool, 'results', `${id}.json`), signedResult(id, {
      state: 'succeeded', exit_code: 0, stdout: real, finished_at: new Date().toISOString(), duration_ms: 1,
      log_bytes: real.length, log_sha256: createHash('sha256').update(real).digest('hex'),
    }));
    let streamed = '';
    const s: Status & { log: unknown } = await client.follow(id, (b) => void (streamed += b.toString()));
    expect(s.state).toBe('succeeded');
    expect(s.log).toEqual({ streamed: real.length, check: 'mismatch' });
    expect(streamed).toBe('PLANTED\n');
  });

  it("a log of the largest output an operation may keep, and the host's line past it, is followed whole and checked", async () => {
    const id = 'largest';
    const { spool, client } = hugeLog(id);
    const log = Buffer.concat([Buffer.alloc(64 * 1024 * 1024, 'x'), Buffer.from('\n[dumbwaiter: output limit of 67108864 bytes reached; the rest is not logged]\n')]);
    writeFileSync(path.join(spool, 'results', `${id}.log`), log);
    writeFileSync(path.join(spool, 'results', `${id}.json`), signedResult(id, {
      state: 'succeeded', exit_code: 0, finished_at: new Date().toISOString(), duration_ms: 1,
      log_bytes: log.length, log_sha256: createHash('sha256').update(log).digest('hex'),
    }));
    let streamed = 0;
    const s: Status & { log: unknown } = await client.follow(id, (b) => void (streamed += b.length));
    expect(s.log).toEqual({ streamed: log.length, check: 'match' });
    expect(streamed).toBe(log.length);
  });
});

describe('request ids', () => {
  it('fresh ids are valid, unique and sort by time', () => {
    const a = newRequestId(1_000_000);
    const b = newRequestId(2_000_000);
    expect(isRequestId(a) && isRequestId(b)).toBe(true);
    expect(a < b).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, () => newRequestId())).size).toBe(1000);
  });

  it('stable ids depend on the key, op, args and intent, not on the order of the args', () => {
    const id = stableId('k_a', 'test', { a: 1, b: [1, 2] }, 'run the tests');
    expect(isRequestId(id)).toBe(true);
    expect(stableId('k_a', 'test', { b: [1, 2], a: 1 }, 'run the tests')).toBe(id);
    expect(stableId('k_a', 'test', { a: 1, b: [1, 2] }, 'another reason')).not.toBe(id);
    expect(stableId('k_a', 'test', { a: 2, b: [1, 2] }, 'run the tests')).not.toBe(id);
    // Another sandbox's key: it cannot foresee this one's ids.
    expect(stableId('k_b', 'test', { a: 1, b: [1, 2] }, 'run the tests')).not.toBe(id);
    expect(() => stableId('not a key', 'test', {})).toThrow(/not a key id/);
  });

  it("settles as docs/vectors-host-v1.json says: an uncertain result whose reconcile check is still to come is waited for", () => {
    expect(hostVectors.settled.length).toBeGreaterThan(0);
    for (const v of hostVectors.settled) expect(isSettled(v.doc), v.about).toBe(v.settled);
  });

  it('stable ids are those of docs/vectors-host-v1.json', () => {
    expect(hostVectors.stable_id.length).toBeGreaterThan(0);
    for (const v of hostVectors.stable_id) {
      const args = JSON.parse(v.args_json) as Record<string, unknown>;
      expect(canonicalJson({ args, intent: v.intent, key_id: v.key_id, op: v.op }), v.about).toBe(v.canonical);
      expect(stableId(v.key_id, v.op, args, v.intent), v.about).toBe(v.stable_id);
    }
  });
});

describe('key files', () => {
  it('accepts a valid key file and refuses broken ones', () => {
    expect(parseKeyFile(JSON.stringify(key))).toEqual(key);
    expect(() => parseKeyFile('{')).toThrow(KeyFileError);
    expect(() => parseKeyFile(JSON.stringify({ ...key, v: 2 }))).toThrow(KeyFileError);
    expect(() => parseKeyFile(JSON.stringify({ ...key, secret: 'short' }))).toThrow('32 bytes');
  });
});

describe('typed arguments from name=value', () => {
  const schema = {
    type: 'object',
    properties: {
      workers: { type: 'integer', minimum: 1, maximum: 8 },
      verbose: { type: 'boolean' },
      files: { type: 'array', items: { type: 'string', pattern: '^(?:[a-z.]+)$' }, maxItems: 2 },
      mode: { type: 'string', enum: ['fast', 'slow'] },
    },
    required: ['workers'],
    additionalProperties: false,
  };

  it('converts by type', () => {
    expect(argsFromPairs(schema, ['workers=4', 'verbose=yes', 'files=a.ts', 'files=b.ts', 'mode=fast'])).toEqual({
      workers: 4,
      verbose: true,
      files: ['a.ts', 'b.ts'],
      mode: 'fast',
    });
    expect(argsFromPairs(schema, ['workers=1', 'files=["x.ts"]'])).toEqual({ workers: 1, files: ['x.ts'] });
  });

  it.each([
    [['workers=4.5'], 'argument "workers" must be an integer'],
    [['workers=0'], 'at least 1'],
    [['workers=1', 'verbose=maybe'], 'argument "verbose" must be true or false'],
    [['workers=1', 'files=a', 'files=b', 'files=c'], 'more than 2 items'],
    [['workers=1', 'mode=medium'], 'argument "mode" must be one of'],
    [['workers=1', 'nope=1'], 'unknown argument "nope"'],
    [[], 'missing required argument "workers"'],
    [['workers'], 'is not name=value'],
    [['workers=1', '__proto__=x'], 'unknown argument "__proto__"'],
    [['workers=1', 'constructor=x'], 'unknown argument "constructor"'],
    [['workers=1', 'toString=x'], 'unknown argument "toString"'],
  ])('refuses %j naming the argument', (pairs, message) => {
    expect(() => argsFromPairs(schema, pairs)).toThrow(ArgError);
    expect(() => argsFromPairs(schema, pairs)).toThrow(message);
  });

  it('checks a whole JSON object too', () => {
    expect(() => checkArgs(schema, { workers: '4' })).toThrow('must be an integer');
    expect(() => checkArgs(schema, { workers: 4 })).not.toThrow();
  });
});

describe('what is said of live output that was not checked to be the host\'s', () => {
  const done = resultDoc({ id: 'r-1', state: 'succeeded', stdout: 'out\n' });
  const lost = resultDoc({ id: 'r-1', state: 'uncertain', started_at: '2026-12-04T10:00:00.000Z' });
  const CASES: [LogCheck['check'], ResultDoc, string | null][] = [
    ['none', done, null],
    ['match', done, null],
    ['mismatch', done, "the live output above is not what the host logged (results/r-1.log was changed by someone else); the host's signed output follows:"],
    ['capped', done, `the live output above stopped at ${MAX_LIVE_LOG_BYTES} bytes of results/r-1.log; the host's signed output follows:`],
    ['unchecked', done, "the live output above could not be checked against the host's log (its result has no log_sha256), so it may not be the host's; the host's signed output follows:"],
    // After a crash: why there is no hash, and no "follows:" when nothing follows.
    ['unchecked', lost, "the live output above could not be checked against the host's log (the host stopped while it ran), so it may not be the host's; the host's signed result holds none of its output"],
  ];

  it.each(CASES)('%s', (check, s, note) => {
    expect(logCheckNote(check, s, 'stream')).toBe(note);
  });

  it('dw.py says the same', () => {
    expect(dwPy(CASES.map(([check, s]) => ['log_note', check, s])).map((r) => r.ok ?? null)).toEqual(CASES.map(([check, s]) => logCheckNote(check, s, 'stream')));
  });

  it('says it of progress notifications before the result that holds the output', () => {
    expect(logCheckNote('mismatch', done, 'progress')).toBe("the live output sent as progress is not what the host logged (results/r-1.log was changed by someone else); the output above is the host's signed one");
  });
});
