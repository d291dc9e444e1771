// The sandbox client library: what it signs is what the host verifies; what it believes is only what
// the host signed for its key (the host vectors); ids; typed arguments.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SpoolClient } from '../../../../shared/client/spoolClient';
import { newRequestId, stableId } from '../../../../shared/client/requestIds';
import { argsFromPairs, checkArgs, ArgError } from '../../../../shared/client/typedArgs';
import { parseKeyFile, KeyFileError } from '../../../../shared/client/keyFile';
import { authenticate } from '../../../../main/core/daemon/authenticate';
import { isRequestId } from '../../../../shared/protocol/ids';
import type { KeyFile } from '../../../../shared/protocol/types';

const vectors = JSON.parse(readFileSync(path.join(import.meta.dirname, '../../../fixtures/vectors-v1.json'), 'utf8')) as {
  valid: { key_file: KeyFile; envelope: { payload: string; mac: string } }[];
};
const key = vectors.valid[0]!.key_file;
const hostKey = { ...key, name: 'k', scope: 'write' as const, ops: null, created_at: '', revoked_at: null, rotated_to: null, last_used_at: null };

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

  it('refuses to sign without a key', () => {
    expect(() => new SpoolClient('/nowhere', null).envelope({ id: 'x', op: 'echo' })).toThrow('key file');
  });
});

interface HostVectors {
  key_file: KeyFile;
  other_key_file: KeyFile;
  request_hash: { about: string; key_id: string; op: string; args_json: string; request_hash: string }[];
  signed: { about: string; kind: 'result' | 'inbox'; id: string; text: string; file: string }[];
  refused: { about: string; kind: 'result' | 'inbox'; file: string; why: string }[];
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
    const { client } = spoolWith({ ...hostVectors.key_file, key_id: v.key_id });
    const id = client.submit({ op: v.op, args: JSON.parse(v.args_json) as Record<string, unknown> });
    expect(client.requestHashOf(id)).toBe(v.request_hash);
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

describe('request ids', () => {
  it('fresh ids are valid, unique and sort by time', () => {
    const a = newRequestId(1_000_000);
    const b = newRequestId(2_000_000);
    expect(isRequestId(a) && isRequestId(b)).toBe(true);
    expect(a < b).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, () => newRequestId())).size).toBe(1000);
  });

  it('stable ids depend on op, args and intent, not on key order', () => {
    const id = stableId('test', { a: 1, b: [1, 2] }, 'run the tests');
    expect(isRequestId(id)).toBe(true);
    expect(stableId('test', { b: [1, 2], a: 1 }, 'run the tests')).toBe(id);
    expect(stableId('test', { a: 1, b: [1, 2] }, 'another reason')).not.toBe(id);
    expect(stableId('test', { a: 2, b: [1, 2] }, 'run the tests')).not.toBe(id);
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
  ])('refuses %j naming the argument', (pairs, message) => {
    expect(() => argsFromPairs(schema, pairs)).toThrow(ArgError);
    expect(() => argsFromPairs(schema, pairs)).toThrow(message);
  });

  it('checks a whole JSON object too', () => {
    expect(() => checkArgs(schema, { workers: '4' })).toThrow('must be an integer');
    expect(() => checkArgs(schema, { workers: 4 })).not.toThrow();
  });
});
