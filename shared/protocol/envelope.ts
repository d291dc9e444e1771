// Parsing of the request envelope and its payload. Pure functions: the host and the clients share them.
import { isKeyId, isRequestId } from './ids';
import { MAX_INTENT_CHARS, type Envelope, type Payload } from './types';

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const MAC_HEX = /^[0-9a-f]{64}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Arguments are flat by design (arrays of scalars at most); a deep nest is only ever an attack. */
const MAX_ARGS_DEPTH = 16;

function depthOf(v: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (typeof x !== 'object' || x === null) continue;
    max = Math.max(max, d + 1);
    if (max > MAX_ARGS_DEPTH) return max;
    for (const child of Object.values(x)) stack.push([child, d + 1]);
  }
  return max;
}

/** Where a string (a value or a key) in `v` holds a lone surrogate, or null when none does. JSON
 *  escapes (`\ud800`) let one through the UTF-8 check of the file; in argv it would become U+FFFD,
 *  so the program would get something other than what was signed and shown. */
function illFormedAt(v: unknown): string | null {
  const stack: [unknown, string][] = [[v, 'payload']];
  while (stack.length) {
    const [x, at] = stack.pop()!;
    if (typeof x === 'string') {
      if (!x.isWellFormed()) return at;
      continue;
    }
    if (typeof x !== 'object' || x === null) continue;
    for (const [k, child] of Object.entries(x)) {
      if (!k.isWellFormed()) return `a key in ${at}`;
      stack.push([child, Array.isArray(x) ? `${at}[${k}]` : `${at}.${k}`]);
    }
  }
  return null;
}

/** A request's own limit: a whole number of seconds or bytes; the bound keeps it a 32-bit integer everywhere it goes. */
export const MAX_REQUEST_LIMIT = 2 ** 31 - 1;

function isLimit(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_REQUEST_LIMIT;
}

export function isRfc3339(s: unknown): s is string {
  return typeof s === 'string' && RFC3339.test(s) && !Number.isNaN(Date.parse(s));
}

/** The outer JSON object: anything wrong here is `bad_envelope`. */
export function parseEnvelope(text: string): Parsed<Envelope> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, message: `not JSON: ${(e as Error).message}` };
  }
  if (!isObject(raw)) return { ok: false, message: 'the envelope must be a JSON object' };
  // Never serialise the untrusted value into the message: a deep nest would overflow the stack.
  if (raw.v !== 1) return { ok: false, message: `unsupported envelope version (${typeof raw.v === 'number' ? raw.v : typeof raw.v}; expected 1)` };
  if (typeof raw.key_id !== 'string' || !isKeyId(raw.key_id)) {
    return { ok: false, message: 'key_id must match ^[A-Za-z0-9_-]{1,64}$' };
  }
  if (typeof raw.payload !== 'string') return { ok: false, message: 'payload must be a string holding JSON' };
  // A lone surrogate has no UTF-8 bytes to sign: hashing would turn it into U+FFFD, so two different
  // payloads would share a MAC.
  if (!raw.payload.isWellFormed()) return { ok: false, message: 'payload is not well-formed Unicode (a lone surrogate)' };
  if (typeof raw.mac !== 'string' || !MAC_HEX.test(raw.mac)) {
    return { ok: false, message: 'mac must be 64 lowercase hex digits' };
  }
  return { ok: true, value: { v: 1, key_id: raw.key_id, payload: raw.payload, mac: raw.mac } };
}

/** The signed payload, checked after the MAC. Anything wrong here is also `bad_envelope`. */
export function parsePayload(text: string): Parsed<Payload> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, message: `payload is not JSON: ${(e as Error).message}` };
  }
  if (!isObject(raw)) return { ok: false, message: 'payload must be a JSON object' };
  const illFormed = illFormedAt(raw);
  if (illFormed) return { ok: false, message: `${illFormed} holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair): not well-formed Unicode` };
  if (typeof raw.id !== 'string' || !isRequestId(raw.id)) return { ok: false, message: 'payload.id is not a valid request id' };
  if (typeof raw.op !== 'string' || raw.op.length === 0) return { ok: false, message: 'payload.op must be a non-empty string' };
  if (raw.args !== undefined && !isObject(raw.args)) return { ok: false, message: 'payload.args must be an object' };
  if (depthOf(raw.args) > MAX_ARGS_DEPTH) return { ok: false, message: `payload.args nests deeper than ${MAX_ARGS_DEPTH} levels` };
  if (!isRfc3339(raw.created_at)) return { ok: false, message: 'payload.created_at must be an RFC 3339 time' };
  if (raw.expires_at !== undefined && !isRfc3339(raw.expires_at)) {
    return { ok: false, message: 'payload.expires_at must be an RFC 3339 time' };
  }
  if (raw.intent !== undefined && (typeof raw.intent !== 'string' || [...raw.intent].length > MAX_INTENT_CHARS)) {
    return { ok: false, message: `payload.intent must be a string of at most ${MAX_INTENT_CHARS} characters` };
  }
  for (const k of ['timeout_s', 'max_output_bytes'] as const) {
    if (raw[k] !== undefined && !isLimit(raw[k])) return { ok: false, message: `payload.${k} must be a whole number from 1 to ${MAX_REQUEST_LIMIT}` };
  }
  if (raw.plan_id !== undefined && (typeof raw.plan_id !== 'string' || !isRequestId(raw.plan_id))) return { ok: false, message: 'payload.plan_id is not a valid request id' };
  const payload: Payload = {
    id: raw.id,
    op: raw.op,
    args: (raw.args as Record<string, unknown> | undefined) ?? {},
    created_at: raw.created_at,
  };
  if (raw.expires_at !== undefined) payload.expires_at = raw.expires_at as string;
  if (raw.intent !== undefined) payload.intent = raw.intent as string;
  if (raw.timeout_s !== undefined) payload.timeout_s = raw.timeout_s as number;
  if (raw.max_output_bytes !== undefined) payload.max_output_bytes = raw.max_output_bytes as number;
  if (raw.plan_id !== undefined) payload.plan_id = raw.plan_id as string;
  return { ok: true, value: payload };
}
