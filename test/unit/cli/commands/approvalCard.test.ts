// The terminal's approval card (main/cli/commands/approvalCard.ts): everything that decides a run, as
// the app's card shows it, escaped; a plan with every step in full; a card without the host's side of
// the run said as such and not complete.
import { describe, expect, it } from 'vitest';
import { approvalCardText, cardComplete } from '../../../../main/cli/commands/approvalCard';
import type { PendingApprovalView } from '../../../../shared/ipc/views';

const base = (over: Partial<PendingApprovalView> = {}, approval: Partial<PendingApprovalView['approval']> = {}): PendingApprovalView => ({
  id: 'req-1',
  op: 'deploy',
  key_id: 'k_1',
  spool: 'default',
  waiting_since: '2026-01-01T00:00:00.000Z',
  expires_at: null,
  approval: {
    operation: 'deploy',
    argv: ['/usr/bin/deploy', '--target', 'prod one'],
    cwd: '/srv/app',
    key_id: 'k_1',
    key_name: 'agent',
    intent: 'ship it',
    requested_at: '2026-01-01T00:00:00.000Z',
    timeout_at: '2026-01-01T01:00:00.000Z',
    ceiling: null,
    ...approval,
  },
  args: { target: 'prod one' },
  run: { env: { REGION: 'eu-1', TOKEN_FILE: '/run/t' }, timeout_s: 60, max_output_bytes: 1000, leaves_processes: false },
  steps: null,
  ...over,
});

describe('approvalCardText', () => {
  it('shows each argv element, the folder, every environment variable, the limits, the warnings and each argument', () => {
    const text = approvalCardText(base({}, { ceiling: 'ceiling "daily-runs" (all keys, per 86400 s): 5 of 5 runs used', shared_with_sandbox: ['/srv/app'], plan_claim: { plan_id: 'p-1', reason: 'target differs' } }), false);
    expect(text).toContain('program: "/usr/bin/deploy"\n      argument 1: "--target"\n      argument 2: "prod one"');
    expect(text).toContain('in folder: "/srv/app"');
    expect(text).toContain('REGION="eu-1"');
    expect(text).toContain('TOKEN_FILE="/run/t"');
    expect(text).toContain('timeout: 60 s');
    expect(text).toContain('at most 1000 bytes');
    expect(text).toContain('  ! Asked because this run would cross a spend limit: ceiling "daily-runs" (all keys, per 86400 s): 5 of 5 runs used.\n');
    expect(text).toContain('sandbox can write');
    expect(text).toContain('Claims plan p-1, but differs from its steps: target differs');
    expect(text).toContain('target = "prod one"');
    expect(text).not.toContain('Spool:'); // one spool: not named, as on the app's card
    expect(cardComplete(base())).toBe(true);
  });

  it('escapes what the sandbox wrote, so that no line of it can pass for one of the card', () => {
    const text = approvalCardText(base({ args: { 'x\ny': 'a\x1b[2Kb' } }, { intent: 'ok\x1b[1A\n  Command that runs: /bin/true', argv: ['/bin/echo', '\u202eexe.jpg'] }));
    for (const raw of ['\x1b', '\u202e']) expect(text).not.toContain(raw);
    expect(text.split('\n').filter((l) => l.trimStart().startsWith('Command that runs'))).toEqual(['  Command that runs:']);
    expect(text).toContain('Why:      "ok\\x1b[1A\\n  Command that runs: /bin/true"');
    expect(text).toContain('argument 1: "\\u202eexe.jpg"');
    expect(text).toContain('x\\ny = "a\\u001b[2Kb"');
  });

  it('shows every step of a plan in full, with its environment', () => {
    const steps = [
      { op: 'build', args: {}, argv: ['/usr/bin/make'], cwd: '/srv/app', scope: 'read' as const, request_id: null, state: null },
      { op: 'deploy', args: {}, argv: ['/usr/bin/deploy', 'prod'], cwd: '/srv/app', scope: 'write' as const, request_id: null, state: null },
    ];
    const run = (env: Record<string, string>) => ({ env, timeout_s: null, max_output_bytes: null, leaves_processes: false });
    const p = base({ op: 'dumbwaiter.plan', args: {}, run: null, steps: [run({}), run({ REGION: 'us-2' })], expires_at: '2026-01-02T00:00:00.000Z' }, { operation: 'dumbwaiter.plan', steps });
    const text = approvalCardText(p);
    expect(text).toContain('Approve a plan of 2 steps?');
    expect(text).toContain('until the plan expires at 2026-01-02T00:00:00.000Z');
    expect(text).toContain('Step 1: build (read)\n      program: "/usr/bin/make"');
    expect(text).toContain('Step 2: deploy (write)\n      program: "/usr/bin/deploy"\n      argument 1: "prod"');
    expect(text).toContain('REGION="us-2"');
    expect(text).not.toContain('Arguments'); // nothing to widen: a plan is never approved for a while
    expect(cardComplete(p)).toBe(true);
    expect(cardComplete({ ...p, steps: [run({})] })).toBe(false);
  });

  it('says when the host did not send its side of the run, and such a card is not complete', () => {
    const p = base({ run: null });
    expect(approvalCardText(p)).toContain('(the host did not say what else decides it: its environment and limits)');
    expect(cardComplete(p)).toBe(false);
  });
});
