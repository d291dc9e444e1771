// Property-based tests (fast-check) of everything a hostile sandbox controls: the envelope and payload
// parsers, the verifier, the argument validator, the argv templating and path arguments.
//
// fast-check picks a new seed at every run and prints it (with the shrunk counterexample) on failure.
// To replay a failure: FUZZ_SEED=<seed> npx vitest run test/unit/fuzz.test.ts
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllowlist } from '../../main/core/allowlist/load';
import { planRun } from '../../main/core/allowlist/plan';
import type { Allowlist, Operation } from '../../main/core/allowlist/types';
import { validateArgs } from '../../main/core/allowlist/validateArgs';
import { authenticate, type Authenticated, type Refused } from '../../main/core/daemon/authenticate';
import type { KeyWithSecret } from '../../main/core/keys/keyStore';
import { parseEnvelope, parsePayload } from '../../shared/protocol/envelope';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

function params<T>(numRuns: number, extra: fc.Parameters<T> = {}): fc.Parameters<T> {
  return { numRuns, ...(SEED !== undefined ? { seed: SEED } : {}), ...extra };
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A lone (unpaired) UTF-16 surrogate: a JS string can hold one, UTF-8 cannot encode it. */
const LONE_SURROGATE = /\p{Cs}/u;

// ---------------------------------------------------------------------------------------------------
// Generators shared by several properties
// ---------------------------------------------------------------------------------------------------

/** Characters that a shell, a glob, a naive split or a JSON/UTF-8 layer would treat specially. */
const NASTY = [' ', '  ', '"', "'", '\\', ';', '$(', ')', '${', '`', '\n', '\r\n', '\t', '\v', '\f', '*', '?', '[', ']', '{', '}', '{{', '}}',
  '{a}', '|', '&&', '>', '<', '~', '-', '--', '/', '..', '.', '#', '%s', '\u0085', '\u00a0', '\u2028', '\u2029', '\u200b', '\ufeff',
  'é', 'e\u0301', '😀', '\u{10ffff}', '\u001b[31m', '\u007f'];

/** Any code point except NUL, U+FFFD and lone surrogates (those three are fuzzed on their own). */
const cleanUnit: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }),
  fc.constantFrom(...NASTY),
).filter((u) => !u.includes('\0') && !u.includes('\ufffd') && !LONE_SURROGATE.test(u));

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
/** Everything a JSON string can carry: with NUL, U+FFFD and lone surrogates. */
const anyUnit: fc.Arbitrary<string> = fc.oneof(cleanUnit, loneSurrogate, fc.constantFrom('\0', '\ufffd'));

const requestIdArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,40}$/).filter((s) => !s.endsWith('.tmp'));
const isoArb = fc
  .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2199-12-31T23:59:59Z'), noInvalidDate: true })
  .map((d) => d.toISOString());
const timeArb = fc.oneof(
  { weight: 3, arbitrary: isoArb },
  isoArb.map((s) => s.replace('Z', '+05:30').replace('T', 't')),
  isoArb.map((s) => s.slice(0, -1)), // no zone: invalid
  fc.constantFrom('2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01 00:00:00Z', '', 'now'),
  fc.string({ maxLength: 30 }),
);

// ---------------------------------------------------------------------------------------------------
// Keys and the verifier's oracle
// ---------------------------------------------------------------------------------------------------

const secretOf = (seed: number) => Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 7 + seed) & 0xff)).toString('base64url');

function key(key_id: string, secret: string | null, revoked_at: string | null = null): KeyWithSecret {
  return { key_id, name: key_id, scope: 'write', ops: null, created_at: '2026-01-01T00:00:00Z', revoked_at, rotated_to: null, last_used_at: null, secret, spool: 'default' };
}

const KEYS = new Map<string, KeyWithSecret>([
  ['k_test1', key('k_test1', secretOf(1))],
  ['k_test2', key('k_test2', secretOf(2))], // one byte away from k_test1: a changed key_id finds another real key
  ['k_revoked', key('k_revoked', secretOf(3), '2026-02-01T00:00:00Z')],
  ['k_sealed', key('k_sealed', null)],
]);
const lookup = (id: string): KeyWithSecret | null => KEYS.get(id) ?? null;
const SIGNING_KEYS = ['k_test1', 'k_test2'] as const;
const CODES = ['bad_envelope', 'unknown_key', 'revoked_key', 'bad_signature'];

/** HMAC computed here, with node:crypto directly, not with the code under test. */
function macOf(keyId: string, payload: string): string {
  const secret = Buffer.from(KEYS.get(keyId)!.secret!, 'base64url');
  return createHmac('sha256', secret).update(`dumbwaiter-request-v1\n${keyId}\n${payload}`, 'utf8').digest('hex');
}

/** What protocol-v1 section 3 says the verifier must answer, derived from the spec, step by step. */
function expectedVerdict(bytes: Buffer, fileId: string): string {
  let env: unknown;
  try {
    env = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return 'bad_envelope';
  }
  if (!isObj(env) || env.v !== 1) return 'bad_envelope';
  if (typeof env.key_id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(env.key_id)) return 'bad_envelope';
  if (typeof env.payload !== 'string' || typeof env.mac !== 'string' || !/^[0-9a-f]{64}$/.test(env.mac)) return 'bad_envelope';
  const k = KEYS.get(env.key_id);
  if (!k) return 'unknown_key';
  if (k.revoked_at) return 'revoked_key';
  if (k.secret === null) return 'unknown_key';
  if (macOf(env.key_id, env.payload) !== env.mac) return 'bad_signature';
  const p = parsePayload(env.payload); // fuzzed on its own below
  if (!p.ok || p.value.id !== fileId) return 'bad_envelope';
  return 'ok';
}

/** No exception (the call itself is inside the property), a documented code, and the verdict the spec gives. */
function checkVerdict(bytes: Buffer, fileId: string): Authenticated | Refused {
  const r = authenticate(bytes, fileId, lookup);
  if (!r.ok) {
    expect(CODES).toContain(r.code);
    expect(typeof r.message).toBe('string');
  } else {
    expect(r.payload.id).toBe(fileId);
    expect(r.key.revoked_at).toBeNull();
  }
  expect(allowedVerdicts(bytes, fileId)).toContain(r.ok ? 'ok' : r.code);
  return r;
}

/**
 * The verdicts allowed. A payload string that is not well-formed Unicode (a lone surrogate, written as a
 * \uXXXX escape) has no exact UTF-8 bytes to sign: refusing it is right too. Today it is not refused (see
 * the lone-surrogate property below, which pins that bug); this keeps the other properties true either way.
 */
