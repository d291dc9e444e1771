// What happens to one claimed file, in the order protocol-v1 section 3 prescribes: envelope, key, MAC,
// id, idempotency (a bound id), then admission (policy/admission.ts: clock, policy). The request is in the ledger before anything can run, recorded by the
// lifecycle (Lifecycle.enter) with its audit entries and whatever else must commit with it.
import { existsSync, unlinkSync } from 'node:fs';
import { authenticate, type Authenticated } from './authenticate';
import type { ApprovalInfo, ErrorCode, Payload, RequestState } from '../../../shared/protocol/types';
import { requestHash } from '../../../shared/protocol/requestHash';
import type { RequestLimits, RunPlan } from '../allowlist/plan';
import type { Grant, Grants } from '../ledger/grants';
import type { Decisions } from '../decisions';
import type { Settings } from '../settings';
import { runBuiltin } from './builtins';
import type { KeptStep } from '../policy/plans';
import { admit, type Admission, type PlanClaim } from '../policy/admission';
import type { ApprovedBy } from '../ledger/approvedBy';
import { merged } from '../merged';
import { refusalKind, type EntryState, type Lifecycle, type MoveNote } from '../lifecycle';
import { faultPoint } from '../faults';
import type { Allowlist } from '../allowlist/types';
import type { AuditLog } from '../ledger/audit';
import type { KeyInfo, KeyStore } from '../keys/keyStore';
import type { NewRequest, RequestRow, Requests } from '../ledger/requests';
import type { ResultWriter } from '../spool/results';
import { quarantine, readClaimed } from '../spool/claim';
import type { SpoolPaths } from '../spool/layout';
import { writeInboxMessage } from '../spool/inbox';
import type { Db } from '../ledger/db';
import type { Logger } from '../log';
import { resultPath, unboundRejection } from '../spool/results';
import type { Refusal } from './refusals';

export interface IntakeDeps {
  db: Db;
  /** The spool the request came through, and its folders (pinned). */
  spool: string;
  paths: SpoolPaths;
  keys: KeyStore;
  requests: Requests;
  audit: AuditLog;
  /** Records the request (its insert, entries and result): the one way its state is written. */
  lifecycle: Lifecycle;
  results: ResultWriter;
  log: Logger;
  grants: Grants;
  decisions: Decisions;
  allowlist: () => Allowlist;
  settings: () => Settings;
  maxRequestAgeMs: () => number;
  /** Refusals before authentication: recorded, logged and answered in batches. */
  refused: (r: Refusal) => void;
  /** Slots for runs that start in intake's own commit (the runner). */
  runs: RunSlots;
}

/** A run that may start at once takes a slot before its commit, and is run (or the slot given back) after. */
export interface RunSlots {
  reserve(id: string, op: string, spool: string, plan: RunPlan): boolean;
  launch(started: RequestRow, plan: RunPlan): void;
  release(id: string): void;
}

export type IntakeOutcome =
  | { kind: 'recorded'; state: RequestState }
  | { kind: 'refused'; code: ErrorCode }
  | { kind: 'replay' }
  | { kind: 'conflict' }
  | { kind: 'duplicate_claim' };

/** The payload's own limits (null: the operation's), recorded for the gate before the run starts. */
function limitsOf(p: Payload): RequestLimits | null {
  const limits = { ...(p.timeout_s !== undefined ? { timeout_s: p.timeout_s } : {}), ...(p.max_output_bytes !== undefined ? { max_output_bytes: p.max_output_bytes } : {}) };
  return Object.keys(limits).length ? limits : null;
}

/** `id`: the request's id as the sandbox gave it (its file's name), bound within this spool
 *  (Requests.bound). `recovering`: the file was found in claimed/ at start, so it may be our own,
 *  already recorded. */
export function intakeClaimed(d: IntakeDeps, id: string, file: string, recovering = false): IntakeOutcome {
  /** Drops the claimed file, once what it asked for is recorded (or refused). */
  const done = () => {
    try {
      unlinkSync(file);
    } catch {
      /* already gone */
    }
  };

  /** Refused before authentication: the id is not bound, so the result may be replaced later. */
  /** `note`: for the host's records only (the result tells the sandbox `message`). */
  const refuseUnbound = (code: ErrorCode, message: string, op: string | null = null, keyId: string | null = null, note = ''): IntakeOutcome => {
    const bound = d.requests.bound(d.spool, id) !== null;
    // Recorded with the rest of the scan's step (see refusals.ts): anyone can write such a file.
    d.refused({
      entry: {
        kind: 'rejected',
        request_id: id,
        key_id: keyId,
        op,
        message: `${code}: ${message}${note}${bound ? ' (the id is already bound: its result was left unchanged)' : ''}`,
        details: { code, bound },
      },
      line: `rejected ${id}: ${code}: ${message}${note}`,
      result: bound ? null : unboundRejection(id, op, code, message),
    });
    done();
    return { kind: 'refused', code };
  };

  const read = readClaimed(file);
  if (!read.ok) {
    const movedTo = quarantine(d.paths, file, `${id}.json`);
    return refuseUnbound('bad_envelope', `the request file ${read.reason}${movedTo ? '; moved to quarantine' : ''}`);
  }
  // A key belongs to one spool: through another it is unknown (to the sandbox, as any unknown key;
  // the audit log names both spools).
  let foreign: string | null = null;
  const auth = authenticate(read.bytes, id, (k) => {
    const key = d.keys.get(k);
    if (key && key.spool !== d.spool) foreign = key.spool;
    return key && key.spool === d.spool ? key : null;
  });
  if (!auth.ok) {
    const note = foreign ? ` (key ${auth.keyId} belongs to spool "${foreign}"; the request came through spool "${d.spool}")` : '';
    return refuseUnbound(auth.code, auth.message, auth.op, auth.keyId, note);
  }
  // Authenticated: from here on the id is bound (within this spool only: another sandbox's request of
  // the same id is none of this one's).
  const now = Date.now();
  const hash = requestHash(auth.key.key_id, auth.payload.op, auth.payload.args); // the idempotency binding: the id is tied to its key and what it asks
  const authentic: Authentic = { id, auth, hash, now, done };
  const existing = d.requests.bound(d.spool, id);
  return existing ? answerBound(d, authentic, existing, recovering) : record(d, authentic);
}

