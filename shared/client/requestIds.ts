// Request ids: fresh and unique by default, or stable for callers that want one id per intent.
import { randomBytes } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../protocol/canonicalJson';
import { isKeyId } from '../protocol/ids';

/** Unique and sortable by time: r-<base36 ms>-<random>. */
export function newRequestId(now = Date.now()): string {
  return `r-${now.toString(36).padStart(9, '0')}-${randomBytes(6).toString('hex')}`;
}

/**
 * The same id for the same key, operation, arguments and intent: a retry after a crash is then a
 * replay. The key is in it so that another sandbox cannot tell which ids this one will use
 * (docs/PROTOCOL.md, "Stable ids"; dw.py's stable_id is the same recipe).
 */
export function stableId(keyId: string, op: string, args: Record<string, unknown>, intent = ''): string {
  if (!isKeyId(keyId)) throw new Error(`not a key id: ${JSON.stringify(keyId)}`);
  return `s-${sha256Hex(canonicalJson({ args, intent, key_id: keyId, op })).slice(0, 32)}`;
}
