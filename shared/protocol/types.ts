// Wire types of protocol v1: what the host writes and the sandbox reads.

import type { ProbeVerdict } from './probe';

export const FINAL_STATES = ['succeeded', 'failed', 'rejected', 'denied', 'expired', 'cancelled'] as const;
export const STATES = ['queued', 'awaiting_approval', 'running', ...FINAL_STATES, 'uncertain'] as const;
export type RequestState = (typeof STATES)[number];

export function isFinalState(s: RequestState): boolean {
  return (FINAL_STATES as readonly string[]).includes(s);
}

export type ErrorCode =
  | 'bad_envelope'
  | 'unknown_key'
  | 'revoked_key'
  | 'bad_signature'
  | 'clock_skew'
  | 'expired'
  | 'unknown_op'
  | 'bad_args'
  | 'scope_denied'
  | 'spend_ceiling'
  | 'timeout'
  | 'spawn_failed'
  | 'interrupted'
  | 'denied'
  | 'approval_timeout'
  /** The operation's reconcile command said its effect did not happen: safe to retry with a new id. */
  | 'not_applied';

/** The refusals that come before a request is authenticated: the host cannot sign them, since anyone
 *  could have written the request (docs/PROTOCOL.md section 8). */
export const UNAUTHENTICATED_CODES = ['bad_envelope', 'unknown_key', 'revoked_key', 'bad_signature'] as const satisfies readonly ErrorCode[];

export interface ResultError {
  code: ErrorCode;
  message: string;
}

/** What the human approver sees (extension of the result while and after it waits for approval). */
export interface ApprovalInfo {
  operation: string;
  argv: string[];
  cwd: string;
  key_id: string;
  key_name: string;
  intent: string | null;
  requested_at: string;
  /** When it will be denied if nobody decides. */
  timeout_at: string;
  /** The spend ceiling this run would cross, when that is why a human is asked. */
  ceiling: string | null;
  /** Path roots of this run that the operation declares shared with the sandbox: the program works on
   *  what the sandbox controls there (the approval card warns). Absent: none. */
  shared_with_sandbox?: string[];
  /** The operation may leave processes running after its main process exits (they are not killed). */
  leaves_processes?: boolean;
  /** A plan's approval (operation `dumbwaiter.plan`): every step as it would run. */
  steps?: PlanStep[];
  /** The request cites a plan (payload `plan_id`) it is not a step of: which plan, and how it differs.
   *  It then waits for a human like any request, and says so. Absent: it cites none, or matched. */
  plan_claim?: { plan_id: string; reason: string };
  /** Who approved or denied it ("grant g_..." for a time-boxed approval), once decided. */
  decided_by?: string;
  decided_at?: string;
}

/** One run of an operation's reconcile command: did the interrupted run take effect? */
export interface ReconcileAttempt {
  at: string;
  argv: string[];
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Why it gave no verdict: a timeout, it could not start, or a stop of the host ended it. (An
   *  operation without reconcile is never checked: that gives no attempt.) */
  error: string | null;
  /** exit 0: applied; exit 1: not applied; anything else: unknown. */
  verdict: 'applied' | 'not_applied' | 'unknown';
  /** Who ran it: "daemon (restart)", "daemon (orphan ended)", "cli:<user>" (resolve --check), or the app's actor. */
  by: string;
}

/** A step of a plan: what it asks, what it would run, and (once used) the request that used it. */
export interface PlanStep {
  op: string;
  args: Record<string, unknown>;
  argv: string[];
  cwd: string;
  scope: 'read' | 'write';
  request_id: string | null;
  state: RequestState | null;
}

export interface PlanDoc {
  expires_at: string;
  steps: PlanStep[];
}

