// The verifier against the protocol's signing vectors (test/fixtures/vectors-v1.json), plus the
// envelope and payload parsers and the refusal codes of protocol-v1 section 3.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { authenticate } from '../../../../main/core/daemon/authenticate';
import type { KeyWithSecret } from '../../../../main/core/keys/keyStore';
import { parseEnvelope, parsePayload } from '../../../../shared/protocol/envelope';
import { computeMac, decodeSecret, macMatches } from '../../../../shared/protocol/sign';
import type { Envelope, KeyFile } from '../../../../shared/protocol/types';

interface ValidVector {
  key_file: KeyFile;
  envelope: Envelope;
}
interface InvalidVector extends ValidVector {
  why: string;
  expect: string;
}
interface Vectors {
  valid: ValidVector[];
  invalid: InvalidVector[];
}

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'vectors-v1.json');
const vectors = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Vectors;

function keyOf(file: KeyFile, revokedAt: string | null = null): KeyWithSecret {
  return {
    key_id: file.key_id,
    name: `test key ${file.key_id}`,
    scope: 'write',
    ops: null,
    created_at: '2026-11-01T00:00:00Z',
    revoked_at: revokedAt,
    rotated_to: null,
    last_used_at: null,
    secret: file.secret,
    spool: 'default',
  };
}

/** A lookup that knows exactly one key, and records what it was asked for. */
function lookupOnly(key: KeyWithSecret): { lookup: (id: string) => KeyWithSecret | null; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    lookup: (id: string) => {
      asked.push(id);
      return id === key.key_id ? key : null;
    },
  };
}

function bytesOf(envelope: unknown): Buffer {
  return Buffer.from(JSON.stringify(envelope), 'utf8');
}

function payloadId(payload: string): string {
  return (JSON.parse(payload) as { id: string }).id;
}

// A key of our own, for envelopes this file signs itself (the signer is checked against the vectors first).
const K1 = vectors.valid[0]!.key_file;
const K1_SECRET = decodeSecret(K1.secret);

function signed(payload: string, keyId = K1.key_id, secret = K1_SECRET): Envelope {
  return { v: 1, key_id: keyId, payload, mac: computeMac(secret, keyId, payload) };
}

function payloadText(fields: Record<string, unknown>): string {
  return JSON.stringify({ id: 'req-x1', op: 'echo', args: { msg: 'hi' }, created_at: '2026-11-29T08:00:00Z', ...fields });
}

describe('the fixture', () => {
  it('holds valid and invalid vectors', () => {
    expect(vectors.valid.length).toBeGreaterThanOrEqual(4);
    expect(vectors.invalid.length).toBeGreaterThanOrEqual(4);
  });
});