function allowedVerdicts(bytes: Buffer, fileId: string): string[] {
  const v = expectedVerdict(bytes, fileId);
  const env = decoded(bytes);
  if (env && typeof env.payload === 'string' && LONE_SURROGATE.test(env.payload)) {
    return [v, 'bad_envelope', ...(v === 'ok' ? ['bad_signature'] : [])];
  }
  return [v];
}

// ---------------------------------------------------------------------------------------------------
// Signed envelopes, serialised in several styles, with the byte spans of the signed fields
// ---------------------------------------------------------------------------------------------------

type SignedField = 'key_id' | 'payload' | 'mac';
interface Style {
  indent: boolean;
  /** Non-ASCII written as \uXXXX escapes, as Python's json.dumps does by default. */
  ascii: boolean;
}
interface Built {
  keyId: string;
  payloadText: string;
  mac: string;
  fileId: string;
  bytes: Buffer;
  /** Byte ranges [start, end) of the encoded values (quotes included) of the signed fields. */
  spans: Record<SignedField, [number, number]>;
}
interface EnvelopeSpec {
  keyId: string;
  payload: Record<string, unknown>;
  payloadStyle: Style;
  envStyle: Style;
  order: string[];
  extras: { note?: unknown; zz?: unknown };
}

const asciiEscape = (json: string) => json.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));

function encode(v: unknown, style: Style): string {
  const j = style.indent ? JSON.stringify(v, null, 2) : JSON.stringify(v);
  return style.ascii ? asciiEscape(j) : j;
}

function buildEnvelope(s: EnvelopeSpec): Built {
  const payloadText = encode(s.payload, s.payloadStyle);
  const mac = macOf(s.keyId, payloadText);
  const values: Record<string, unknown> = { v: 1, key_id: s.keyId, payload: payloadText, mac, ...s.extras };
  let text = '{';
  const spans = {} as Record<SignedField, [number, number]>;
  s.order
    .filter((k) => Object.hasOwn(values, k))
    .forEach((k, i) => {
      if (i > 0) text += ',';
      if (s.envStyle.indent) text += '\n  ';
      text += encode(k, s.envStyle) + (s.envStyle.indent ? ': ' : ':');
      const start = Buffer.byteLength(text);
      text += encode(values[k], s.envStyle);
      if (k === 'key_id' || k === 'payload' || k === 'mac') spans[k] = [start, Buffer.byteLength(text)];
    });
  text += s.envStyle.indent ? '\n}\n' : '}';
  return { keyId: s.keyId, payloadText, mac, fileId: s.payload.id as string, bytes: Buffer.from(text, 'utf8'), spans };
}

const styleArb = fc.record({ indent: fc.boolean(), ascii: fc.boolean() });

function payloadArb(unit: fc.Arbitrary<string>): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      id: requestIdArb,
      op: fc.oneof(fc.constantFrom('echo', 'npm-test', 'dumbwaiter.cancel'), fc.string({ unit, minLength: 1, maxLength: 12 })),
      args: fc.dictionary(fc.string({ unit, maxLength: 8 }), fc.jsonValue({ stringUnit: unit, maxDepth: 3 }), { maxKeys: 4 }),
      created_at: isoArb,
      expires_at: isoArb,
      intent: fc.string({ unit, maxLength: 40 }),
    },
    { requiredKeys: ['id', 'op', 'created_at'] },
  );
}

function envelopeSpecArb(unit: fc.Arbitrary<string>): fc.Arbitrary<EnvelopeSpec> {
  return fc.record({
    keyId: fc.constantFrom(...SIGNING_KEYS),
    payload: payloadArb(unit),
    payloadStyle: styleArb,
    envStyle: styleArb,
    order: fc.shuffledSubarray(['v', 'key_id', 'payload', 'mac', 'note', 'zz'], { minLength: 6, maxLength: 6 }),
    extras: fc.record({ note: fc.string({ unit, maxLength: 30 }), zz: fc.jsonValue({ stringUnit: unit, maxDepth: 2 }) }, { requiredKeys: [] }),
  });
}

type Where = 'any' | 'signed' | 'unsigned';
interface Mutation {
  env: Built;
  where: Where;
  pos: number;
  byte: number;
}

function mutationArb(envs: fc.Arbitrary<Built>, wheres: Where[]): fc.Arbitrary<Mutation> {
  return fc.record({
    env: envs,
    where: fc.constantFrom(...wheres),
    pos: fc.nat(),
    // Any byte, but often whitespace, hex digits or printable ASCII: the changes most likely to still parse.
    byte: fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x20, 0x09, 0x0a, 0x0d), fc.constantFrom(...Buffer.from('0123456789abcdefABCDEF')), fc.integer({ min: 0x20, max: 0x7e })),
  });
}

function positions(b: Built, where: Where): number[] {
  const inSigned = (i: number) => Object.values(b.spans).some(([s, e]) => i >= s && i < e);
  const all = Array.from({ length: b.bytes.length }, (_, i) => i);
  return where === 'any' ? all : all.filter((i) => inSigned(i) === (where === 'signed'));
}

/** Applies a mutation: one byte replaced by another, different one. */
function mutate(m: Mutation): { bytes: Buffer; at: number; from: number; to: number } {
  const ps = positions(m.env, m.where);
  const at = ps[m.pos % ps.length]!;
  const bytes = Buffer.from(m.env.bytes);
  const from = bytes[at]!;
  const to = m.byte === from ? from ^ 0x01 : m.byte;
  bytes[at] = to;
  return { bytes, at, from, to };
}

/** The envelope's fields as JSON sees them (null when the bytes are not UTF-8 JSON of an object). */
function decoded(bytes: Buffer): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    return isObj(v) ? v : null;
  } catch {
    return null;
  }
}

function sameSignedFields(dec: Record<string, unknown> | null, b: Built): boolean {
  return dec !== null && dec.v === 1 && dec.key_id === b.keyId && dec.payload === b.payloadText && dec.mac === b.mac;
}

/** The core claim: after a one-byte change, a request verifies iff the signed fields are unchanged, and then it is the same request. */
function checkMutation(m: Mutation, stats?: { verified: number; refused: number }): void {
  const original = authenticate(m.env.bytes, m.env.fileId, lookup);
  expect(original.ok).toBe(true);
  const { bytes } = mutate(m);
  const r = checkVerdict(bytes, m.env.fileId);
  if (sameSignedFields(decoded(bytes), m.env)) {
    if (!r.ok) throw new Error(`a JSON-insignificant change was refused: ${r.code}`);
    if (!original.ok) return;
    expect(r.key.key_id).toBe(original.key.key_id);
    expect(r.mac).toBe(original.mac);
    expect(r.payload).toEqual(original.payload);
    if (stats) stats.verified++;
  } else {
    if (r.ok) throw new Error(`a change to the signed fields verified: ${JSON.stringify(r.payload)} (was ${m.env.payloadText})`);
    if (stats) stats.refused++;
  }
}