/** An authenticated request: its id, what authentication found, its binding hash, when it was taken,
 *  and how its claimed file is dropped. */
interface Authentic {
  id: string;
  auth: Authenticated;
  hash: string;
  now: number;
  done: () => void;
}

/** A request whose id is bound already: our own claim found again after a crash, a replay, or a conflict. */
function answerBound(d: IntakeDeps, { id, auth, hash, now, done }: Authentic, existing: RequestRow, recovering: boolean): IntakeOutcome {
  const { key, payload: p, mac } = auth;
  const keyId = key.key_id;
  d.keys.touch(keyId, new Date(now).toISOString());
  done();
  if (!existsSync(resultPath(d.paths.results, id))) d.results.publish(existing); // reaped from the spool, still bound
  if (existing.binding_hash === hash) {
    if (recovering && existing.mac === mac) {
      // Our own claim, left behind by a crash between the ledger insert and the unlink.
      d.audit.record({ spool: d.spool, kind: 'claim_recovered', request_id: existing.id, key_id: keyId, op: p.op, message: 'claimed file was already recorded' });
      return { kind: 'duplicate_claim' };
    }
    d.audit.record({
      spool: d.spool,
      kind: 'replay',
      request_id: existing.id,
      key_id: keyId,
      op: p.op,
      message: `replay of ${existing.id}: nothing runs again; the existing result (${existing.state}) stands`,
    });
    return { kind: 'replay' };
  }
  d.audit.record({
    spool: d.spool,
    kind: 'conflict',
    request_id: existing.id,
    key_id: keyId,
    op: p.op,
    message: `conflict: ${existing.id} is already bound to ${existing.key_id === keyId ? `another request (op ${existing.op})` : 'another key'}; nothing runs and its result is unchanged`,
    details: { bound_op: existing.op, bound_key: existing.key_id },
  });
  const boundTo = existing.key_id === keyId ? `your earlier request (operation ${existing.op})` : 'a request of another key';
  writeInboxMessage(
    d.paths.inbox,
    { keyId, secret: auth.secret },
    'conflict',
    id,
    `Request id "${id}" is already bound to ${boundTo}; nothing was run, and its result is that request's. Use a new id for a different request.`,
    { request_hash: hash },
  );
  d.log.warn(`conflict on ${existing.id}`);
  return { kind: 'conflict' };
}

