// The sandbox client library: what it signs is what the host verifies; ids; typed arguments.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
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
