// Name rules of the spool protocol (protocol-v1 sections 1-3). One place, so host and clients agree.

export const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const OP_NAME = /^[a-z][a-z0-9._-]{0,63}$/;
/** A spool's name in the home (settings, keys, the allowlist's `spools:`): short, lowercase, safe in a file name. */
export const SPOOL_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
/** SPOOL_NAME in words, for every message that refuses a name. */
export const SPOOL_NAME_RULE = '1-32 lowercase letters, digits, _ or -, starting with a letter or digit';
/** The host's handle for a request (never on the wire): its id in the spool `default`, `<id>@<spool>`
 *  in every other (main/core/ledger/requests.ts, handleFor). */
export const REQUEST_HANDLE = new RegExp(`^${REQUEST_ID.source.slice(1, -1)}(@${SPOOL_NAME.source.slice(1, -1)})?$`);
/** The longest handle: a 128-character id, `@`, a 32-character spool name. */
export const MAX_HANDLE_LENGTH = 128 + 1 + 32;
/** The spool `init` makes (an earlier version's single spool), and the one keys are for unless told. */
export const DEFAULT_SPOOL = 'default';

/** The names the host gives inbox messages (main/core/spool/inbox.ts): a UTC time stamp and 8 hex digits. */
export const INBOX_MESSAGE_NAME = /^\d{8}T\d{9}Z-[0-9a-f]{8}\.json$/;

export function isRequestId(s: string): boolean {
  return REQUEST_ID.test(s) && !s.endsWith('.tmp');
}

export function isKeyId(s: string): boolean {
  return KEY_ID.test(s);
}

/** Names every reader skips: in-progress atomic writes (`.x`, `x.tmp`). */
export function isInProgressName(name: string): boolean {
  return name.startsWith('.') || name.endsWith('.tmp');
}

/** `queue/<id>.json` -> id, or null when the name cannot be a request. */
export function requestIdFromFileName(name: string): string | null {
  if (!name.endsWith('.json')) return null;
  const id = name.slice(0, -'.json'.length);
  return isRequestId(id) ? id : null;
}