/** `S/results/<id>.json`. Fields beyond the spec's minimum are backward-compatible extensions. */
export interface ResultDoc {
  v: 1;
  id: string;
  op: string | null;
  state: RequestState;
  updated_at: string;
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  error: ResultError | null;
  /** Set when an `uncertain` run was settled: by a human, or by the operation's reconcile command. */
  resolved_by?: 'human' | 'reconcile';
  note?: string;
  /** Present when the request needed (or needs) a human's approval. */
  approval?: ApprovalInfo;
  /** Who cancelled it. */
  cancelled_by?: string;
  /** While `running`: the run outlived a crash of the host, and the restarted host watches it. */
  orphaned?: true;
  /** The last look-up of an interrupted run's effect by its operation's reconcile command. */
  reconcile?: ReconcileAttempt;
  /** Extension: while `uncertain`, the host's reconcile check of the run is still to come (or under
   *  way, or waits for the host's next start): not the outcome yet, so a client keeps waiting. */
  reconcile_pending?: true;
  /** A `dumbwaiter.plan` request: its steps, and the requests that used them. */
  plan?: PlanDoc;
  /** What the id is bound to (shared/protocol/requestHash.ts): in every result the host signs, so a
   *  client can tell its own request from another one with the same id. */
  request_hash?: string;
  /** In a finished run's result, when it had a live log: how many bytes the host wrote to
   *  results/<id>.log and their SHA-256 (hex), so a client that streamed the log can tell whether what
   *  it showed is what the host wrote (anyone may replace the log file). */
  log_bytes?: number;
  log_sha256?: string;
}

export interface KeyFile {
  v: 1;
  key_id: string;
  secret: string;
}

export interface Envelope {
  v: 1;
  key_id: string;
  payload: string;
  mac: string;
}

export interface Payload {
  id: string;
  op: string;
  args: Record<string, unknown>;
  created_at: string;
  expires_at?: string;
  intent?: string;
  /** Tighter limits than the operation's (never looser: larger is `bad_args`). */
  timeout_s?: number;
  max_output_bytes?: number;
  /** Run as a step of this approved plan (`dumbwaiter.plan`) of the same key. */
  plan_id?: string;
}

export interface HostStatusDoc {
  v: 1;
  host_id: string;
  app_version: string;
  protocol: 1;
  heartbeat_at: string;
  paused: boolean;
  queue_depth: number;
  running: number;
  /** Extension: false once the daemon stopped cleanly. */
  up?: boolean;
  /** Extension: present (true) while the spool's disk refuses writes. */
  disk_full?: boolean;
  /** Extension: why the host takes no new requests now (no room for its ledger in its home's
   *  filesystem); they wait in queue/, and are taken once the reason goes. */
  held?: string;
  /** Extension: the name of this spool in the host's home (one host may serve several spools). */
  spool?: string;
  /** Extension: the host's probe of this spool's mount (events false: the host rescans on an interval only). */
  probe?: { verdict: ProbeVerdict; summary: string; events: boolean };
}

export interface CatalogOperation {
  name: string;
  description: string;
  scope: 'read' | 'write';
  approval: 'never' | 'always';
  timeout_s: number;
  args_schema: Record<string, unknown>;
  /** The operation declares a reconcile command: a run whose end the host missed can be settled by asking. */
  reconcile?: true;
}

export interface CatalogDoc {
  v: 1;
  updated_at: string;
  operations: CatalogOperation[];
}

export type InboxKind = 'conflict' | 'notice' | 'key_revoked';

export interface InboxMessage {
  v: 1;
  id: string;
  kind: InboxKind;
  created_at: string;
  ref: string | null;
  text: string;
  /** For a conflict: the hash of the refused request (its id is bound to another), so that the client
   *  that wrote it can tell this message is about its request. */
  request_hash?: string;
}

export const MAX_REQUEST_BYTES = 64 * 1024;
/** A result's `stdout` and `stderr` each keep at most the last this many bytes of their stream (fewer
 *  when the operation's `max_output_bytes` is lower); the whole output, up to `max_output_bytes`, is in
 *  the run's log, which the result signs (`log_bytes`, `log_sha256`). JSON escapes a control byte as 6
 *  characters, so this keeps every result well under the clients' read limit (64 MiB) whatever the
 *  output's bytes (some 3 MiB for NUL excerpts of both streams), and what the host holds, sends and
 *  repairs of a result small. */
export const OUTPUT_EXCERPT_BYTES = 256 * 1024;
/** host.json: far more than the host ever writes, so anything bigger was not written by it. */
export const MAX_HOST_JSON_BYTES = 64 * 1024;
export const MAX_INTENT_CHARS = 2000;
