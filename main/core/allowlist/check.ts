// An allowlist text's verdict, as data: for editors (the desktop app) and status reports.
import { AllowlistError, parseAllowlist } from './load';
import type { AllowlistContext } from './roots';
import type { AllowlistCheck } from '../../../shared/ipc/views';

export type { AllowlistCheck };

export function checkAllowlist(text: string, file: string, ctx: AllowlistContext): AllowlistCheck {
  try {
    return { ok: true, operations: [...parseAllowlist(text, file, ctx).operations.keys()], problems: [] };
  } catch (e) {
    if (e instanceof AllowlistError) return { ok: false, operations: [], problems: e.problems };
    throw e;
  }
}
