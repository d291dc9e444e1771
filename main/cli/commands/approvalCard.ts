// A request waiting for a person, whole, as text for a terminal: what the app's approval card shows
// (renderer/screens/approvals/ApprovalCard.tsx), in the same order: a plan it claims, the ceiling it
// would cross, the key, spool, the agent's reason, the request, then the command (each argv element on
// a line of its own), its folder, environment (names and values), limits, or each step of a plan in
// full; the warnings; and each argument with its value (what "approve for a while" may widen). A person
// approves only what was fully on their screen, so nothing is cut. Everything the sandbox wrote is
// escaped (shared/text/visible.ts): an intent cannot redraw the lines above it or pass for a line.
import type { HostRunView, PendingApprovalView } from '../../../shared/ipc/views';
import { commandText, describeRun } from '../../../shared/allowlist/describe';
import { visible, visibleJson } from '../../../shared/text/visible';
import type { Host } from '../../core/host/host';
import { PLAN_OP } from '../../core/policy/plans';
import { describeRule } from '../../core/policy/grantRules';

const indented = (text: string, by: string) => text.split('\n').map((l) => `${by}${l}`).join('\n');

/** A run as describeRun writes it; without the host's side (environment, limits), what is known and
 *  that the rest is not (such a card cannot be approved: cardComplete). */
function runText(argv: string[], cwd: string, run: HostRunView | null | undefined, leaves = false): string {
  if (run) return describeRun({ ...run, argv, cwd, leaves_processes: run.leaves_processes || leaves });
  return `${commandText(argv)}\nin folder: ${visibleJson(JSON.stringify(cwd))}\n(the host did not say what else decides it: its environment and limits)`;
}

/** The card's lines, joined; `several`: the home has several spools (the card names the request's). */
export function approvalCardText(p: PendingApprovalView, several = true): string {
  const a = p.approval;
  const steps = a.steps ?? null;
  const out: string[] = [steps ? `Approve a plan of ${steps.length} step${steps.length === 1 ? '' : 's'}?` : `Run ${visible(a.operation)}?`];
  if (a.plan_claim) {
    out.push(`  ! Claims plan ${visible(a.plan_claim.plan_id)}, but differs from its steps: ${visible(a.plan_claim.reason)}. It is not one of that plan's approved steps, so it asks you like any request.`);
  }
  if (a.ceiling) out.push(`  ! Asked because this run would cross a spend limit: ${visible(a.ceiling)}.`);
  out.push(`  Key:      ${visible(a.key_name)} (${a.key_id})`);
  if (several) out.push(`  Spool:    ${visible(p.spool)}`);
  out.push(`  Why:      ${a.intent ? `"${visible(a.intent)}" (the agent's words)` : 'the agent gave no reason'}`);
  out.push(`  Request:  ${visible(p.id)}, asked ${a.requested_at}; denied at ${a.timeout_at} if nobody decides`);
  if (steps) {
    out.push(`  Each step runs once, without asking again, until the plan expires${p.expires_at ? ` at ${p.expires_at}` : ''}:`);
    steps.forEach((s, i) => {
      out.push(`  Step ${i + 1}: ${visible(s.op)} (${s.scope})`);
      out.push(indented(runText(s.argv, s.cwd, p.steps?.[i]), '      '));
    });
  } else {
    out.push('  Command that runs:');
    out.push(indented(runText(a.argv, a.cwd, p.run, a.leaves_processes === true), '      '));
  }
  if (a.shared_with_sandbox?.length) {
    out.push(`  ! Works on folders the sandbox can write (what it reads there the sandbox put there; what it writes the sandbox can read or change): ${a.shared_with_sandbox.map(visible).join(', ')}`);
  }
  if (!steps && (a.leaves_processes || p.run?.leaves_processes)) out.push('  ! What this command starts may keep running after it ends (its operation leaves processes running).');
  if (!steps) {
    const args = Object.entries(p.args);
    out.push(args.length ? '  Arguments (approving for a while lets later calls use these values, unless you widen one):' : '  Arguments: none (approving for a while covers later calls without arguments)');
    for (const [name, value] of args) out.push(`      ${visible(name)} = ${visibleJson(JSON.stringify(value))}`);
  }
  return out.join('\n');
}

/** Whether the card shows all that decides the run: the host's side of it (environment, limits) too. */
export function cardComplete(p: PendingApprovalView): boolean {
  const steps = p.approval.steps;
  return steps ? p.steps?.length === steps.length : p.run !== null;
}

/** What an approval did, in words: the request approved, and a time-boxed grant's reach, rule by rule. */
export function approvedText(id: string, r: ReturnType<Host['verdicts']['approve']>): string {
  const head = r.row.op === PLAN_OP ? `Approved plan ${id}: each of its steps may run once, without asking, until ${r.row.expires_at}.` : `Approved ${id}.`;
  if (!r.grant) return head;
  const rules = r.grant.args ?? {};
  const names = Object.keys(rules);
  return [
    head,
    `Grant ${r.grant.id}: until ${r.grant.expires_at}, key ${r.grant.key_id} may call ${r.grant.op} without asking ${names.length ? 'when each argument is:' : 'with no arguments.'}`,
    ...names.map((n) => `  ${n}: ${describeRule(rules[n]!)}`),
    ...(names.length ? ['  and there is no other argument.'] : []),
    ...(r.alsoApproved.length ? [`Also approved (waiting to run exactly this): ${r.alsoApproved.map((x) => x.id).join(', ')}.`] : []),
    `Revoke it with: dumbwaiter approvals revoke-grant ${r.grant.id}`,
  ].join('\n');
}
