// What crosses IPC: plain data, no secrets except a new key's file (shown once). These are the one
// definition of each shape: the core's types are these (keys, grants, allowlist checks, approvals,
// audit entries), or are checked equal to them at compile time where the core's zod schema is the
// source (settings, ceilings). shared/ never imports main/: the renderer and the sandbox's clients use it.
import type { ApprovalInfo, PlanStep, ReconcileAttempt, RequestState } from '../protocol/types';
import type { ProbeReport } from '../protocol/probe';
import type { Scope } from '../allowlist/schema';

/** One spool of the home (a folder shared with one sandbox), with its state. */
export interface SpoolInfo {
  name: string;
  dir: string;
  /** Why it is not served now (the daemon stopped touching it, or the folder is unsafe), or null. */
  problem: string | null;
  /** The last probe of its mount, or null before one. */
  probe: ProbeReport | null;
  /** Its active keys, and its requests not finished (uncertain ones included). */
  keys: number;
  open: number;
  heartbeat_at: string | null;
  /** The allowlist's operations this spool's sandbox sees (all of them, but for those with `spools:`). */
  operations: string[];
}

export interface StatusView {
  home: string;
  /** The folder of the spool commands act on by default (`default`, or the only one). */
  spool: string | null;
  spools: SpoolInfo[];
  daemon: { running: boolean; heartbeat_at: string | null };
  /** Why a spool is not served (each named when there are several), or null. */
  spool_problem: string | null;
  paused: boolean;
  /** While the daemon runs, what it serves: `ok` when that is the file as it is, else `error` says why
   *  the file is refused and `serving` what is served instead (the last good version, or nothing),
   *  `since` when that version was loaded from the file. While it does not run (`serving` null), the
   *  file as a start would load it. `disabled`: operations valid as written that cannot run as the
   *  disk is now (a link leads one of their folders into a spool or the home), each with why; left
   *  out of the catalog, refused. */
  allowlist: {
    ok: boolean;
    operations: string[];
    error: string | null;
    disabled: { name: string; reason: string }[];
    serving: 'file' | 'last_good' | 'none' | null;
    since: string | null;
  };
  requests: Partial<Record<RequestState, number>>;
  /** `orphaned`: the run outlived a host restart; the host watches it (cancel kills it). */
  running: { id: string; op: string; key_id: string; spool: string; started_at: string | null; orphaned: boolean }[];
  /** `reconcile`: the last look-up of its effect; `reconcilable`: its operation declares one (Check again). */
  uncertain: {
    id: string;
    op: string;
    key_id: string;
    spool: string;
    started_at: string | null;
    error_message: string | null;
    reconcile: ReconcileAttempt | null;
    reconcilable: boolean;
  }[];
  approvals: PendingApprovalView[];
  keys: { active: number; revoked: number };
  spend: SpendView[];
}

export interface PendingApprovalView {
  id: string;
  op: string;
  key_id: string;
  spool: string;
  waiting_since: string;
  /** The request's own expiry: for a plan, until when its steps may be used once approved. */
  expires_at: string | null;
  approval: ApprovalInfo;
  /** The request's arguments as the agent gave them (a grant's rules are per argument); {} for a plan. */
  args: Record<string, unknown>;
  /** Host-side only (environment values may be secrets): what else decides the run. A plan has
   *  `run` null and one entry of `steps` per step, in order. */
  run: HostRunView | null;
  steps: HostRunView[] | null;
}

export interface HostRunView {
  env: Record<string, string>;
  timeout_s: number | null;
  max_output_bytes: number | null;
  leaves_processes: boolean;
}

/**
 * How a time-boxed approval treats one argument of later calls. By default each argument must equal
 * the value on the card the person approved; the person may widen one to any value, or to values
 * matching a pattern they typed (RE2, whole value).
 */
export type GrantArgRule = { equals: unknown } | { any: true } | { match: string };

/** How long a time-boxed approval may last, in minutes: the choices the app's card and
 *  `dumbwaiter approvals watch` offer. */
export const GRANT_MINUTES = [5, 15, 30, 60, 120, 240, 480] as const;

export interface GrantView {
  id: string;
  key_id: string;
  op: string;
  /** Each argument's rule, by name (an argument not named must be absent from the call). Absent on a
   *  grant made before grants named their arguments: it covers any arguments. */
  args?: Record<string, GrantArgRule>;
  created_at: string;
  expires_at: string;
  created_by: string;
  revoked_at: string | null;
  revoked_by: string | null;
  uses: number;
}

export interface AllowlistView {
  path: string;
  text: string;
  /** sha256 of the text: saving with a stale hash is refused, so an outside edit is never overwritten. */
  hash: string;
  check: AllowlistCheck;
}

export interface AllowlistCheck {
  ok: boolean;
  operations: string[];
  problems: { line: number | null; field: string; message: string }[];
}

