// Request ids: fresh and unique by default, or stable for callers that want one id per intent.
import { randomBytes } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../protocol/canonicalJson';

/** Unique and sortable by time: r-<base36 ms>-<random>. */
export function newRequestId(now = Date.now()): string {
  return `r-${now.toString(36).padStart(9, '0')}-${randomBytes(6).toString('hex')}`;
}

/** The same id for the same operation, arguments and intent: a retry after a crash is then a replay. */
export function stableId(op: string, args: Record<string, unknown>, intent = ''): string {
  return `s-${sha256Hex(canonicalJson({ args, intent, op })).slice(0, 32)}`;
}
