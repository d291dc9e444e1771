// The request hash: what an id is bound to (docs/PROTOCOL.md, "Idempotency" and "Authenticated
// results"). The host binds ids with it, and puts it in every signed result, so a client can tell its
// own request from another one that holds the same id.
import { canonicalJson, sha256Hex } from './canonicalJson';

export function requestHash(keyId: string, op: string, args: Record<string, unknown>): string {
  return sha256Hex(canonicalJson({ args, key_id: keyId, op }));
}
