// The verifier: envelope, key, MAC and payload, in the order of protocol-v1 section 3. Pure apart
// from the key lookup, so the signing vectors exercise exactly what the daemon runs.
import { parseEnvelope, parsePayload } from '../../../shared/protocol/envelope';
import { decodeSecret, macMatches } from '../../../shared/protocol/sign';
import type { Payload, UNAUTHENTICATED_CODES } from '../../../shared/protocol/types';
import type { KeyWithSecret } from '../keys/keyStore';

export type Authenticated = { ok: true; key: KeyWithSecret; secret: Buffer; payload: Payload; mac: string };
export type Refused = {
  ok: false;
  code: (typeof UNAUTHENTICATED_CODES)[number];
  message: string;
  keyId: string | null;
  op: string | null;
};

/** `fileId`: the id the file name gives, which the payload must repeat. */
export function authenticate(bytes: Buffer, fileId: string, lookupKey: (keyId: string) => KeyWithSecret | null): Authenticated | Refused {
  const refuse = (code: Refused['code'], message: string, keyId: string | null = null, op: string | null = null): Refused => ({
    ok: false,
    code,
    message,
    keyId,
    op,
  });
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return refuse('bad_envelope', 'the file is not valid UTF-8');
  }
  const env = parseEnvelope(text);
  if (!env.ok) return refuse('bad_envelope', env.message);
  const { key_id: keyId, payload: payloadText, mac } = env.value;
  const key = lookupKey(keyId);
  if (!key) return refuse('unknown_key', `no key ${keyId} on this host`, keyId);
  if (key.revoked_at) return refuse('revoked_key', `key ${keyId} was revoked at ${key.revoked_at}`, keyId);
  if (key.secret === null) {
    return refuse('unknown_key', `key ${keyId} is sealed by the desktop app's keychain: only the desktop app can check it`, keyId);
  }
  const secret = decodeSecret(key.secret);
  if (!macMatches(secret, keyId, payloadText, mac)) {
    return refuse('bad_signature', 'the MAC does not match the payload and key', keyId);
  }
  const parsed = parsePayload(payloadText);
  if (!parsed.ok) return refuse('bad_envelope', parsed.message, keyId);
  if (parsed.value.id !== fileId) {
    return refuse('bad_envelope', `payload id "${parsed.value.id}" does not match the file name`, keyId, parsed.value.op);
  }
  return { ok: true, key, secret, payload: parsed.value, mac };
}
