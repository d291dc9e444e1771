// Built-in operations (`dumbwaiter.*`): answered by the host itself, signed and bound like any request.
import type { KeyInfo } from '../keys/keyStore';
import type { Decisions } from '../decisions';
import type { Requests } from '../ledger/requests';
import { isRequestId } from '../../../shared/protocol/ids';
import type { ErrorCode } from '../../../shared/protocol/types';
import { APP_VERSION } from '../version';
import { PLAN_OP } from '../policy/plans';

/** A cancel's target, when it changes, is moved (and its result written) through the lifecycle. */
export type BuiltinResult = { ok: true; stdout: string } | { ok: false; code: Extract<ErrorCode, 'unknown_op' | 'bad_args' | 'scope_denied'>; message: string };

export interface BuiltinDeps {
  requests: Requests;
  decisions: Decisions;
  hostId: string;
}

export const BUILTIN_OPS = ['dumbwaiter.cancel', 'dumbwaiter.ping', PLAN_OP] as const;

/** The built-ins the host answers at once; a plan is not one of them: a human decides it (intake
 *  records it with policy/plans.ts). */
export function runBuiltin(d: BuiltinDeps, key: KeyInfo, op: string, args: Record<string, unknown>): BuiltinResult {
  switch (op) {
    case 'dumbwaiter.ping': {
      if (Object.keys(args).length > 0) return { ok: false, code: 'bad_args', message: 'dumbwaiter.ping takes no arguments' };
      return { ok: true, stdout: JSON.stringify({ host_id: d.hostId, app_version: APP_VERSION, protocol: 1, time: new Date().toISOString(), key_id: key.key_id, scope: key.scope }) + '\n' };
    }
    case 'dumbwaiter.cancel': {
      const extra = Object.keys(args).filter((k) => k !== 'target');
      if (extra.length) return { ok: false, code: 'bad_args', message: `unknown argument "${extra[0]}" (expected: target)` };
      const target = args.target;
      if (typeof target !== 'string' || !isRequestId(target)) return { ok: false, code: 'bad_args', message: 'argument "target" must be a request id' };
      // The target is named as this sandbox named it, within its spool: another spool's request of
      // that id is, to this sandbox, none at all.
      const row = d.requests.bound(key.spool, target);
      if (!row) return { ok: false, code: 'bad_args', message: `no request ${target} on this host` };
      if (row.key_id !== key.key_id) return { ok: false, code: 'scope_denied', message: `key ${key.key_id} may only cancel its own requests` };
      const out = d.decisions.cancel(row.id, `key ${key.key_id} (dumbwaiter.cancel)`);
      // Said with the sandbox's id: the host's handle (`<id>@<spool>`) would tell it another spool has one.
      return { ok: true, stdout: out.message.split(row.id).join(target) + '\n' };
    }
    default:
      return { ok: false, code: 'unknown_op', message: `no built-in operation "${op}" (built-ins: ${BUILTIN_OPS.join(', ')})` };
  }
}