// ---------------------------------------------------------------------------------------------------
// The envelope and payload parsers
// ---------------------------------------------------------------------------------------------------

describe('envelope parser', () => {
  /** What parseEnvelope must answer, from protocol-v1 section 3. */
  function checkEnvelope(text: string): void {
    const r = parseEnvelope(text);
    let raw: unknown;
    let json = true;
    try {
      raw = JSON.parse(text);
    } catch {
      json = false;
    }
    const valid =
      json &&
      isObj(raw) &&
      raw.v === 1 &&
      typeof raw.key_id === 'string' &&
      /^[A-Za-z0-9_-]{1,64}$/.test(raw.key_id) &&
      typeof raw.payload === 'string' &&
      raw.payload.isWellFormed() && // a lone surrogate has no UTF-8 bytes to sign
      typeof raw.mac === 'string' &&
      /^[0-9a-f]{64}$/.test(raw.mac);
    expect(r.ok).toBe(valid);
    if (r.ok && isObj(raw)) expect(r.value).toEqual({ v: 1, key_id: raw.key_id, payload: raw.payload, mac: raw.mac });
    if (!r.ok) expect(typeof r.message).toBe('string');
  }

  const hex64 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
  /** Mostly valid fields (so that some envelopes pass), each one sometimes wrong or missing. */
  const envelopeLike = fc
    .tuple(
      fc.record({
        v: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, fc.constantFrom(0, 2, '1', 1.5, true, null), fc.jsonValue({ maxDepth: 2 })),
        key_id: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom('k_test1', 'k_revoked', 'k_sealed', 'nobody', 'a'.repeat(64)) },
          fc.constantFrom('', 'a'.repeat(65), 'k test', 'k\n', 'ké'),
          fc.string({ unit: anyUnit, maxLength: 70 }),
          fc.jsonValue({ maxDepth: 1 }),
        ),
        payload: fc.oneof({ weight: 4, arbitrary: fc.oneof(fc.string({ unit: anyUnit, maxLength: 60 }), fc.json()) }, fc.jsonValue({ maxDepth: 2 })),
        mac: fc.oneof(
          { weight: 4, arbitrary: hex64 },
          hex64.map((h) => h.toUpperCase()),
          hex64.map((h) => h.slice(1)),
          hex64.map((h) => h + '0'),
          fc.string({ maxLength: 70 }),
          fc.jsonValue({ maxDepth: 1 }),
        ),
        extra: fc.jsonValue({ maxDepth: 2 }),
      }),
      fc.subarray(['v', 'key_id', 'payload', 'mac', 'extra']),
      fc.boolean(),
    )
    .map(([o, drop, dropping]) => Object.fromEntries(Object.entries(o).filter(([k]) => !(dropping && drop.includes(k)))));

  it('never throws on arbitrary text, and accepts exactly the well-formed envelopes', () => {
    fc.assert(fc.property(fc.string({ unit: anyUnit, maxLength: 300 }), checkEnvelope), params(1000));
  });

  it('never throws on arbitrary JSON, and accepts exactly the well-formed envelopes', () => {
    fc.assert(fc.property(fc.json({ stringUnit: anyUnit }), checkEnvelope), params(1000));
  });

  it('never throws on envelope-shaped objects with arbitrary fields', () => {
    let accepted = 0;
    fc.assert(
      fc.property(envelopeLike, styleArb, (o, style) => {
        checkEnvelope(encode(o, style));
        if (parseEnvelope(encode(o, style)).ok) accepted++;
      }),
      params(1000),
    );
    expect(accepted).toBeGreaterThan(0);
  });

  // Once an escape: the refusal message serialised the untrusted `v`, and a deep nest overflowed the stack.
  it('never throws on deeply nested JSON (up to 64 KiB) in any envelope field', () => {
    type Deep = { depth: number; container: 'array' | 'object'; field: 'v' | 'key_id' | 'payload' | 'mac' | 'zz' };
    const deepArb: fc.Arbitrary<Deep> = fc.record({
      depth: fc.integer({ min: 1, max: 32_000 }),
      container: fc.constantFrom('array', 'object'),
      field: fc.constantFrom('v', 'key_id', 'payload', 'mac', 'zz'),
    });
    fc.assert(
      fc.property(deepArb, ({ depth, container, field }) => {
        const [open, close] = container === 'array' ? ['[', ']'] : ['{"a":', '}'];
        const d = Math.min(depth, Math.floor(65_000 / (open.length + close.length)));
        const nested = open.repeat(d) + (container === 'array' ? '' : '1') + close.repeat(d);
        const fields: Record<string, string> = { v: '1', key_id: '"k_test1"', payload: '"{}"', mac: JSON.stringify('0'.repeat(64)) };
        fields[field] = nested;
        const text = '{' + Object.entries(fields).map(([k, v]) => `"${k}":${v}`).join(',') + '}';
        checkEnvelope(text);
        checkVerdict(Buffer.from(text, 'utf8'), 'r1');
      }),
      params(100, { examples: [[{ depth: 32_000, container: 'array', field: 'v' }]], endOnFailure: true }),
    );
  });
});

