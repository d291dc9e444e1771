// What happens to one claimed file, in the order protocol-v1 section 3 prescribes: envelope, key, MAC,
// id, clock, idempotency, policy. The request is in the ledger before anything can run, recorded by the
// lifecycle (Lifecycle.enter) with its audit entries and whatever else must commit with it.
import { existsSync, unlinkSync } from 'node:fs';
import { authenticate } from './authenticate';
import type { ApprovalInfo, ErrorCode, Payload, RequestState } from '../../../shared/protocol/types';
import { requestHash } from '../../../shared/protocol/requestHash';
import type { RequestLimits, RunPlan } from '../allowlist/plan';
import { gate } from '../policy/gate';
import type { Grant, Grants } from '../ledger/grants';
import type { Decisions } from '../decisions';
import type { Settings } from '../settings';
import { runBuiltin } from './builtins';
import { PLAN_OP, matchStep, proposePlan, type KeptStep, type StepMatch } from '../policy/plans';
import { clockProblem } from '../policy/clock';
import { refusalKind, type EntryState, type Lifecycle, type MoveNote } from '../lifecycle';
import { faultPoint } from '../faults';
import type { Allowlist } from '../allowlist/types';
import type { AuditLog } from '../ledger/audit';
import type { KeyStore } from '../keys/keyStore';
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
  const { key, payload: p, mac } = auth;
  const keyId = key.key_id;

  // Authenticated: from here on the id is bound.
  const now = Date.now();
  const touchKey = () => d.keys.touch(keyId, new Date(now).toISOString());
  const hash = requestHash(keyId, p.op, p.args); // the idempotency binding: the id is tied to its key and what it asks
  // Bound within this spool only: another sandbox's request of the same id is none of this one's.
  const existing = d.requests.bound(d.spool, id);
  if (existing) {
    touchKey();
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

  // Clock, then the built-ins or the policy gate (operation, arguments, scope, spend, approval).
  const limits = limitsOf(p);
  let state: EntryState = 'queued';
  let error: { code: ErrorCode; message: string } | null = null;
  let plan: RunPlan | null = null;
  let approval: ApprovalInfo | null = null;
  let grant: Grant | null = null;
  /** A built-in's answer: it enters finished, with its output. */
  let answered: Pick<NewRequest, 'stdout' | 'exit_code' | 'started_at' | 'finished_at' | 'duration_ms'> | null = null;
  let steps: KeptStep[] | null = null;
  /** The plan step this request claims (payload plan_id): matched, or why not. */
  let step: StepMatch | null = null;
  const clock = clockProblem(p.created_at, p.expires_at, now, d.maxRequestAgeMs());
  if (clock) {
    state = clock.state;
    error = { code: clock.code, message: clock.message };
  } else if (p.op === PLAN_OP) {
    const r = proposePlan({ allowlist: d.allowlist(), key, args: p.args, expiresAt: p.expires_at, intent: p.intent ?? null, approvalTimeoutS: d.settings().approval_timeout_s, now: new Date(now) });
    if (r.ok) {
      state = 'awaiting_approval';
      approval = r.approval;
      steps = r.steps;
    } else {
      state = 'rejected';
      error = { code: r.code, message: r.message };
    }
  } else if (p.op.startsWith('dumbwaiter.')) {
    const r = runBuiltin({ requests: d.requests, decisions: d.decisions, hostId: d.settings().host_id }, key, p.op, p.args);
    if (r.ok) {
      const at = new Date().toISOString();
      state = 'succeeded';
      answered = { stdout: r.stdout, exit_code: 0, started_at: at, finished_at: at, duration_ms: 0 };
    } else {
      state = 'rejected';
      error = { code: r.code, message: r.message };
    }
  } else {
    const allowlist = d.allowlist();
    if (p.plan_id) step = matchStep(d.requests.bound(d.spool, p.plan_id), p.plan_id, keyId, p.op, p.args, allowlist, new Date(now));
    // A matched step is approved as the plan's approval (scope, ceilings and validity still apply).
    const approved = step?.ok ? { plan: step.plan, ceilingOverride: false } : null;
    const g = gate({ allowlist, settings: d.settings(), requests: d.requests, grants: d.grants, key, op: p.op, args: p.args, limits, intent: p.intent ?? null, approved, now: new Date(now) });
    if (g.kind === 'refuse') {
      state = 'rejected';
      error = { code: g.code, message: g.message };
    } else if (g.kind === 'ask') {
      state = 'awaiting_approval';
      plan = g.plan;
      // A plan it claims but does not match is said on the card and in its result: the person and the
      // agent both learn why it waits.
      approval = step && !step.ok ? { ...g.approval, plan_claim: { plan_id: p.plan_id!, reason: step.reason } } : g.approval;
    } else {
      plan = g.plan;
      grant = g.grant;
    }
  }
  /** The step this request takes: only one that matched and may go now (a ceiling still asks a human). */
  const taken = step?.ok && state === 'queued' ? step : null;

  /** The host's handle for it (the command line, the app, the audit log, the run's environment). */
  const handle = d.requests.handleFor(d.spool, id);
  const notes: MoveNote[] = [];
  if (step && !step.ok) {
    notes.push({ kind: 'plan_step_unmatched', message: `not a step of plan ${p.plan_id}: ${step.reason}; the usual policy applies`, details: { plan_id: p.plan_id, reason: step.reason } });
  }
  notes.push({
    kind: error ? refusalKind(state, error.code) : state === 'awaiting_approval' ? 'approval_requested' : 'claimed',
    message: error
      ? `${error.code}: ${error.message}`
      : `claimed ${handle}: ${p.op} -> ${state}${grant ? ` (approved by grant ${grant.id})` : ''}${taken ? ` (step ${taken.index + 1} of approved plan ${p.plan_id})` : ''}${approval?.ceiling ? ` (would cross ${approval.ceiling}${step?.ok ? `, though it is step ${step.index + 1} of plan ${p.plan_id}` : ''})` : ''}`,
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
        decided_by: taken ? `plan ${p.plan_id}` : grant ? `grant ${grant.id}` : null,
        plan_id: p.plan_id ?? null,
        limits_json: limits ? JSON.stringify(limits) : null,
        steps_json: steps ? JSON.stringify(steps) : null,
        ...answered,
      },
      notes,
      {
        ...(taken ? { takesStep: taken.index } : {}),
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