/** A request whose id was not bound: admitted (policy/admission.ts) and recorded as what admission says. */
function record(d: IntakeDeps, { id, auth, hash, now, done }: Authentic): IntakeOutcome {
  const { key, payload: p, mac } = auth;
  const keyId = key.key_id;
  const touchKey = () => d.keys.touch(keyId, new Date(now).toISOString());
  // Clock, then a plan proposal, the built-ins or the policy gate (operation, arguments, scope, spend, approval).
  const limits = limitsOf(p);
  const admission = admit(
    { spool: d.spool, key, op: p.op, args: p.args, limits, intent: p.intent ?? null, created_at: p.created_at, expires_at: p.expires_at ?? null, plan_id: p.plan_id ?? null },
    { allowlist: d.allowlist(), settings: d.settings(), grants: d.grants, requests: d.requests, maxRequestAgeMs: d.maxRequestAgeMs(), now: new Date(now) },
  );
  const { state, error, plan, approval, steps, answered, by, grant, step, unmatched } = entryOf(d, key, p.op, p.args, admission);
  /** The step this request takes: only one that matched and may go now (a ceiling still asks a human). */
  const taken = state === 'queued' ? step : null;

  /** The host's handle for it (the command line, the app, the audit log, the run's environment). */
  const handle = d.requests.handleFor(d.spool, id);
  const notes: MoveNote[] = [];
  if (unmatched) {
    notes.push({ kind: 'plan_step_unmatched', message: `not a step of plan ${p.plan_id}: ${unmatched.reason}; the usual policy applies`, details: { plan_id: p.plan_id, reason: unmatched.reason } });
  }
  notes.push({
    kind: error ? refusalKind(state, error.code) : state === 'awaiting_approval' ? 'approval_requested' : 'claimed',
    message: error
      ? `${error.code}: ${error.message}`
      : `claimed ${handle}: ${p.op} -> ${state}${grant ? ` (approved by grant ${grant.id})` : ''}${taken !== null ? ` (step ${taken + 1} of approved plan ${p.plan_id})` : ''}${approval?.ceiling ? ` (would cross ${approval.ceiling}${step !== null ? `, though it is step ${step + 1} of plan ${p.plan_id}` : ''})` : ''}`,
    details: { state, ...(error ? { code: error.code } : {}), ...(plan ? { argv: plan.argv } : {}), ...(p.intent ? { intent: p.intent } : {}) },
  });
  // A slot free now: queued -> running in the insert's own commit (no `queued` commit or result file).
  const startNow = state === 'queued' && plan && d.runs.reserve(handle, p.op, d.spool, plan) ? plan : null;
  let row: RequestRow;
  try {
    row = d.lifecycle.enter(
      {
        id: handle,
        wire_id: id,
        spool: d.spool,
        key_id: keyId,
        op: p.op,
        args_json: JSON.stringify(p.args),
        binding_hash: hash,
        mac,
        intent: p.intent ?? null,
        created_at: p.created_at,
        expires_at: p.expires_at ?? null,
        state,
        plan,
        error_code: error?.code ?? null,
        error_message: error?.message ?? null,
        approval,
        approved_by: by,
        plan_id: p.plan_id ?? null,
        limits_json: limits ? JSON.stringify(limits) : null,
        steps_json: steps ? JSON.stringify(steps) : null,
        ...answered,
      },
      notes,
      {
        ...(taken !== null ? { takesStep: taken } : {}),
        ...(startNow ? { startNow: { started_at: new Date().toISOString(), cost: startNow.cost }, launch: (started: RequestRow) => d.runs.launch(started, startNow) } : {}),
        alsoInCommit: () => {
          touchKey();
          if (grant) d.grants.use(grant.id);
        },
      },
    );
  } catch (e) {
    if (startNow) d.runs.release(handle);
    throw e;
  }
  d.lifecycle.afterCommit(
    handle,
    () => {
      done(); // only now: until the ledger has it, the claimed file is the request's only copy
      if (startNow && row.state !== 'running') d.runs.release(handle); // paused, or its key revoked, by the time of its commit
      if (state === 'awaiting_approval') faultPoint('during_approval_wait');
      if (error) d.log.warn(`${handle}: ${state}: ${error.code}: ${error.message}`);
      else if (row.state !== 'running') d.log.info(`${handle}: ${p.op} ${row.state}`); // else the runner's "started" line says it
    },
    startNow ? () => d.runs.release(handle) : undefined,
  );
  return error ? { kind: 'refused', code: error.code } : { kind: 'recorded', state: row.state };
}

/** What intake records of an admitted request (a built-in is answered here, and enters finished). */
interface Entry {
  state: EntryState;
  error: { code: ErrorCode; message: string } | null;
  /** The run it was checked for (what the card shows, or what runs). */
  plan: RunPlan | null;
  approval: ApprovalInfo | null;
  /** A proposed plan's steps. */
  steps: KeptStep[] | null;
  /** A built-in's answer: it enters finished, with its output. */
  answered: Pick<NewRequest, 'stdout' | 'exit_code' | 'started_at' | 'finished_at' | 'duration_ms'> | null;
  by: ApprovedBy | null;
  grant: Grant | null;
  /** The step of its plan it is (taken if it is queued). */
  step: number | null;
  /** The plan it claims but is no step of, and why. */
  unmatched: PlanClaim | null;
}

const NOTHING = { error: null, plan: null, approval: null, steps: null, answered: null, by: null, grant: null, step: null, unmatched: null };

function entryOf(d: IntakeDeps, key: KeyInfo, op: string, args: Record<string, unknown>, a: Admission): Entry {
  switch (a.kind) {
    case 'refused':
      return merged(NOTHING, { state: a.state, error: { code: a.code, message: a.message }, unmatched: a.unmatched ?? null });
    case 'waits':
      return merged(NOTHING, { state: 'awaiting_approval' as const, plan: a.plan, approval: a.approval, steps: a.steps ?? null, step: a.step ?? null, unmatched: a.unmatched ?? null });
    case 'runs':
      return merged(NOTHING, { state: 'queued' as const, plan: a.plan, by: a.by, grant: a.grant, step: a.step ?? null, unmatched: a.unmatched ?? null });
    case 'builtin': {
      const r = runBuiltin({ requests: d.requests, decisions: d.decisions, hostId: d.settings().host_id }, key, op, args);
      if (!r.ok) return merged(NOTHING, { state: 'rejected' as const, error: { code: r.code, message: r.message } });
      const at = new Date().toISOString();
      return merged(NOTHING, { state: 'succeeded' as const, answered: { stdout: r.stdout, exit_code: 0, started_at: at, finished_at: at, duration_ms: 0 } });
    }
  }
}
