// The home's allowlist file, read as a start of the daemon would load it now: the one way the host's
// faces parse it (status, the spools' checks, reconcile checks run outside a daemon). The daemon keeps
// its own last good version (daemon/allowlistSource.ts); an editor checks text it has not saved
// (allowlist/check.ts).
import { readFileSync } from 'node:fs';
import { parseAllowlist } from './load';
import type { AllowlistContext } from './roots';
import type { Allowlist } from './types';

/** The allowlist, or why it is refused (unreadable, or not valid as the context says). */
export type HomeAllowlist = { ok: true; allowlist: Allowlist } | { ok: false; reason: string };

/** `ctx`: the home's spools and folder; NO_CONTEXT to read what the file says without the rules on
 *  roots and spool names (which a spool being removed, say, must not depend on). */
export function readHomeAllowlist(file: string, ctx: AllowlistContext): HomeAllowlist {
  try {
    return { ok: true, allowlist: parseAllowlist(readFileSync(file, 'utf8'), file, ctx) };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}