describe('computeMac and macMatches against the vectors', () => {
  it.each(vectors.valid.map((v, i) => [i, v] as const))('valid vector %i: computeMac reproduces the mac and macMatches accepts it', (_i, v) => {
    const secret = decodeSecret(v.key_file.secret);
    expect(secret).toHaveLength(32);
    expect(computeMac(secret, v.envelope.key_id, v.envelope.payload)).toBe(v.envelope.mac);
    expect(macMatches(secret, v.envelope.key_id, v.envelope.payload, v.envelope.mac)).toBe(true);
  });

  const wellFormedInvalid = vectors.invalid.filter((v) => /^[0-9a-f]{64}$/.test(v.envelope.mac));
  it.each(wellFormedInvalid.map((v) => [v.why, v] as const))('invalid vector "%s": macMatches refuses it', (_why, v) => {
    // Over the envelope's own key_id: for a changed key_id this shows that the MAC binds the key id.
    const secret = decodeSecret(v.key_file.secret);
    expect(computeMac(secret, v.envelope.key_id, v.envelope.payload)).not.toBe(v.envelope.mac);
    expect(macMatches(secret, v.envelope.key_id, v.envelope.payload, v.envelope.mac)).toBe(false);
  });

  it('binds the key id: the same payload and secret under another key id give another mac', () => {
    const v = vectors.valid[0]!;
    const secret = decodeSecret(v.key_file.secret);
    expect(computeMac(secret, 'k_test2', v.envelope.payload)).not.toBe(v.envelope.mac);
    expect(macMatches(secret, 'k_test2', v.envelope.payload, v.envelope.mac)).toBe(false);
  });

  it('signs the exact payload bytes: re-serialising the payload changes the mac', () => {
    const v = vectors.valid.find((x) => x.envelope.payload.includes('\n'))!;
    const secret = decodeSecret(v.key_file.secret);
    const reserialised = JSON.stringify(JSON.parse(v.envelope.payload));
    expect(reserialised).not.toBe(v.envelope.payload);
    expect(macMatches(secret, v.envelope.key_id, reserialised, v.envelope.mac)).toBe(false);
  });

  it('gives 64 lowercase hex digits', () => {
    expect(computeMac(K1_SECRET, 'k', 'x')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('macMatches is false (and does not throw) for a mac of the wrong length', () => {
    const v = vectors.valid[0]!;
    const secret = decodeSecret(v.key_file.secret);
    expect(macMatches(secret, v.envelope.key_id, v.envelope.payload, v.envelope.mac.slice(0, 62))).toBe(false);
    expect(macMatches(secret, v.envelope.key_id, v.envelope.payload, '')).toBe(false);
  });

  it('decodeSecret refuses padding, non-base64url characters and secrets that are not 32 bytes', () => {
    expect(() => decodeSecret(K1.secret + '=')).toThrow(/base64url/);
    expect(() => decodeSecret(K1.secret.replace(/./, '+'))).toThrow(/base64url/);
    expect(() => decodeSecret('')).toThrow();
    expect(() => decodeSecret(Buffer.alloc(31).toString('base64url'))).toThrow(/32 bytes/);
    expect(() => decodeSecret(Buffer.alloc(33).toString('base64url'))).toThrow(/32 bytes/);
  });
});

describe('authenticate() and the vectors', () => {
  it.each(vectors.valid.map((v, i) => [i, v] as const))('valid vector %i verifies with its key file', (_i, v) => {
    const key = keyOf(v.key_file);
    const { lookup, asked } = lookupOnly(key);
    const id = payloadId(v.envelope.payload);
    const r = authenticate(bytesOf(v.envelope), id, lookup);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (!r.ok) return;
    expect(asked).toEqual([v.envelope.key_id]);
    expect(r.key).toBe(key);
    expect(r.mac).toBe(v.envelope.mac);
    const raw = JSON.parse(v.envelope.payload) as Record<string, unknown>;
    expect(r.payload.id).toBe(id);
    expect(r.payload.op).toBe(raw.op);
    expect(r.payload.args).toEqual(raw.args ?? {});
    expect(r.payload.created_at).toBe(raw.created_at);
    expect(r.payload.expires_at).toBe(raw.expires_at);
    expect(r.payload.intent).toBe(raw.intent);
  });

  it.each(vectors.invalid.map((v) => [v.why, v] as const))('invalid vector "%s" is refused with its expected code', (_why, v) => {
    const { lookup } = lookupOnly(keyOf(v.key_file));
    const r = authenticate(bytesOf(v.envelope), payloadId(v.envelope.payload), lookup);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe(v.expect);
    expect(r.message.length).toBeGreaterThan(0);
  });

  it('a valid vector under a file name that differs from its payload id is bad_envelope', () => {
    const v = vectors.valid[0]!;
    const r = authenticate(bytesOf(v.envelope), 'req-9999', lookupOnly(keyOf(v.key_file)).lookup);
    expect(r).toMatchObject({ ok: false, code: 'bad_envelope', keyId: v.envelope.key_id, op: 'echo' });
    if (!r.ok) expect(r.message).toMatch(/does not match the file name/);
  });

  it('a revoked key gives revoked_key (before the MAC is checked)', () => {
    const v = vectors.valid[0]!;
    const key = keyOf(v.key_file, '2026-11-28T00:00:00Z');
    const good = authenticate(bytesOf(v.envelope), payloadId(v.envelope.payload), lookupOnly(key).lookup);
    expect(good).toMatchObject({ ok: false, code: 'revoked_key', keyId: v.envelope.key_id });
    const badMac = { ...v.envelope, mac: '0'.repeat(64) };
    expect(authenticate(bytesOf(badMac), payloadId(v.envelope.payload), lookupOnly(key).lookup)).toMatchObject({ ok: false, code: 'revoked_key' });
  });

  it('an unknown key gives unknown_key, whatever the mac', () => {
    const v = vectors.valid[0]!;
    const none = () => null;
    expect(authenticate(bytesOf(v.envelope), payloadId(v.envelope.payload), none)).toMatchObject({ ok: false, code: 'unknown_key', keyId: 'k_test1' });
    const other = keyOf({ v: 1, key_id: 'k_other', secret: v.key_file.secret });
    expect(authenticate(bytesOf(v.envelope), payloadId(v.envelope.payload), lookupOnly(other).lookup)).toMatchObject({ ok: false, code: 'unknown_key' });
  });

  it('the right key id with another secret gives bad_signature', () => {
    const v = vectors.valid[0]!;
    const wrong = keyOf({ v: 1, key_id: v.key_file.key_id, secret: Buffer.alloc(32, 7).toString('base64url') });
    expect(authenticate(bytesOf(v.envelope), payloadId(v.envelope.payload), lookupOnly(wrong).lookup)).toMatchObject({ ok: false, code: 'bad_signature' });
  });

  it('invalid UTF-8 bytes are bad_envelope, and the key is never looked up', () => {
    const v = vectors.valid[0]!;
    const text = JSON.stringify(v.envelope);
    const { lookup, asked } = lookupOnly(keyOf(v.key_file));
    for (const bad of [Buffer.from([0xff]), Buffer.from([0xc3, 0x28]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xe2, 0x82])]) {
      // The invalid bytes sit inside the payload string, where JSON.parse of a lossy decode would accept them.
      const at = text.indexOf('hello');
      const bytes = Buffer.concat([Buffer.from(text.slice(0, at), 'utf8'), bad, Buffer.from(text.slice(at), 'utf8')]);
      const r = authenticate(bytes, 'req-0001', lookup);
      expect(r).toMatchObject({ ok: false, code: 'bad_envelope', keyId: null });
      if (!r.ok) expect(r.message).toMatch(/UTF-8/);
    }
    expect(asked).toEqual([]);
  });

  it('non-ASCII text encoded as valid UTF-8 verifies (the second vector, byte for byte)', () => {
    const v = vectors.valid.find((x) => [...x.envelope.payload].some((ch) => ch.codePointAt(0)! > 0x7f))!;
    expect(v).toBeDefined();
    const r = authenticate(Buffer.from(JSON.stringify(v.envelope), 'utf8'), payloadId(v.envelope.payload), lookupOnly(keyOf(v.key_file)).lookup);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.payload.args).toEqual({ msg: 'héllo ✓ "quoted" \\ back' });
  });

  it('an envelope that is not JSON, or has a bad shape, is bad_envelope before any key lookup', () => {
    const { lookup, asked } = lookupOnly(keyOf(K1));
    const good = signed(payloadText({}));
    const cases: Buffer[] = [
      Buffer.from('not json'),
      Buffer.from(''),
      Buffer.from('[]'),
      bytesOf({ ...good, v: 2 }),
      bytesOf({ ...good, mac: good.mac.toUpperCase() }),
      bytesOf({ ...good, payload: JSON.parse(good.payload) as unknown }),
      bytesOf({ ...good, key_id: 'k test1' }),
    ];
    for (const b of cases) expect(authenticate(b, 'req-x1', lookup)).toMatchObject({ ok: false, code: 'bad_envelope' });
    expect(asked).toEqual([]);
  });

  it('checks the MAC before the payload: a tampered, malformed payload is bad_signature', () => {
    const env = signed(payloadText({}));
    const tampered = { ...env, payload: '{"id": ' };
    expect(authenticate(bytesOf(tampered), 'req-x1', lookupOnly(keyOf(K1)).lookup)).toMatchObject({ ok: false, code: 'bad_signature' });
  });

  it('a correctly signed but malformed payload is bad_envelope (after the MAC)', () => {
    const { lookup } = lookupOnly(keyOf(K1));
    const payloads = [
      '{"id": ',
      '"just a string"',
      payloadText({ created_at: 'yesterday' }),
      payloadText({ op: '' }),
      payloadText({ args: [1, 2] }),
      payloadText({ intent: 'x'.repeat(2001) }),
      payloadText({ id: '.hidden' }),
    ];
    for (const p of payloads) {
      const r = authenticate(bytesOf(signed(p)), 'req-x1', lookup);
      expect(r, p).toMatchObject({ ok: false, code: 'bad_envelope', keyId: K1.key_id });
    }
  });

  it('a request signed by this file with the vector key verifies', () => {
    const p = payloadText({ intent: 'because', expires_at: '2026-11-29T09:00:00Z' });
    const r = authenticate(bytesOf(signed(p)), 'req-x1', lookupOnly(keyOf(K1)).lookup);
    expect(r).toMatchObject({ ok: true, payload: { id: 'req-x1', op: 'echo', args: { msg: 'hi' }, intent: 'because', expires_at: '2026-11-29T09:00:00Z' } });
  });
});

describe('parseEnvelope', () => {
  const good = signed(payloadText({}));
  const text = (o: unknown) => JSON.stringify(o);

  it('accepts a well-formed envelope and returns exactly its four fields', () => {
    const r = parseEnvelope(text({ ...good, extra: 'ignored' }));
    expect(r).toEqual({ ok: true, value: { v: 1, key_id: good.key_id, payload: good.payload, mac: good.mac } });
  });

  it('refuses text that is not JSON', () => {
    for (const t of ['', '{', '{"v":1,}', 'nul', "{'v':1}"]) {
      const r = parseEnvelope(t);
      expect(r.ok, t).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/not JSON/);
    }
  });

  it('refuses JSON that is not an object', () => {
    for (const t of ['null', '[]', '"x"', '1', 'true', text([good])]) expect(parseEnvelope(t).ok, t).toBe(false);
  });

  it('refuses any version but the number 1', () => {
    for (const v of [0, 2, '1', 1.5, null, undefined, true]) {
      const r = parseEnvelope(text({ ...good, v }));
      expect(r.ok, String(v)).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/version/);
    }
  });

  it('refuses a missing or malformed key_id', () => {
    for (const key_id of [undefined, '', 'k test', 'k/../x', 'k.1', 'é', 'k'.repeat(65), 7]) {
      expect(parseEnvelope(text({ ...good, key_id })).ok, String(key_id)).toBe(false);
    }
    expect(parseEnvelope(text({ ...good, key_id: 'K'.repeat(64) })).ok).toBe(true);
  });

  it('refuses a payload that is not a string', () => {
    for (const payload of [undefined, null, 1, { id: 'req-x1' }, ['x']]) {
      const r = parseEnvelope(text({ ...good, payload }));
      expect(r.ok, JSON.stringify(payload)).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/payload must be a string/);
    }
  });

  it('refuses an uppercase, short, long or non-hex mac', () => {
    for (const mac of [good.mac.toUpperCase(), good.mac.slice(0, 63), good.mac + '0', 'g'.repeat(64), ` ${good.mac.slice(1)}`, undefined, 5]) {
      const r = parseEnvelope(text({ ...good, mac }));
      expect(r.ok, String(mac)).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/mac/);
    }
    // One uppercase digit is enough to refuse.
    const oneUpper = good.mac.replace(/[a-f]/, (c) => c.toUpperCase());
    expect(oneUpper).not.toBe(good.mac);
    expect(parseEnvelope(text({ ...good, mac: oneUpper })).ok).toBe(false);
  });
});