/** `cancelled`: the person said no to the native question showing the commands the save adds or changes. */
export type AllowlistSaved = { saved: true; hash: string } | { saved: false; reason: 'invalid' | 'changed_outside' | 'cancelled'; check: AllowlistCheck; hash: string };

/** A sandbox key as the ledger holds it, without its secret. */
export interface KeyInfo {
  key_id: string;
  name: string;
  scope: Scope;
  /** null: every operation its scope allows. */
  ops: string[] | null;
  created_at: string;
  revoked_at: string | null;
  rotated_to: string | null;
  last_used_at: string | null;
  /** The one spool whose requests it may sign (a request through another spool is `unknown_key`). */
  spool: string;
}

export interface KeyView extends KeyInfo {
  /** Requests made with this key that are still in the ledger. */
  requests: number;
}

export interface CeilingView {
  name: string;
  per: 'global' | 'key';
  key_id?: string;
  window_s: number;
  max_runs?: number;
  max_cost?: number;
  max_run_time_s?: number;
  action: 'reject' | 'ask';
}

export interface SettingsView {
  spools: { name: string; dir: string }[];
  host_id: string;
  max_request_age_s: number;
  rescan_interval_ms: number;
  file_events: boolean;
  max_concurrent_runs: number;
  shutdown_grace_s: number;
  runs_on_stop: 'stop' | 'leave';
  kill_grace_s: number;
  approval_timeout_s: number;
  ceilings: CeilingView[];
  start_at_login: boolean;
  notifications: boolean;
  retention_spool_days: number;
  retention_ledger_days: number;
}


/** A ceiling's spend so far: one entry per ceiling, or per key for a per-key ceiling. */
export interface SpendView {
  ceiling: CeilingView;
  /** The key this figure is for; null for a global ceiling. */
  key_id: string | null;
  spend: { runs: number; cost: number; run_time_s: number };
}

export interface AuditView {
  seq: number;
  at: string;
  kind: string;
  actor: string;
  request_id: string | null;
  key_id: string | null;
  op: string | null;
  /** The spool it concerns (null: the host as a whole). */
  spool: string | null;
  message: string;
  details: Record<string, unknown> | null;
}

export interface RequestView {
  /** The host's handle (what the app and the command line name it by). */
  id: string;
  /** The id its sandbox gave, where that differs from `id` (a handle `<id>@<spool>`). */
  wire_id?: string;
  key_id: string;
  op: string;
  /** The spool it came through. */
  spool: string;
  args: Record<string, unknown>;
  intent: string | null;
  state: RequestState;
  created_at: string;
  /** When the request (for a plan: its steps) stops being valid, if it said. */
  expires_at: string | null;
  claimed_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  exit_code: number | null;
  error: { code: string; message: string } | null;
  stdout: string;
  stderr: string;
  approval: ApprovalInfo | null;
  decided_by: string | null;
  /** What runs (or ran): null for a request refused before it was planned. */
  plan: { argv: string[]; cwd: string } | null;
  /** The run outlived a host restart and is watched (state `running`). */
  orphaned: boolean;
  /** Who settled an uncertain run: a person, or the operation's reconcile command. */
  resolved_by: 'human' | 'reconcile' | null;
  /** The last look-up of an interrupted run's effect. */
  reconcile: ReconcileAttempt | null;
  /** The approved plan this request said it was a step of. */
  plan_id: string | null;
  /** A `dumbwaiter.plan` request: its steps, each with the request that used it (null otherwise). */
  steps: PlanStep[] | null;
}

/** A request as lists show it: no arguments, no output. `seq` pages the list. */
export interface RequestSummaryView {
  seq: number;
  id: string;
  key_id: string;
  op: string;
  spool: string;
  state: RequestState;
  intent: string | null;
  claimed_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  exit_code: number | null;
  error_code: string | null;
  error_message: string | null;
  updated_at: string;
  /** Who settled an interrupted run: a human, or its operation's reconcile command. */
  resolved_by: 'human' | 'reconcile' | null;
}

/** Part of a running request's live output; ask again from `next` for more. */
export interface LiveOutputView {
  text: string;
  next: number;
  skipped: number;
  state: RequestState | null;
}

export interface PlanView {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  timeout_s: number;
  max_output_bytes: number;
  approval: 'never' | 'always';
}

export type PreviewView = { ok: true; plan: PlanView } | { ok: false; message: string };

export type DryRunView =
  | { ok: true; plan: PlanView; exit_code: number | null; signal: string | null; stdout: string; stderr: string; duration_ms: number; error: { code: string; message: string } | null }
  | { ok: false; message: string; cancelled?: true };

/** A dry run of an operation's reconcile command: as a dry run, and what its answer would mean. */
export type ReconcileDryRunView = (Extract<DryRunView, { ok: true }> & { verdict: ReconcileAttempt['verdict'] }) | Extract<DryRunView, { ok: false }>;
