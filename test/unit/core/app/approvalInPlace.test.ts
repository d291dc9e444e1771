// Whether a waiting request may be approved from a notification or the tray menu, and what they show.
import { describe, expect, it } from 'vitest';
import { MENU_LABEL_MAX, NOTIFICATION_BODY_MAX, approvalInPlace, approveInPlace, argvLine } from '../../../../main/core/app/approvalInPlace';
import type { PendingApprovalView } from '../../../../shared/ipc/views';
import type { ApprovalInfo, PlanStep } from '../../../../shared/protocol/types';

const waiting = (approval: Partial<ApprovalInfo> = {}, over: Partial<PendingApprovalView> = {}): PendingApprovalView => ({
  id: 'r1',
  op: 'deploy',
  key_id: 'k_1',
  spool: 'default',
  waiting_since: '2026-12-01T08:00:00Z',
  expires_at: null,
  approval: { operation: 'deploy', argv: ['/bin/echo', 'deployed', 'staging'], cwd: '/home/me/project', key_id: 'k_1', key_name: 'agent-one', intent: null, requested_at: '', timeout_at: '', ceiling: null, ...approval },
  args: { target: 'staging' },
  run: { env: {}, timeout_s: 600, max_output_bytes: 1048576, leaves_processes: false },
  steps: null,
  ...over,
});

const step = (i: number): PlanStep => ({ op: 'record', args: { n: i }, argv: ['/bin/echo', String(i)], cwd: '/w', scope: 'write', request_id: null, state: null });

describe('argvLine', () => {
  it('shows plain elements as they are and the others quoted, so every element boundary shows', () => {
    expect(argvLine(['git', 'commit', '-m', 'fix the build', ''])).toBe("git commit -m 'fix the build' ''");
    expect(argvLine(['ls', '~/x', '$HOME'])).toBe("ls '~/x' '$HOME'"); // no shell expands them: quoted, so none is read as if one did
  });

  it('gives up on an element it cannot show unambiguously on one line', () => {
    expect(argvLine(['sh', "it's"])).toBeNull();
    expect(argvLine(['echo', 'a\nb'])).toBeNull();
    expect(argvLine(['echo', 'a\tb'])).toBeNull();
    expect(argvLine(['echo', 'x\u202ey'])).toBeNull();
    expect(argvLine(['echo', '\x1b[2K'])).toBeNull();
    expect(argvLine(['rm', 'a\u00a0b'])).toBeNull(); // a no-break space reads as a space
    expect(argvLine(['rm', '/etc/p\u0430sswd'])).toBeNull(); // a Cyrillic а reads as a Latin a
  });
});

