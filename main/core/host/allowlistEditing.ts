// The allowlist as an editor works on it (the app's allowlist.* calls): the file with its hash, text
// checked before it is saved, and the plan or a dry run of an operation under text not yet saved.
import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../fs/atomicWrite';
import { checkAllowlist, type AllowlistCheck } from '../allowlist/check';
import { dryRun, dryRunReconcile, previewReconcile, previewRun, type DryReconcileResult, type DryRunResult, type PreviewResult } from '../allowlist/tryOut';
import { sha256Hex } from '../../../shared/protocol/canonicalJson';
import { attemptEnd } from '../../../shared/protocol/reconcileText';
import type { AllowlistSaved, AllowlistView } from '../../../shared/ipc/views';
import type { HostContext } from './context';

export class AllowlistEditing {
  constructor(private readonly ctx: HostContext) {}

  private get file(): string {
    return this.ctx.core.home.allowlist;
  }

  /** The allowlist file as it is, with its hash (to notice an outside edit) and its check. */
  read(): AllowlistView {
    const text = existsSync(this.file) ? readFileSync(this.file, 'utf8') : '';
    return { path: this.file, text, hash: sha256Hex(text), check: this.validate(text) };
  }

  validate(text: string): AllowlistCheck {
    return checkAllowlist(text, this.file, this.ctx.core.allowlistContext);
  }

  /**
   * Saves allowlist text from an editor: refused when invalid, or when the file changed since the
   * editor read it (`baseHash`), so an outside edit is never overwritten. A running daemon reloads it.
   */
  save(text: string, baseHash: string, actor: string): AllowlistSaved {
    const current = this.read();
    const check = this.validate(text);
    if (current.hash !== baseHash) return { saved: false, reason: 'changed_outside', check, hash: current.hash };
    if (!check.ok) return { saved: false, reason: 'invalid', check, hash: current.hash };
    writeFileAtomic(this.file, text);
    this.ctx.core.audit.record({ kind: 'allowlist_saved', actor, message: `${actor} saved the allowlist (${check.operations.length} operations)` });
    return { saved: true, hash: sha256Hex(text) };
  }

  /** The plan a sample request would get under `text` (the editor's, maybe unsaved). */
  preview(text: string, op: string, args: Record<string, unknown>): PreviewResult {
    return previewRun(text, this.file, op, args, this.ctx.core.allowlistContext);
  }

  /** The plan of an operation's reconcile command under `text`, for a stand-in request id. */
  previewReconcile(text: string, op: string, args: Record<string, unknown>): PreviewResult {
    return previewReconcile(text, this.file, op, args, this.ctx.core.allowlistContext);
  }

  /** Runs an operation once from the editor, outside the queue; the audit log records it. */
  async dryRun(text: string, op: string, args: Record<string, unknown>, actor: string): Promise<DryRunResult> {
    const r = await dryRun(text, this.file, op, args, this.ctx.core.allowlistContext, this.ctx.settings.kill_grace_s * 1000);
    if (r.ok) this.auditDryRun(actor, op, op, r, null);
    return r;
  }

  /** Runs an operation's reconcile command once from the editor (for a stand-in request id); audited as a dry run. */
  async dryRunReconcile(text: string, op: string, args: Record<string, unknown>, actor: string): Promise<DryReconcileResult> {
    const r = await dryRunReconcile(text, this.file, op, args, this.ctx.core.allowlistContext, this.ctx.settings.kill_grace_s * 1000);
    if (r.ok) this.auditDryRun(actor, op, `the reconcile command of ${op}`, r, r.verdict);
    return r;
  }

  /** `verdict`: a reconcile command's (null for the operation itself). */
  private auditDryRun(actor: string, op: string, what: string, r: Extract<DryRunResult, { ok: true }>, verdict: string | null): void {
    const { argv, cwd } = r.plan;
    const end = attemptEnd({ exit_code: r.run.exit_code, signal: r.run.signal, error: r.run.error?.message ?? null });
    this.ctx.core.audit.record({
      kind: 'dry_run',
      actor,
      op,
      message: `${actor} dry-ran ${what}: ${end}${verdict ? ` (${verdict})` : ''}`,
      details: { argv, cwd, duration_ms: r.run.duration_ms, ...(verdict ? { reconcile: true, verdict } : {}) },
    });
  }
}
