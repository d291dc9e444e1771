// Trying an operation from the editor before it is saved: the exact argv, cwd and environment a sample
// request would get, and a dry run that really runs it once through the executor; the same for its
// reconcile command.
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AllowlistError, parseAllowlist } from './load';
import { planReconcile, planRun, reconcileVerdict, type RunPlan } from './plan';
import type { AllowlistContext } from './roots';
import type { Allowlist } from './types';
import { startRun, type RunOutcome } from '../exec/executor';
import { DRY_RUN_REQUEST_ID } from '../../../shared/ipc/dryRun';
import type { ReconcileAttempt } from '../../../shared/protocol/types';

export type PreviewResult = { ok: true; plan: RunPlan } | { ok: false; message: string };

export { DRY_RUN_REQUEST_ID };

function parsed(text: string, file: string, ctx: AllowlistContext): Allowlist | { ok: false; message: string } {
  try {
    return parseAllowlist(text, file, ctx);
  } catch (e) {
    if (e instanceof AllowlistError) return { ok: false, message: `the allowlist is not valid yet: ${e.problems[0]?.message ?? e.message}` };
    throw e;
  }
}

/** The plan for `op` with `args` under the allowlist `text` (which need not be saved). */
export function previewRun(text: string, file: string, op: string, args: Record<string, unknown>, ctx: AllowlistContext): PreviewResult {
  const allowlist = parsed(text, file, ctx);
  if ('ok' in allowlist) return allowlist;
  const planned = planRun(allowlist, op, args);
  return planned.ok ? planned : { ok: false, message: planned.message };
}

/** The plan of `op`'s reconcile command with `args`, for the stand-in request id DRY_RUN_REQUEST_ID. */
export function previewReconcile(text: string, file: string, op: string, args: Record<string, unknown>, ctx: AllowlistContext): PreviewResult {
  const allowlist = parsed(text, file, ctx);
  if ('ok' in allowlist) return allowlist;
  const planned = planReconcile(allowlist, op, args, DRY_RUN_REQUEST_ID);
  return planned.ok ? planned : { ok: false, message: planned.message };
}

export type DryRunResult = { ok: true; plan: RunPlan; run: RunOutcome } | { ok: false; message: string };
export type DryReconcileResult = { ok: true; plan: RunPlan; run: RunOutcome; verdict: ReconcileAttempt['verdict'] } | { ok: false; message: string };

/**
 * Runs a plan once, as the daemon would (no shell, own process group, its timeout and limits), as
 * request `requestId` (its DUMBWAITER_REQUEST_ID): for a reconcile command, the id its {request_id} was
 * given, as a real check uses the request's id for both.
 */
async function runOnce(plan: RunPlan, requestId: string, killGraceMs: number): Promise<RunOutcome> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dumbwaiter-dry-run-'));
  try {
    return await startRun(requestId, plan, openSync(path.join(dir, 'output.log'), 'wx', 0o600), killGraceMs).done;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the operation once, as the stand-in request its reconcile command is then tried for. */
export async function dryRun(text: string, file: string, op: string, args: Record<string, unknown>, ctx: AllowlistContext, killGraceMs: number): Promise<DryRunResult> {
  const preview = previewRun(text, file, op, args, ctx);
  if (!preview.ok) return preview;
  return { ok: true, plan: preview.plan, run: await runOnce(preview.plan, DRY_RUN_REQUEST_ID, killGraceMs) };
}

/** Runs the operation's reconcile command once, for the stand-in request id, and says what its answer would mean. */
export async function dryRunReconcile(text: string, file: string, op: string, args: Record<string, unknown>, ctx: AllowlistContext, killGraceMs: number): Promise<DryReconcileResult> {
  const preview = previewReconcile(text, file, op, args, ctx);
  if (!preview.ok) return preview;
  const run = await runOnce(preview.plan, DRY_RUN_REQUEST_ID, killGraceMs);
  return { ok: true, plan: preview.plan, run, verdict: reconcileVerdict(run) };
}