describe('approvalInPlace', () => {
  it('fits a short single request: the notification and the menu show its whole command and folder', () => {
    const r = approvalInPlace(waiting({ intent: 'ship it' }));
    expect(r).toEqual({
      fits: true,
      notification: { title: 'Approve deploy?', body: "agent-one: /bin/echo deployed staging\nin /home/me/project\nThe agent's reason: ship it" },
      menu: ['Command: /bin/echo deployed staging', 'Folder: /home/me/project'],
    });
    // With several spools the notification names the spool; whether it fits does not change.
    const named = approvalInPlace(waiting(), true);
    expect(named).toMatchObject({ fits: true, notification: { body: 'spool default: agent-one wants to run /bin/echo deployed staging\nin /home/me/project' } });
  });

  it('shows the warnings that decide it, measured with the rest', () => {
    const ceiling = 'ceiling "hourly" (key k_1, per 3600 s): 10 of 10 runs used';
    const r = approvalInPlace(waiting({ argv: ['/bin/true'], cwd: '/w', ceiling, shared_with_sandbox: ['/w'] }, { run: { env: {}, timeout_s: 5, max_output_bytes: 5, leaves_processes: true } }));
    expect(r.fits && r.menu).toEqual([
      'Command: /bin/true',
      'Folder: /w',
      `Would cross ${ceiling}`,
      'Works on folders the sandbox can write: /w',
      'May leave processes running',
    ]);
    expect(r.notification.body.split('\n').slice(2)).toEqual(r.fits ? r.menu.slice(2) : []);
    // The same with more folders shared: together they no longer fit a notification.
    const more = approvalInPlace(waiting({ argv: ['/bin/true'], cwd: '/w', ceiling, shared_with_sandbox: ['/w', '/srv/data'] }, { run: { env: {}, timeout_s: 5, max_output_bytes: 5, leaves_processes: true } }));
    expect(more).toMatchObject({ fits: false, why: 'its command is too long to show here' });
  });

  it.each([
    ['a plan of 50 steps', waiting({ operation: 'dumbwaiter.plan', argv: [], cwd: '', steps: Array.from({ length: 50 }, (_, i) => step(i)) }, { op: 'dumbwaiter.plan', args: {}, run: null, steps: Array.from({ length: 50 }, () => ({ env: {}, timeout_s: null, max_output_bytes: null, leaves_processes: false })) }), 'once approved, its steps run later without asking'],
    ['a plan of one short step', waiting({ operation: 'dumbwaiter.plan', argv: [], cwd: '', steps: [step(1)] }, { op: 'dumbwaiter.plan', args: {}, run: null, steps: [{ env: {}, timeout_s: null, max_output_bytes: null, leaves_processes: false }] }), 'once approved, its steps run later without asking'],
    ['a request claiming a plan it does not match', waiting({ plan_claim: { plan_id: 'p-1', reason: 'step 1 has target production, not staging' } }), 'it claims a plan but differs from its steps'],
    ['an environment', waiting({}, { run: { env: { GIT_SSH_COMMAND: 'ssh' }, timeout_s: 5, max_output_bytes: 5, leaves_processes: false } }), 'it sets 1 environment variable'],
    ['no run known', waiting({}, { run: null }), 'what it runs is not known here'],
    ['40 elements', waiting({ argv: ['/bin/echo', ...Array.from({ length: 39 }, (_, i) => `a${i}`)] }), 'its command is too long to show here'],
    ['a 300-character element', waiting({ argv: ['/bin/echo', 'x'.repeat(300)] }), 'its command is too long to show here'],
    ['a line feed in an element', waiting({ argv: ['/bin/echo', 'one\ntwo'] }), 'its command or folder has characters other than plain ASCII'],
    ['a bidi override in the folder', waiting({ cwd: '/home/\u202emoc.evil' }), 'its command or folder has characters other than plain ASCII'],
    ['a look-alike in the folder', waiting({ cwd: '/home/me/pr\u043eject' }), 'its command or folder has characters other than plain ASCII'],
    ['a folder ending in a space', waiting({ cwd: '/home/me/project ' }), 'its folder begins or ends with a space'],
    ['a long folder', waiting({ cwd: `/home/me/${'deep/'.repeat(20)}` }), 'its command is too long to show here'],
    ['hundreds of combining marks', waiting({ argv: ['/bin/echo', `a${'\u0301'.repeat(300)}`] }), 'its command or folder has characters other than plain ASCII'],
  ])('sends %s to the card', (_what, p, why) => {
    const r = approvalInPlace(p);
    expect(r).toMatchObject({ fits: false, why });
    expect(r.notification.body).toContain('open the card to see all of it before you decide');
    expect(approveInPlace(p.id, [p])).toBe('card');
  });

  it('says what a plan is in its notification, and nothing of its steps', () => {
    const plan = waiting({ operation: 'dumbwaiter.plan', argv: [], cwd: '', steps: [step(1), step(2)] }, { op: 'dumbwaiter.plan', run: null });
    expect(approvalInPlace(plan).notification).toEqual({
      title: 'Approve a plan of 2 steps?',
      body: 'agent-one asks to run a plan of 2 steps.\nOnce approved, its steps run later without asking: open the card to see all of it before you decide.',
    });
  });

  it('fits right up to the limits, measured on the escaped text, and not one character past them', () => {
    // The menu's label is the tighter limit for the command: "Command: " and the rest.
    const room = MENU_LABEL_MAX - 'Command: /bin/echo '.length;
    expect(approvalInPlace(waiting({ argv: ['/bin/echo', 'y'.repeat(room)] })).fits).toBe(true);
    expect(approvalInPlace(waiting({ argv: ['/bin/echo', 'y'.repeat(room + 1)] })).fits).toBe(false);
    // A key name is sandbox-free but escaped anyway; the body's limit counts it (with the spool named).
    const longName = 'n'.repeat(NOTIFICATION_BODY_MAX);
    expect(approvalInPlace(waiting({ key_name: longName })).fits).toBe(false);
    // The intent is cut, visibly, to the room left: the body stays within its limit.
    const r = approvalInPlace(waiting({ intent: `because\x1b[2K ${'z'.repeat(400)}` }), true);
    expect(r.fits).toBe(true);
    expect(r.notification.body.length).toBe(NOTIFICATION_BODY_MAX);
    expect(r.notification.body.split('\n')[2]).toMatch(/^The agent's reason: because\\x1b\[2K z+…$/);
  });
});

describe('approveInPlace', () => {
  it('decides on the request as it waits now: approve, its card, or nothing once it is decided', () => {
    const short = waiting();
    const long = waiting({ argv: ['/bin/echo', 'x'.repeat(300)] }, { id: 'r2' });
    expect(approveInPlace('r1', [short, long])).toBe('approve');
    expect(approveInPlace('r2', [short, long])).toBe('card');
    expect(approveInPlace('r1', [long])).toBe('gone');
  });
});