describe('parsePayload', () => {
  it('accepts a full payload and defaults args to {}', () => {
    expect(parsePayload('{"id":"a","op":"x","created_at":"2026-11-29T08:00:00Z"}')).toEqual({
      ok: true,
      value: { id: 'a', op: 'x', args: {}, created_at: '2026-11-29T08:00:00Z' },
    });
    const r = parsePayload(payloadText({ expires_at: '2026-11-29T09:00:00.123+02:00', intent: 'why' }));
    expect(r).toEqual({
      ok: true,
      value: { id: 'req-x1', op: 'echo', args: { msg: 'hi' }, created_at: '2026-11-29T08:00:00Z', expires_at: '2026-11-29T09:00:00.123+02:00', intent: 'why' },
    });
  });

  it('refuses text that is not JSON or not an object', () => {
    for (const t of ['', '{', 'null', '[]', '"s"', '42']) expect(parsePayload(t).ok, t).toBe(false);
  });

  it('refuses a missing or invalid id', () => {
    for (const id of [undefined, '', '.x', '-x', 'a/b', 'a b', 'x.tmp', 'a'.repeat(129), 12]) {
      const r = parsePayload(payloadText({ id }));
      expect(r.ok, String(id)).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/id/);
    }
    expect(parsePayload(payloadText({ id: 'a'.repeat(128) })).ok).toBe(true);
  });

  it('refuses a missing, empty or non-string op', () => {
    for (const op of [undefined, '', 3, null]) expect(parsePayload(payloadText({ op })).ok, String(op)).toBe(false);
  });

  it('refuses args that are not an object', () => {
    for (const args of [null, [], 'a=b', 3]) expect(parsePayload(payloadText({ args })).ok, JSON.stringify(args)).toBe(false);
  });

  it('refuses a created_at that is missing or not RFC 3339', () => {
    for (const created_at of [
      undefined,
      '',
      'yesterday',
      '2026-11-29',
      '2026-11-29T08:00:00', // no offset
      '2026-11-29 08:00:00Z', // space
      '2026-11-29T08:00Z', // no seconds
      '2026-13-29T08:00:00Z', // month 13
      '2026-11-29T25:00:00Z', // hour 25
      '2026-11-29T08:00:00+0100', // offset without colon
      1764403200000,
    ]) {
      const r = parsePayload(payloadText({ created_at }));
      expect(r.ok, String(created_at)).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/created_at/);
    }
    for (const created_at of ['2026-11-29T08:00:00Z', '2026-11-29t08:00:00z', '2026-11-29T08:00:00.5-05:30']) {
      expect(parsePayload(payloadText({ created_at })).ok, created_at).toBe(true);
    }
  });

  it('refuses an expires_at that is present but not RFC 3339', () => {
    for (const expires_at of [null, 'soon', 3600]) {
      const r = parsePayload(payloadText({ expires_at }));
      expect(r.ok, String(expires_at)).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/expires_at/);
    }
  });

  it('allows an intent of up to 2000 characters (not UTF-16 units) and refuses longer or non-string ones', () => {
    expect(parsePayload(payloadText({ intent: 'x'.repeat(2000) })).ok).toBe(true);
    expect(parsePayload(payloadText({ intent: '😀'.repeat(2000) })).ok).toBe(true); // 4000 UTF-16 units
    for (const intent of ['x'.repeat(2001), '😀'.repeat(2001), 5, null]) {
      const r = parsePayload(payloadText({ intent }));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/intent/);
    }
  });
});
