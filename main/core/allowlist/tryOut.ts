// Trying an operation from the editor before it is saved: the exact argv, cwd and environment a sample
// request would get, and a dry run that really runs it once through the executor.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { AllowlistError, parseAllowlist } from './load';
import { planRun, type RunPlan } from './plan';
import type { AllowlistContext } from './roots';
import { startRun, type RunOutcome } from '../exec/executor';

export type PreviewResult = { ok: true; plan: RunPlan } | { ok: false; message: string };

/** The plan for `op` with `args` under the allowlist `text` (which need not be saved). */
export function previewRun(text: string, file: string, op: string, args: Record<string, unknown>, ctx: AllowlistContext): PreviewResult {
  let allowlist;
  try {
    allowlist = parseAllowlist(text, file, ctx);
  } catch (e) {
    if (e instanceof AllowlistError) return { ok: false, message: `the allowlist is not valid yet: ${e.problems[0]?.message ?? e.message}` };
    throw e;
  }
  const planned = planRun(allowlist, op, args);
  return planned.ok ? planned : { ok: false, message: planned.message };
}

export type DryRunResult = { ok: true; plan: RunPlan; run: RunOutcome } | { ok: false; message: string };

/** Runs the operation once, as the daemon would (no shell, own process group, its timeout and limits). */
export async function dryRun(text: string, file: string, op: string, args: Record<string, unknown>, ctx: AllowlistContext, killGraceMs: number): Promise<DryRunResult> {
  const preview = previewRun(text, file, op, args, ctx);
  if (!preview.ok) return preview;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dumbwaiter-dry-run-'));
  try {
    const run = await startRun(`dry-run-${randomUUID()}`, preview.plan, path.join(dir, 'output.log'), killGraceMs).done;
    return { ok: true, plan: preview.plan, run };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
