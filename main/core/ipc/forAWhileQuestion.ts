// The native question before a time-boxed approval (a grant): later calls then run without a card, so
// the person must see all that this one runs and, argument by argument, what later ones may carry.
import type { PendingApproval } from '../host/verdicts';
import { formatDuration } from '../duration';
import { describeRule, type ArgRules } from '../policy/grantRules';
import { visible, visibleJson } from '../../../shared/text/visible';
import { describeRun } from '../../../shared/allowlist/describe';

const quoted = (text: string) => visibleJson(JSON.stringify(text));

export function forAWhileQuestion(p: PendingApproval, rules: ArgRules, forSeconds: number) {
  const a = p.approval;
  const names = Object.keys(rules);
  const key = `key ${quoted(a.key_name)} (${a.key_id})`;
  return {
    title: 'Approve for a while',
    message: `Approve this call of ${visible(p.op)}, and let ${key} call ${visible(p.op)} without asking for ${formatDuration(forSeconds)}, with the arguments below?`,
    detail: [
      'Runs now:',
      describeRun({ argv: a.argv, cwd: a.cwd, env: p.run?.env ?? {}, timeout_s: p.run?.timeout_s ?? null, max_output_bytes: p.run?.max_output_bytes ?? null, leaves_processes: p.run?.leaves_processes }),
      '',
      `For ${formatDuration(forSeconds)} from now, later calls of ${visible(p.op)} by ${key} run without a card when ${names.length ? 'their arguments are:' : 'they have no arguments.'}`,
      ...names.map((n) => `  ${visible(n)}: ${describeRule(rules[n]!)}`),
      ...(names.length ? ['and they have no other argument.'] : []),
      'Requests of this key already waiting to run exactly this command, folder and environment are approved with it; others keep their cards.',
      'Revoke the grant under Approvals to end it sooner.',
    ].join('\n'),
    confirmLabel: 'Approve for a while',
  };
}
