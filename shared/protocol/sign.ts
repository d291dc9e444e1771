// Request MACs (protocol-v1 section 3). Signs the payload string's exact UTF-8 bytes: never re-serialised.
import { createHmac, timingSafeEqual } from 'node:crypto';

const DOMAIN = 'dumbwaiter-request-v1\n';

export function decodeSecret(secret: string): Buffer {
  if (!/^[A-Za-z0-9_-]+$/.test(secret)) throw new Error('secret is not base64url without padding');
  const bytes = Buffer.from(secret, 'base64url');
  if (bytes.length !== 32) throw new Error(`secret must decode to 32 bytes, got ${bytes.length}`);
  return bytes;
}

export function computeMac(secret: Buffer, keyId: string, payload: string): string {
  return createHmac('sha256', secret).update(DOMAIN + keyId + '\n' + payload, 'utf8').digest('hex');
}

/** Constant-time comparison; `mac` must already be 64 lowercase hex digits. */
export function macMatches(secret: Buffer, keyId: string, payload: string, mac: string): boolean {
  const expected = Buffer.from(computeMac(secret, keyId, payload), 'hex');
  const given = Buffer.from(mac, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
