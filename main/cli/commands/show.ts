// `dumbwaiter show ID`: one request in full, as the ledger has it: what was asked (operation, key,
// arguments, the agent's reason), what runs (each argv element, folder, environment, limits), who
// decided what and when, the outcome, the last reconcile attempt, and every audit entry about it.
import type { Host } from '../../core/host/host';
import { UserError } from '../../core/errors';
import { approvalOf, planOf, reconcileOf, type RequestRow } from '../../core/ledger/requests';
import { describeRun } from '../../../shared/allowlist/describe';
import type { PlanStep, ReconcileAttempt } from '../../../shared/protocol/types';
import { attemptEnd, verdictText } from '../../../shared/protocol/reconcileText';
import { visible, visibleJson } from '../../../shared/text/visible';
import { printJson, say } from '../output';

export const SHOW_USAGE = 'usage: dumbwaiter show ID [--json]';

const json = (v: unknown) => visibleJson(JSON.stringify(v));
const indented = (text: string, by = '    ') => text.split('\n').map((l) => `${by}${l}`).join('\n');
const parsed = <T>(text: string | null): T | null => (text ? (JSON.parse(text) as T) : null);

/** The request as data: its row, with the JSON it keeps as text parsed. */
function requestDoc(svc: Host, row: RequestRow) {
  const { args_json, plan_json: _plan, approval_json: _approval, reconcile_json: _reconcile, steps_json, limits_json, ...rest } = row;
  const history = svc.audit.search({ requestId: row.id, limit: 10_000 }).reverse();
  return {
    ...rest,
    key_name: svc.keys.list().find((k) => k.key_id === row.key_id)?.name ?? null,
    args: parsed<Record<string, unknown>>(args_json),
    plan: planOf(row),
    approval: approvalOf(row),
    reconcile: reconcileOf(row),
    steps: parsed<PlanStep[]>(steps_json),
    limits: parsed<Record<string, number>>(limits_json),
    history,
  };
}

function reconcileLines(r: ReconcileAttempt): string[] {
  return [
    `Reconcile: last attempt ${r.at} by ${visible(r.by)}: it ${verdictText(r.verdict)} (${visible(attemptEnd(r))})`,
    `    command: ${json(r.argv)}`,
    ...(r.stdout ? [`    stdout: ${json(r.stdout)}`] : []),
    ...(r.stderr ? [`    stderr: ${json(r.stderr)}`] : []),
  ];
}

function decisionLine(row: RequestRow): string | null {
  if (row.decided_by) {
    const what = row.state === 'denied' ? 'denied' : row.error_code === 'expired' ? 'expired' : 'approved';
    return `Decided:   ${what} by ${visible(row.decided_by)} at ${row.decided_at ?? '?'}${row.state === 'denied' && row.error_message ? `: ${visible(row.error_message)}` : ''}`;
  }
  return approvalOf(row) && row.state === 'awaiting_approval' ? `Decided:   not yet (waiting for a person: dumbwaiter approvals watch)` : null;
}

function outcomeLines(row: RequestRow): string[] {
  const out: string[] = [];
  const ended = row.exit_code !== null ? `exit code ${row.exit_code}` : row.signal ? `ended by ${row.signal}` : null;
  if (ended) out.push(`Outcome:   ${ended}${row.duration_ms !== null ? ` after ${(row.duration_ms / 1000).toFixed(1)} s` : ''}`);
  if (row.error_code) out.push(`Error:     ${row.error_code}: ${visible(row.error_message ?? '')}`);
  if (row.cancel_requested_by) out.push(`Cancelled: by ${visible(row.cancel_requested_by)}`);
  if (row.resolved_by) out.push(`Resolved:  by ${visible(row.resolved_by)}${row.note ? `: ${visible(row.note)}` : ''}`);
  if (row.started_at) {
    const truncated = row.stdout_truncated || row.stderr_truncated ? ` (${row.stdout_truncated + row.stderr_truncated} bytes beyond the limit not kept)` : '';
    out.push(`Output:    ${Buffer.byteLength(row.stdout)} bytes on stdout, ${Buffer.byteLength(row.stderr)} on stderr${truncated}: dumbwaiter logs ${row.id}`);
  }
  return out;
}

export function showRequest(svc: Host, id: string, asJson: boolean): void {
  const row = svc.requests.get(id);
  if (!row) throw new UserError(`no request ${JSON.stringify(id)} (dumbwaiter requests lists them)`);
  const doc = requestDoc(svc, row);
  if (asJson) return printJson(doc);
  const plan = doc.plan;
  const lines = [
    `Request:   ${visible(row.id)}${row.wire_id !== row.id ? ` (the sandbox's id ${visible(row.wire_id)})` : ''}, spool ${visible(row.spool)}`,
    `Operation: ${visible(row.op)}`,
    `Key:       ${visible(doc.key_name ?? '(deleted)')} (${row.key_id})`,
    `State:     ${row.state}${row.orphaned ? ' (orphaned: it outlived a host that stopped, and is watched)' : ''}`,
    `Why:       ${row.intent ? `"${visible(row.intent)}" (the agent's words)` : 'the agent gave no reason'}`,
    `Arguments: ${json(doc.args ?? {})}`,
    `Claimed:   ${row.claimed_at}${row.started_at ? `; started ${row.started_at}` : ''}${row.finished_at ? `; finished ${row.finished_at}` : ''}`,
    ...(plan ? ['Run:', indented(describeRun(plan))] : []),
    ...(doc.steps ? [`Plan of ${doc.steps.length} step(s), usable until ${row.expires_at ?? '?'}:`, ...doc.steps.flatMap(stepLines)] : []),
    ...[decisionLine(row)].filter((l) => l !== null),
    ...outcomeLines(row),
    ...(doc.reconcile ? reconcileLines(doc.reconcile) : []),
    'History:',
    ...doc.history.map((e) => `  ${e.at}  ${e.kind}  ${visible(e.actor)}: ${visible(e.message)}`),
  ];
  say(lines.join('\n'));
}

function stepLines(s: PlanStep, i: number): string[] {
  return [
    `  ${i + 1}. ${visible(s.op)} (${s.scope}): ${s.request_id ? `used by ${visible(s.request_id)} (${s.state ?? '?'})` : 'not used yet'}`,
    `     argv: ${json(s.argv)}`,
    `     in folder: ${json(s.cwd)}`,
  ];
}
