// Authenticated host documents (docs/PROTOCOL.md, "Authenticated results and inbox messages"): every
// result of an authenticated request and every inbox message is signed with the secret of the key it
// answers, so a sandbox can tell what the host wrote from what any other writer of the spool planted.
// Like requests, the MAC is over exact bytes (no canonical JSON): the document's JSON text T, written
// into the file after a fixed-form prefix that old clients read as one more field.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type HostDocKind = 'result' | 'inbox';

/** A key as the host signs with it and a client verifies with it. */
export interface HostDocKey {
  keyId: string;
  secret: Buffer;
}

const DOMAIN: Record<HostDocKind, string> = { result: 'dumbwaiter-result-v1\n', inbox: 'dumbwaiter-inbox-v1\n' };

/** `{"auth":{"key_id":"K","mac":"M"},` then the rest of T after its opening brace. */
const PREFIX = /^\{"auth":\{"key_id":"([A-Za-z0-9_-]{1,64})","mac":"([0-9a-f]{64})"\},/;

function hostMac(kind: HostDocKind, secret: Buffer, keyId: string, text: string): string {
  return createHmac('sha256', secret).update(DOMAIN[kind] + keyId + '\n' + text, 'utf8').digest('hex');
}

/** The file text for the JSON text `text` of a document (an object with at least one member). */
export function signHostDoc(kind: HostDocKind, { keyId, secret }: HostDocKey, text: string): string {
  if (!/^\{\s*"/.test(text)) throw new Error('a signed document is a JSON object with at least one member');
  return `{"auth":{"key_id":"${keyId}","mac":"${hostMac(kind, secret, keyId, text)}"},${text.slice(1)}`;
}

export type OpenedHostDoc =
  | { ok: true; text: string; doc: Record<string, unknown> }
  /** unsigned: no auth prefix (an old host, a refusal it could not sign, or a forgery); other_key:
   *  signed for another key; bad_mac: the prefix names this key but the MAC does not match. */
  | { ok: false; why: 'unsigned' | 'other_key' | 'bad_mac'; keyId: string | null };

/** Verifies a host document against this sandbox's key; only an `ok` document was written by the host for it. */
export function openHostDoc(kind: HostDocKind, fileText: string, key: HostDocKey): OpenedHostDoc {
  const m = PREFIX.exec(fileText);
  if (!m) return { ok: false, why: 'unsigned', keyId: null };
  const [prefix, keyId, mac] = m as unknown as [string, string, string];
  if (keyId !== key.keyId) return { ok: false, why: 'other_key', keyId };
  const text = '{' + fileText.slice(prefix.length);
  const expected = Buffer.from(hostMac(kind, key.secret, keyId, text), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(mac, 'hex'))) return { ok: false, why: 'bad_mac', keyId };
  // Signed by the host: its JSON is the host's own, so a parse failure is not expected; treated as bad.
  try {
    const doc = JSON.parse(text) as unknown;
    if (typeof doc === 'object' && doc !== null && !Array.isArray(doc)) return { ok: true, text, doc: doc as Record<string, unknown> };
  } catch {
    /* below */
  }
  return { ok: false, why: 'bad_mac', keyId };
}