describe('payload parser', () => {
  function checkPayload(text: string): void {
    const r = parsePayload(text);
    if (!r.ok) {
      expect(typeof r.message).toBe('string');
      return;
    }
    const raw = JSON.parse(text) as Record<string, unknown>;
    const p = r.value;
    expect(isObj(raw)).toBe(true);
    expect(p.id).toBe(raw.id);
    expect(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(p.id) && !p.id.endsWith('.tmp')).toBe(true);
    expect(typeof p.op === 'string' && p.op.length > 0).toBe(true);
    expect(isObj(p.args)).toBe(true);
    expect(p.args).toEqual(raw.args ?? {});
    for (const t of [p.created_at, p.expires_at]) {
      if (t === undefined) continue;
      expect(t).toMatch(/^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/);
      expect(Number.isNaN(Date.parse(t))).toBe(false);
    }
    expect(p.created_at).toBe(raw.created_at);
    if (p.intent !== undefined) expect([...p.intent].length).toBeLessThanOrEqual(2000);
  }

  /** Mostly valid fields (so that some payloads pass), each one sometimes wrong or missing. */
  const payloadLike = fc
    .tuple(
      fc.record({
        id: fc.oneof({ weight: 4, arbitrary: requestIdArb }, fc.constantFrom('', '.x', 'a.tmp', 'a/b', 'a'.repeat(129), '-a', 'é'), fc.jsonValue({ maxDepth: 1 })),
        op: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('echo', 'dumbwaiter.cancel') }, fc.constant(''), fc.string({ unit: anyUnit, maxLength: 10 }), fc.jsonValue({ maxDepth: 1 })),
        args: fc.oneof(
          { weight: 4, arbitrary: fc.dictionary(fc.string({ unit: anyUnit, maxLength: 8 }), fc.jsonValue({ stringUnit: anyUnit, maxDepth: 4 }), { maxKeys: 4 }) },
          fc.jsonValue({ maxDepth: 3 }),
        ),
        created_at: fc.oneof({ weight: 4, arbitrary: timeArb }, fc.jsonValue({ maxDepth: 1 })),
        expires_at: fc.oneof({ weight: 4, arbitrary: timeArb }, fc.jsonValue({ maxDepth: 1 })),
        intent: fc.oneof(
          { weight: 4, arbitrary: fc.string({ unit: anyUnit, maxLength: 50 }) },
          fc.constantFrom('x'.repeat(2000), 'x'.repeat(2001), '😀'.repeat(2000), '😀'.repeat(2001)),
          fc.jsonValue({ maxDepth: 1 }),
        ),
      }),
      fc.subarray(['id', 'op', 'args', 'created_at', 'expires_at', 'intent']),
      fc.boolean(),
    )
    .map(([o, drop, dropping]) => Object.fromEntries(Object.entries(o).filter(([k]) => !(dropping && drop.includes(k)))));

  it('never throws on arbitrary text or JSON', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ unit: anyUnit, maxLength: 300 }), fc.json({ stringUnit: anyUnit })), checkPayload), params(1000));
  });

  it('never throws on payload-shaped objects, and what it accepts is well-formed', () => {
    let accepted = 0;
    fc.assert(
      fc.property(payloadLike, styleArb, (o, style) => {
        checkPayload(encode(o, style));
        if (parsePayload(encode(o, style)).ok) accepted++;
      }),
      params(1000),
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('refuses (never throws on) args nested deeply, up to the 64 KiB request limit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 32_000 }), fc.constantFrom('array', 'object'), (depth, container) => {
        const [open, close] = container === 'array' ? ['[', ']'] : ['{"a":', '}'];
        const d = Math.min(depth, Math.floor(65_000 / (open.length + close.length)));
        const text = `{"id":"r1","op":"echo","created_at":"2026-01-01T00:00:00Z","args":{"x":${open.repeat(d)}${container === 'array' ? '' : '1'}${close.repeat(d)}}}`;
        const r = parsePayload(text);
        // args itself is one level; more than 16 in all is refused.
        expect(r.ok).toBe(d + 1 <= 16);
      }),
      params(200, { examples: [[32_000, 'array'], [10_833, 'object'], [15, 'array'], [16, 'array']] }),
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The verifier
// ---------------------------------------------------------------------------------------------------

describe('verifier (authenticate)', () => {
  const cleanEnvelopes = envelopeSpecArb(cleanUnit).map(buildEnvelope);

  it('never throws on arbitrary bytes, and refuses them with a documented code', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.oneof(requestIdArb, fc.string()), (b, fileId) => {
        checkVerdict(Buffer.from(b), fileId);
      }),
      params(1000),
    );
  });

  it('never throws on envelopes with known or unknown keys and arbitrary payloads, signed or not', () => {
    const verdicts = new Set<string>();
    const caseArb = fc.record({
      keyId: fc.oneof(fc.constantFrom('k_test1', 'k_test2', 'k_revoked', 'k_sealed', 'k_nobody'), fc.string({ maxLength: 10 })),
      payload: fc.oneof(
        fc.string({ unit: anyUnit, maxLength: 80 }),
        fc.json({ stringUnit: anyUnit }),
        // Well-formed text: a lone surrogate anywhere makes a payload bad_envelope, and 'ok' must be reached.
        payloadArb(cleanUnit).map((p) => JSON.stringify(p)),
      ),
      sign: fc.boolean(),
      signAs: fc.constantFrom(...SIGNING_KEYS),
      fileIdFromPayload: fc.boolean(),
      otherFileId: requestIdArb,
      style: styleArb,
    });
    fc.assert(
      fc.property(caseArb, (c) => {
        const mac = c.sign ? macOf(KEYS.get(c.keyId)?.secret ? c.keyId : c.signAs, c.payload) : macOf(c.signAs, c.payload + ' ');
        let fileId = c.otherFileId;
        if (c.fileIdFromPayload) {
          try {
            const p: unknown = JSON.parse(c.payload);
            if (isObj(p) && typeof p.id === 'string') fileId = p.id;
          } catch {
            /* not JSON: any id will do */
          }
        }
        const r = checkVerdict(Buffer.from(encode({ v: 1, key_id: c.keyId, payload: c.payload, mac }, c.style), 'utf8'), fileId);
        verdicts.add(r.ok ? 'ok' : r.code);
      }),
      params(1000),
    );
    // Every branch of the verifier was reached.
    expect([...verdicts].sort()).toEqual(['bad_envelope', 'bad_signature', 'ok', 'revoked_key', 'unknown_key']);
  });

  it('a one-byte change anywhere verifies only when the signed fields are unchanged, and then as the same request', () => {
    const stats = { verified: 0, refused: 0 };
    fc.assert(fc.property(mutationArb(cleanEnvelopes, ['any', 'signed', 'unsigned']), (m) => checkMutation(m, stats)), params(1000));
    // Both outcomes happen: whitespace and unsigned extra fields may change and still verify.
    expect(stats.verified).toBeGreaterThan(0);
    expect(stats.refused).toBeGreaterThan(0);
  });

  it('any one-byte change inside key_id, payload or mac is refused (unless JSON decodes it to the very same string)', () => {
    fc.assert(
      fc.property(mutationArb(cleanEnvelopes, ['signed']), (m) => {
        const { bytes, at, from, to } = mutate(m);
        const r = checkVerdict(bytes, m.env.fileId);
        if (!r.ok) return;
        // The only one-byte change inside a signed field that JSON ignores: the letter case of a hex
        // digit in a \uXXXX escape. The decoded string, the MAC input, is then exactly the same.
        expect(sameSignedFields(decoded(bytes), m.env)).toBe(true);
        expect(String.fromCharCode(from).toLowerCase()).toBe(String.fromCharCode(to).toLowerCase());
        expect(bytes.subarray(Math.max(0, at - 5), at).toString('latin1')).toMatch(/\\u[0-9a-fA-F]{0,3}$/);
      }),
      params(1000),
    );
  });

  // Once an escape: a lone surrogate was hashed as U+FFFD, so two payloads shared a MAC; such payloads
  // are now bad_envelope, and so is a payload whose JSON holds one as an escape. So the signed
  // originals hold U+FFFD and surrogate pairs, and the mutations make lone surrogates of their escapes.
  it('a one-byte change inside the payload is refused, also around U+FFFD and lone surrogates', () => {
    const withSurrogates = fc.oneof(cleanUnit, fc.constant('\u{1F600}'), fc.constant('\ufffd'));
    const envs = envelopeSpecArb(withSurrogates).map((s) => buildEnvelope({ ...s, envStyle: { ...s.envStyle, ascii: true } }));
    const example = buildEnvelope({
      keyId: 'k_test1',
      payload: { id: 'r1', op: 'echo', args: { msg: '\ufffd' }, created_at: '2026-01-01T00:00:00Z' },
      payloadStyle: { indent: false, ascii: false },
      envStyle: { indent: false, ascii: true },
      order: ['v', 'key_id', 'payload', 'mac'],
      extras: {},
    });
    const at = example.bytes.indexOf('\\ufffd') + 2; // the first "f" after "\u"
    const signed = positions(example, 'signed');
    const mutation: Mutation = { env: example, where: 'signed', pos: signed.indexOf(at), byte: 'd'.charCodeAt(0) };
    fc.assert(
      fc.property(mutationArb(envs, ['signed']), (m) => checkMutation(m)),
      params(300, { examples: [[mutation]], endOnFailure: true }),
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// Real folders and symlinks, for path arguments
// ---------------------------------------------------------------------------------------------------

interface Tree {
  base: string;
  root: string;
  rootLink: string;
  outside: string;
}

/**
 * base/
 *   root/        the allowed root: in each folder a/ and b/ (a file at the deepest level) and
 *                link-in (inside: relative, absolute, out-and-back-in, via ..), link-out (outside:
 *                absolute, relative with .., a chain of two links, through the root's own link and ..,
 *                to root-evil),
 *                dangling (missing relative, missing absolute, a link to itself)
 *   root-link -> root   (the operations' cwd and root are given through this link)
 *   root-evil/   a real folder whose path starts with the root's (a string prefix check would let it in)
 *   outside/     a/, b/, link-in -> root/a (back inside), link-out -> base, dangling
 */
function makeTree(): Tree {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dw-fuzz-')));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  const rootLink = path.join(base, 'root-link');
  fs.mkdirSync(root);
  fs.mkdirSync(path.join(outside, 'a', 'b'), { recursive: true });
  fs.mkdirSync(path.join(outside, 'b'));
  fs.symlinkSync(path.join(root, 'a'), path.join(outside, 'link-in'));
  fs.symlinkSync(base, path.join(outside, 'link-out'));
  fs.symlinkSync('nothing', path.join(outside, 'dangling'));
  fs.symlinkSync(root, rootLink);
  fs.mkdirSync(`${root}-evil`);

  let n = 0;
  const populate = (dir: string, level: number): void => {
    const k = n++;
    const at = (name: string) => path.join(dir, name);
    fs.mkdirSync(at('a'));
    if (level < 2) fs.mkdirSync(at('b'));
    else fs.writeFileSync(at('b'), 'a file\n');
    switch (k % 4) {
      case 0: fs.symlinkSync('a', at('link-in')); break;
      case 1: fs.symlinkSync(path.join(root, 'b'), at('link-in')); break;
      case 2: fs.symlinkSync(path.join(outside, 'link-in'), at('link-in')); break; // out, then back in
      default: fs.symlinkSync(path.relative(dir, root) || '.', at('link-in')); break; // up with ..
    }
    switch (k % 5) {
      case 0: fs.symlinkSync(outside, at('link-out')); break;
      case 4: fs.symlinkSync(`${root}-evil`, at('link-out')); break; // a sibling whose name starts like the root's
      case 1: fs.symlinkSync(path.relative(dir, path.join(outside, 'a')), at('link-out')); break;
      case 2:
        fs.symlinkSync(path.join(outside, 'b'), at('.hop'));
        fs.symlinkSync('.hop', at('link-out'));
        break;
      default: fs.symlinkSync(path.join(rootLink, '..', 'outside'), at('link-out')); break;
    }
    switch (k % 3) {
      case 0: fs.symlinkSync('missing/x', at('dangling')); break;
      case 1: fs.symlinkSync(path.join(base, 'nowhere'), at('dangling')); break;
      default: fs.symlinkSync('dangling', at('dangling')); break; // a loop
    }
    if (level < 2) for (const sub of ['a', 'b']) populate(at(sub), level + 1);
  };
  populate(root, 0);
  return { base, root, rootLink, outside };
}

function lexists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** An accepted path must already be real and, or its deepest existing folder, inside the root. */
function expectInside(value: unknown, root: string, mustExist: boolean): void {
  expect(typeof value).toBe('string');
  const v = value as string;
  expect(path.isAbsolute(v)).toBe(true);
  expect(path.normalize(v)).toBe(v);
  let cur = v;
  const rest: string[] = [];
  while (!lexists(cur)) {
    rest.unshift(path.basename(cur));
    cur = path.dirname(cur);
  }
  if (mustExist) expect(rest).toEqual([]);
  expect(rest).not.toContain('..');
  const real = fs.realpathSync(cur); // throws on a dangling or looping link: a failure too
  expect(real).toBe(cur); // no link left anywhere in the accepted value
  const realRoot = fs.realpathSync(root);
  const rel = path.relative(realRoot, path.join(real, ...rest));
  expect(rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel)), `${v} is outside ${realRoot}`).toBe(true);
}

function yamlOf(ops: { name: string; command: string[]; cwd: string; args: Record<string, unknown> }[]): string {
  // JSON is YAML: no quoting surprises.
  return JSON.stringify({ version: 1, operations: ops.map((o) => ({ ...o, scope: 'read' })) }, null, 2);
}

function opOf(allowlist: Allowlist, name: string): Operation {
  const o = allowlist.operations.get(name);
  if (!o) throw new Error(`no operation ${name}`);
  return o;
}

let tree: Tree;
beforeAll(() => {
  tree = makeTree();
});
afterAll(() => {
  if (tree) fs.rmSync(tree.base, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------
// The argument validator
// ---------------------------------------------------------------------------------------------------

describe('argument validator (validateArgs)', () => {
  const DECLARED = ['s', 'e', 'p', 'i', 'flag', 'b', 'path', 'newpath', 'list', 'ints', 'paths', 'constructor', 'toString', 'opt'];
  let allowlist: Allowlist;
  let op: Operation;
  beforeAll(() => {
    allowlist = parseAllowlist(
      yamlOf([
        {
          name: 'all',
          command: ['/bin/echo', '{s}', '--e={e}', '{p}', '{i}', '{flag}', '{b}', '{path}', '{newpath}', '{list}', '{ints}', '{paths}', '{constructor}', '{toString}', 'x{opt}y'],
          cwd: tree.rootLink,
          args: {
            s: { type: 'string', pattern: '[a-z ]*', max_length: 10 },
            e: { type: 'string', enum: ['one', 'two'] },
            p: { type: 'string', default: 'dflt' },
            i: { type: 'integer', min: -5, max: 5 },
            flag: { type: 'boolean', flag: '--verbose' },
            b: { type: 'boolean' },
            path: { type: 'path' },
            newpath: { type: 'path', must_exist: false, required: false },
            list: { type: 'array', items: { type: 'string' }, max_items: 3 },
            ints: { type: 'array', items: { type: 'integer', min: 0 }, required: false },
            paths: { type: 'array', items: { type: 'path' }, required: false },
            constructor: { type: 'string', required: false },
            toString: { type: 'integer', required: false },
            opt: { type: 'string', required: false },
          },
        },
      ]),
    );
    op = opOf(allowlist, 'all');
  });

  const noDash = (x: unknown) => typeof x === 'string' && !x.includes('\0') && !x.startsWith('-');
  const isInt = (x: unknown, min = -Infinity, max = Infinity) => typeof x === 'number' && Number.isSafeInteger(x) && x >= min && x <= max;

  /** What an accepted set of values must look like, per the declared types. */
  function conforms(values: Record<string, unknown>, args: Record<string, unknown>): void {
    for (const k of Object.keys(values)) expect(DECLARED).toContain(k);
    for (const k of ['s', 'e', 'p', 'i', 'path', 'list']) expect(Object.hasOwn(values, k), k).toBe(true);
    const s = values.s as string;
    expect(typeof s === 'string' && /^[a-z ]*$/.test(s) && [...s].length <= 10).toBe(true);
    expect(['one', 'two']).toContain(values.e);
    expect(noDash(values.p)).toBe(true);
    expect(isInt(values.i, -5, 5)).toBe(true);
    for (const k of ['flag', 'b']) if (Object.hasOwn(values, k)) expect(typeof values[k]).toBe('boolean');
    expectInside(values.path, tree.root, true);
    if (Object.hasOwn(values, 'newpath')) expectInside(values.newpath, tree.root, false);
    const list = values.list as unknown[];
    expect(Array.isArray(list) && list.length <= 3 && list.every(noDash)).toBe(true);
    if (Object.hasOwn(values, 'ints')) expect((values.ints as unknown[]).every((x) => isInt(x, 0))).toBe(true);
    if (Object.hasOwn(values, 'paths')) for (const x of values.paths as unknown[]) expectInside(x, tree.root, true);
    if (Object.hasOwn(values, 'constructor')) expect(noDash(values.constructor)).toBe(true);
    if (Object.hasOwn(values, 'toString')) expect(isInt(values.toString)).toBe(true);
    if (Object.hasOwn(values, 'opt')) expect(typeof values.opt === 'string' && !values.opt.includes('\0')).toBe(true);
    // Everything but paths is passed on exactly as given.
    for (const k of Object.keys(args)) if (!['path', 'newpath', 'paths'].includes(k)) expect(values[k]).toEqual(args[k]);
  }

  const pathish = fc.oneof(
    fc.array(fc.constantFrom('a', 'b', '..', '.', 'link-out', 'link-in', 'dangling', ''), { minLength: 1, maxLength: 5 }).map((s) => s.join('/')),
    fc.constantFrom('/', '/etc', '~', '\0', 'a\0b'),
  );
  const valueArb: fc.Arbitrary<unknown> = fc.oneof(
    fc.jsonValue({ stringUnit: anyUnit, maxDepth: 3 }),
    fc.string({ unit: anyUnit, maxLength: 12 }),
    fc.stringMatching(/^[a-z ]{0,12}$/),
    fc.constantFrom('one', 'two', 'ONE', '', '-x', '--', 'a\0b', 'dflt'),
    pathish,
    fc.oneof(fc.integer({ min: -8, max: 8 }), fc.double(), fc.constantFrom(2 ** 53, -(2 ** 53), 1e308, -0, 0.5)),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.oneof(fc.string({ unit: anyUnit, maxLength: 6 }), fc.integer({ min: -2, max: 5 }), pathish, fc.constant(null)), { maxLength: 5 }),
  );
  const nameArb = fc.oneof(fc.constantFrom(...DECLARED, '__proto__', 'hasOwnProperty', 'valueOf', 'prototype'), fc.string({ unit: anyUnit, maxLength: 8 }));
  const anyStr = fc.string({ unit: anyUnit, maxLength: 12 });
  /** Per declared argument: values of about the right type, valid or just off. */
  const plausible: Record<string, fc.Arbitrary<unknown>> = {
    s: fc.oneof(fc.stringMatching(/^[a-z ]{9,12}$/), fc.constantFrom('abcdéfghij', 'abc😀'), anyStr),
    e: fc.constantFrom('one', 'two', 'three', '', 'one '),
    p: fc.oneof(fc.string({ unit: cleanUnit, maxLength: 8 }), fc.constantFrom('-x', 'a\0')),
    i: fc.integer({ min: -7, max: 7 }),
    flag: fc.oneof(fc.boolean(), fc.constant('true')),
    b: fc.oneof(fc.boolean(), fc.constant(0)),
    path: pathish,
    newpath: pathish,
    list: fc.oneof(
      fc.array(fc.oneof({ weight: 5, arbitrary: fc.stringMatching(/^[a-z]{0,6}$/) }, fc.string({ unit: cleanUnit, maxLength: 6 }), fc.constantFrom('-a', 'a\0')), { maxLength: 5 }),
      fc.constantFrom(['a', 'b', 'c'], ['a', 'b', 'c', 'd']),
    ),
    ints: fc.array(fc.integer({ min: -2, max: 5 }), { maxLength: 3 }),
    paths: fc.array(pathish, { maxLength: 3 }),
    constructor: anyStr,
    toString: fc.oneof(fc.integer(), anyStr),
    opt: anyStr,
  };
  const entryArb = fc.oneof(
    { weight: 3, arbitrary: fc.oneof(...DECLARED.map((name) => fc.tuple(fc.constant(name), plausible[name]!))) },
    fc.tuple(nameArb, valueArb),
  );
  const noLeadingDash = (x: string) => !x.startsWith('-');
  /** Per declared argument: valid values (the accepted branch must be well exercised too). */
  const valid: Record<string, fc.Arbitrary<unknown>> = {
    s: fc.stringMatching(/^[a-z ]{0,10}$/),
    e: fc.constantFrom('one', 'two'),
    p: fc.string({ unit: cleanUnit, maxLength: 8 }).filter(noLeadingDash),
    i: fc.integer({ min: -5, max: 5 }),
    flag: fc.boolean(),
    b: fc.boolean(),
    path: fc.constantFrom('.', 'a', 'a/b', 'b/a', 'link-in', 'a/../b'),
    newpath: fc.constantFrom('.', 'new', 'a/new', 'a/b/new', 'link-in/new'),
    list: fc.array(fc.stringMatching(/^[a-z]{0,6}$/), { maxLength: 3 }),
    ints: fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }),
    paths: fc.array(fc.constantFrom('.', 'a', 'a/b', 'b'), { maxLength: 3 }),
    constructor: fc.string({ unit: cleanUnit, maxLength: 8 }).filter(noLeadingDash),
    toString: fc.integer(),
    opt: fc.string({ unit: cleanUnit, maxLength: 8 }),
  };
  const BASE: [string, unknown][] = [['s', 'abc'], ['e', 'one'], ['i', 0], ['path', '.'], ['list', []]];

  /** Arguments as JSON.parse makes them: own keys only, `__proto__` included. */
  const argsArb = fc
    .record({
      base: fc.boolean(),
      drop: fc.subarray(BASE.map(([k]) => k)),
      dropping: fc.boolean(),
      overrides: fc.array(entryArb, { maxLength: 5 }),
    })
    .map(({ base, drop, dropping, overrides }) => {
      const entries = [...(base ? BASE.filter(([k]) => !(dropping && drop.includes(k))) : []), ...overrides];
      return JSON.parse('{' + entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',') + '}') as Record<string, unknown>;
    });

  /** Valid arguments (each optional one present or not), then one or two of them replaced by a value
   *  that is about right or anything at all: every check is reached, and so is the accepted branch. */
  const nearValidArgs = fc
    .record({
      validArgs: fc.record(valid, { requiredKeys: [] }),
      changes: fc.array(fc.oneof(...DECLARED.map((k) => fc.tuple(fc.constant(k), fc.oneof({ weight: 3, arbitrary: plausible[k]! }, valueArb)))), { maxLength: 2 }),
    })
    .map(({ validArgs, changes }) => {
      const entries = [...BASE.filter(([k]) => !Object.hasOwn(validArgs, k)), ...Object.entries(validArgs), ...changes];
      return JSON.parse('{' + entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',') + '}') as Record<string, unknown>;
    });

  it('never throws on arbitrary JSON args, and what it accepts conforms to the declared types', () => {
    const seen = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(fc.oneof({ weight: 4, arbitrary: nearValidArgs }, { weight: 4, arbitrary: argsArb }, fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }))), (args) => {
        const r = validateArgs(op, args);
        const plan = planRun(allowlist, 'all', args);
        expect(plan.ok).toBe(r.ok);
        if (!r.ok) {
          expect(typeof r.message).toBe('string');
          if (!plan.ok) expect(plan.code).toBe('bad_args');
          seen.refused++;
          return;
        }
        conforms(r.values, args);
        if (!plan.ok) return;
        expect(plan.plan.argv[0]).toBe('/bin/echo');
        for (const el of plan.plan.argv) expect(typeof el === 'string' && !el.includes('\0')).toBe(true);
        seen.accepted++;
      }),
      params(1000, { examples: [[Object.fromEntries(BASE)]] }),
    );
    expect(seen.accepted).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------------
// argv templating
// ---------------------------------------------------------------------------------------------------

describe('argv templating (planRun, renderArgv)', () => {
  const PROGRAM = '/usr/bin/prog';
  const SHAPE_COMMAND = [PROGRAM, '{a}', '--a={a}', 'literal; $(x) * "q"', '{{a}}', '{a}.txt', 'pre-{a}-{b}-post', '--', '{n}', '{list}', '{b}', 'end'];
  const DASH_COMMAND = [PROGRAM, '{lead}', '--opt={inner}', '{lead2}.txt', '{items}'];
  let allowlist: Allowlist;
  beforeAll(() => {
    const anyString = { type: 'string', allow_dash: true };
    allowlist = parseAllowlist(
      yamlOf([
        {
          name: 'shape',
          command: SHAPE_COMMAND,
          cwd: '/',
          args: { a: anyString, b: anyString, n: { type: 'integer', min: Number.MIN_SAFE_INTEGER }, list: { type: 'array', items: anyString, max_items: 100 } },
        },
        {
          name: 'dash',
          command: DASH_COMMAND,
          cwd: '/',
          args: { lead: { type: 'string' }, inner: { type: 'string' }, lead2: { type: 'string' }, items: { type: 'array', items: { type: 'string' } } },
        },
      ]),
    );
  });

  /** An independent renderer, straight from the allowlist rules, for the expected argv. */
  function expectedArgv(command: string[], values: Record<string, unknown>): string[] {
    const out: string[] = [];
    for (const el of command) {
      const whole = /^\{(\w+)\}$/.exec(el);
      if (whole && Array.isArray(values[whole[1]!])) out.push(...(values[whole[1]!] as unknown[]).map(String));
      else out.push(el.replace(/\{\{|\}\}|\{(\w+)\}/g, (t: string, name?: string) => (t === '{{' ? '{' : t === '}}' ? '}' : String(values[name!]))));
    }
    return out;
  }

  /** Indices (in a rendered argv) of the elements that are pure literal text in the template. */
  function literalIndices(command: string[], listLength: number): number[] {
    const idx: number[] = [];
    let i = 0;
    for (const el of command) {
      if (el === '{list}' || el === '{items}') i += listLength;
      else {
        if (!/\{\w+\}/.test(el.replace(/\{\{|\}\}/g, ''))) idx.push(i);
        i++;
      }
    }
    return idx;
  }

  const value = fc.string({ unit: cleanUnit, maxLength: 40 });
  const anyInt = fc.oneof(fc.integer(), fc.constantFrom(0, -0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER));

  it('no string value changes the argv\'s shape, its literal elements or its program', () => {
    fc.assert(
      fc.property(value, value, anyInt, fc.array(value, { maxLength: 6 }), (a, b, n, list) => {
        const plain = planRun(allowlist, 'shape', { a: 'x', b: 'y', n: 1, list: list.map(() => 'z') });
        const r = planRun(allowlist, 'shape', { a, b, n, list });
        if (!plain.ok || !r.ok) throw new Error(`refused: ${!r.ok ? r.message : ''}`);
        const argv = r.plan.argv;
        expect(argv.length).toBe(plain.plan.argv.length);
        expect(argv.length).toBe(SHAPE_COMMAND.length - 1 + list.length);
        expect(argv[0]).toBe(PROGRAM);
        for (const i of literalIndices(SHAPE_COMMAND, list.length)) expect(argv[i]).toBe(plain.plan.argv[i]);
        expect(argv).toEqual(expectedArgv(SHAPE_COMMAND, { a, b, n, list }));
      }),
      params(1000, { examples: [['a b', '$(rm -rf ~); `id` | x > y', -3, ['*', '', '\n', '{b}']], ['{b}', '}}{{', 0, []]] }),
    );
  });

  it('a value with a NUL anywhere is refused, never rendered', () => {
    const withNul = fc.tuple(value, value).map(([x, y]) => `${x}\0${y}`);
    fc.assert(
      fc.property(fc.constantFrom('a', 'b', 'list'), withNul, (where, bad) => {
        const args: Record<string, unknown> = { a: 'x', b: 'y', n: 1, list: ['z'] };
        args[where] = where === 'list' ? ['ok', bad] : bad;
        const r = planRun(allowlist, 'shape', args);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.code).toBe('bad_args');
      }),
      params(300),
    );
  });

  it('a value that would start an element with "-" is refused; after literal text it is rendered as it is', () => {
    const maybeDash = fc.oneof(value, value.map((v) => '-' + v), value.map((v) => '--' + v));
    fc.assert(
      fc.property(maybeDash, maybeDash, maybeDash, fc.array(maybeDash, { maxLength: 4 }), (lead, inner, lead2, items) => {
        const r = planRun(allowlist, 'dash', { lead, inner, lead2, items });
        const dashed = [lead, lead2, ...items].some((v) => v.startsWith('-'));
        expect(r.ok).toBe(!dashed);
        if (!r.ok) {
          expect(r.code).toBe('bad_args');
          expect(r.message).toMatch(/must not start with "-"/);
          return;
        }
        expect(r.plan.argv).toEqual(expectedArgv(DASH_COMMAND, { lead, inner, lead2, items }));
        expect(r.plan.argv.length).toBe(DASH_COMMAND.length - 1 + items.length);
        for (const el of r.plan.argv.slice(1)) if (el.startsWith('-')) expect(el.startsWith('--opt=')).toBe(true);
      }),
      params(500),
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// Path arguments against real symlinks
// ---------------------------------------------------------------------------------------------------

describe('path arguments', () => {
  const SEGMENTS = ['a', 'b', '..', '.', 'link-out', 'link-in', 'dangling', ''] as const;
  let allowlist: Allowlist;
  beforeAll(() => {
    allowlist = parseAllowlist(
      yamlOf([
        // cwd and root given through a symlink to the root: the check must compare real paths.
        { name: 'exists', command: ['/bin/cat', '{p}'], cwd: tree.rootLink, args: { p: { type: 'path' } } },
        { name: 'create', command: ['/bin/touch', '--', '{p}'], cwd: tree.rootLink, args: { p: { type: 'path', must_exist: false } } },
        { name: 'sub', command: ['/bin/touch', '{p}'], cwd: tree.rootLink, args: { p: { type: 'path', must_exist: false, within: [path.join(tree.rootLink, 'a')] } } },
        { name: 'many', command: ['/bin/cat', '{p}'], cwd: tree.rootLink, args: { p: { type: 'array', items: { type: 'path' }, max_items: 4 } } },
      ]),
    );
  });

  type Prefix = 'relative' | 'root' | 'rootLink' | 'outside' | 'base';
  const pathArb = fc.record({
    prefix: fc.constantFrom<Prefix>('relative', 'relative', 'relative', 'root', 'rootLink', 'outside', 'base'),
    segments: fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 8 }),
  });
  const render = ({ prefix, segments }: { prefix: Prefix; segments: string[] }): string => {
    const joined = segments.join('/');
    return prefix === 'relative' ? joined : `${tree[prefix]}/${joined}`;
  };

  it('no accepted path resolves outside its root, whatever the links and .. segments', () => {
    const seen: Record<string, { accepted: number; refused: number }> = {};
    const count = (op: string, ok: boolean) => {
      seen[op] ??= { accepted: 0, refused: 0 };
      seen[op][ok ? 'accepted' : 'refused']++;
    };
    const rel = (segments: string[]) => ({ prefix: 'relative' as Prefix, segments });
    fc.assert(
      fc.property(pathArb, fc.array(pathArb, { maxLength: 4 }), (p, many) => {
        const value = render(p);
        for (const [op, root, mustExist] of [['exists', tree.root, true], ['create', tree.root, false], ['sub', path.join(tree.root, 'a'), false]] as const) {
          const r = planRun(allowlist, op, { p: value });
          count(op, r.ok);
          if (!r.ok) {
            expect(r.code).toBe('bad_args');
            continue;
          }
          const accepted = r.plan.argv[r.plan.argv.length - 1];
          expectInside(accepted, root, mustExist);
          expect(r.plan.argv.length).toBe(op === 'create' ? 3 : 2);
        }
        const r = planRun(allowlist, 'many', { p: many.map(render) });
        count('many', r.ok);
        if (r.ok) {
          expect(r.plan.argv.length).toBe(1 + many.length);
          for (const v of r.plan.argv.slice(1)) expectInside(v, tree.root, true);
        } else expect(r.code).toBe('bad_args');
      }),
      params(500, {
        examples: [
          [rel(['a', 'b']), [rel(['a'])]],
          [rel(['link-out']), [rel(['link-in'])]],
          [rel(['link-out', '..']), [rel(['link-out', '..', 'a'])]],
          [rel(['link-in', '..', '..']), [rel(['a', 'link-in', 'link-out'])]],
          [rel(['dangling']), [rel(['a', 'dangling', '..'])]],
          [rel(['a', 'link-out', 'new']), [rel(['b', 'link-in', 'new'])]],
          [{ prefix: 'outside', segments: ['link-in', 'new'] }, [{ prefix: 'outside', segments: ['link-in'] }]],
          [{ prefix: 'root', segments: ['..', 'root-link', 'a'] }, []],
        ],
      }),
    );
    for (const op of ['exists', 'create', 'sub', 'many']) {
      expect(seen[op]?.accepted, `${op} accepted something`).toBeGreaterThan(0);
      expect(seen[op]?.refused, `${op} refused something`).toBeGreaterThan(0);
    }
  });
});
