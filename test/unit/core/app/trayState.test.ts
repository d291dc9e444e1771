// The tray's icon, tooltip and menu as a pure function of the status.
import { describe, expect, it } from 'vitest';
import { addRecentRuns, trayCommand, trayState, type TrayAction, type TrayMenuItem } from '../../../../main/core/app/trayState';
import type { PendingApprovalView, SpoolInfo, StatusView } from '../../../../shared/ipc/views';

function status(over: Partial<StatusView> = {}): StatusView {
  return {
    home: '/h',
    spool: '/s',
    spools: [spoolInfo('default')],
    daemon: { running: true, heartbeat_at: null },
    spool_problem: null,
    paused: false,
    allowlist: { ok: true, operations: ['echo'], error: null, disabled: [], serving: 'file', since: null },
    requests: {},
    running: [],
    uncertain: [],
    approvals: [],
    keys: { active: 1, revoked: 0 },
    spend: [],
    ...over,
  };
}

function spoolInfo(name: string, problem: string | null = null): SpoolInfo {
  return { name, dir: `/spools/${name}`, problem, probe: null, keys: 1, open: 0, heartbeat_at: null, operations: [] };
}

const approval = (id: string, ceiling: string | null = null, spool = 'default'): PendingApprovalView => ({
  id,
  op: 'deploy',
  key_id: 'k_1',
  spool,
  waiting_since: '2026-11-29T08:00:00Z',
  expires_at: null,
  approval: { operation: 'deploy', argv: ['echo'], cwd: '/', key_id: 'k_1', key_name: 'laptop', intent: null, requested_at: '', timeout_at: '', ceiling },
  args: {},
  run: { env: {}, timeout_s: 600, max_output_bytes: 1048576, leaves_processes: false },
  steps: null,
});
const run = { id: 'r1', op: 'echo', key_id: 'k_1', spool: 'default', started_at: null, orphaned: false };
/** Each item's action, written `do:id` (or `do`) to read the menu at a glance; labels have none. */
const named = (a: TrayAction | undefined): string => (a ? ('id' in a ? `${a.do}:${a.id}` : a.do) : '');
const ids = (items: TrayMenuItem[]): string[] => items.flatMap((i) => [named(i.action), ...ids(i.submenu ?? [])]).filter(Boolean);

describe('trayState', () => {
  it('is idle with nothing going on', () => {
    const t = trayState(status());
    expect(t.icon).toBe('idle');
    expect(t.tooltip).toBe('Dumbwaiter: idle');
    expect(ids(t.menu)).toEqual(['open', 'pause', 'logs', 'quit']);
  });

  it('shows running work with counts in the tooltip', () => {
    const t = trayState(status({ running: [run, { ...run, id: 'r2' }], requests: { queued: 3 } }));
    expect(t.icon).toBe('running');
    expect(t.tooltip).toBe('Dumbwaiter: 2 running, 3 queued');
  });

  it('asks for approval above running, with approve and deny in the menu', () => {
    const t = trayState(status({ running: [run], approvals: [approval('a1'), approval('a2', 'ceiling "hourly"')] }));
    expect(t.icon).toBe('approval');
    expect(t.tooltip).toBe('Dumbwaiter: 1 running, 2 waiting for approval');
    expect(ids(t.menu)).toEqual(expect.arrayContaining(['approve:a1', 'deny:a1', 'approve:a2', 'deny:a2']));
    expect(t.menu.some((i) => i.label.includes('past a spend ceiling'))).toBe(true);
  });

  it('shows a short request whole above Approve, and never offers to approve for a while', () => {
    const t = trayState(status({ approvals: [approval('a1', 'ceiling "h" (all keys, per 60 s): 3 of 3 runs used')] }));
    const entry = t.menu.find((i) => i.label === 'deploy for laptop (past a spend ceiling)')!;
    expect(entry.submenu!.map((i) => [i.label, named(i.action), i.enabled ?? true])).toEqual([
      ['Command: echo', '', false],
      ['Folder: /', '', false],
      ['Would cross ceiling "h" (all keys, per 60 s): 3 of 3 runs used', '', false],
      ['', '', true],
      ['Approve', 'approve:a1', true],
      ['Deny', 'deny:a1', true],
    ]);
    expect(JSON.stringify(t.menu)).not.toMatch(/approve-30m|for 30 minutes|for a while/i);
  });

  it('offers only the card (and Deny) for what does not fit: a plan, a long command, an environment', () => {
    const plan: PendingApprovalView = { ...approval('p1'), op: 'dumbwaiter.plan', run: null, steps: [], approval: { ...approval('p1').approval, operation: 'dumbwaiter.plan', argv: [], cwd: '', steps: Array.from({ length: 50 }, (_, i) => ({ op: 'deploy', args: {}, argv: ['echo', String(i)], cwd: '/', scope: 'write' as const, request_id: null, state: null })) } };
    const long: PendingApprovalView = { ...approval('l1'), approval: { ...approval('l1').approval, argv: ['echo', ...Array.from({ length: 39 }, (_, i) => `a${i}`)] } };
    const env: PendingApprovalView = { ...approval('e1'), run: { env: { TOKEN: 'x' }, timeout_s: 1, max_output_bytes: 1, leaves_processes: false } };
    const t = trayState(status({ approvals: [plan, long, env] }));
    const entries = t.menu.filter((i) => i.submenu && i.label !== 'Recent runs');
    expect(entries.map((e) => e.submenu!.map((i) => i.label))).toEqual([
      ['Once approved, its steps run later without asking', 'Open the card…', 'Deny'],
      ['Its command is too long to show here', 'Open the card…', 'Deny'],
      ['It sets 1 environment variable', 'Open the card…', 'Deny'],
    ]);
    expect(ids(t.menu).filter((i) => i.startsWith('approve'))).toEqual([]);
    expect(ids(t.menu)).toEqual(expect.arrayContaining(['card:p1', 'card:l1', 'card:e1']));
  });

  it("decides a menu item's action on the requests waiting now: Approve of what does not fit opens its card, of what was decided does nothing", () => {
    const short = approval('a1');
    const plan: PendingApprovalView = { ...approval('p1'), run: null, steps: [], approval: { ...approval('p1').approval, operation: 'dumbwaiter.plan', steps: [] } };
    expect(trayCommand({ do: 'approve', id: 'a1' }, [short, plan])).toEqual({ do: 'approve', id: 'a1' });
    expect(trayCommand({ do: 'approve', id: 'p1' }, [short, plan])).toEqual({ do: 'card', id: 'p1' });
    expect(trayCommand({ do: 'approve', id: 'a1' }, [plan])).toEqual({ do: 'nothing' }); // decided since the menu was drawn
    expect(trayCommand({ do: 'card', id: 'p1' }, [short, plan])).toEqual({ do: 'card', id: 'p1' });
    expect(trayCommand({ do: 'deny', id: 'p1' }, [short, plan])).toEqual({ do: 'deny', id: 'p1' });
    // An id is carried whole, never parsed back out of a string (a colon in it is just a character).
    expect(trayCommand({ do: 'request', id: 'x:y' }, [])).toEqual({ do: 'request', id: 'x:y' });
    expect(trayCommand({ do: 'pause' }, [])).toEqual({ do: 'pause' });
    expect(trayCommand({ do: 'logs' }, [])).toEqual({ do: 'logs' });
  });

  it('carries on each Approve item the action of the request it shows, decided to the same request', () => {
    const t = trayState(status({ approvals: [approval('a1'), approval('a2')] }));
    const approves = t.menu.flatMap((i) => i.submenu ?? []).filter((i) => i.action?.do === 'approve');
    expect(approves.map((i) => trayCommand(i.action!, [approval('a1'), approval('a2')]))).toEqual([
      { do: 'approve', id: 'a1' },
      { do: 'approve', id: 'a2' },
    ]);
  });

  it('counts across every spool and, with several, names the spool of each approval and of each problem', () => {
    const several = status({
      spools: [spoolInfo('default'), spoolInfo('work', 'queue/ cannot be read (EACCES)')],
      spool_problem: 'spool work: queue/ cannot be read (EACCES)',
      running: [run, { ...run, id: 'r2', spool: 'work' }],
      approvals: [approval('a1'), approval('a2', null, 'work')],
    });
    const t = trayState(several);
    expect(t.tooltip).toBe('Dumbwaiter: spool work needs attention, 2 running, 2 waiting for approval');
    const labels = t.menu.map((i) => i.label);
    expect(labels).toEqual(expect.arrayContaining(['spool default: deploy for laptop', 'spool work: deploy for laptop', 'Waiting for approval (2)']));
    // One spool: nothing is named, as before.
    const one = trayState(status({ approvals: [approval('a1')] }));
    expect(one.menu.map((i) => i.label)).toContain('deploy for laptop');
    expect(trayState(status({ spool_problem: 'x' })).tooltip).toContain('the spool needs attention');
  });

  it('lists at most five approvals and points to the rest', () => {
    const t = trayState(status({ approvals: ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((x) => approval(x)) }));
    expect(ids(t.menu).filter((i) => i.startsWith('approve:'))).toHaveLength(5);
    expect(t.menu.some((i) => i.label === '2 more…')).toBe(true);
  });

  it.each([
    ['uncertain runs', { uncertain: [{ id: run.id, op: run.op, key_id: run.key_id, spool: run.spool, started_at: run.started_at, error_message: null, reconcile: null, reconcilable: false }] }, '1 uncertain run to resolve'],
    ['an invalid allowlist', { allowlist: { ok: false, operations: [], error: 'line 3', disabled: [], serving: 'last_good' as const, since: null } }, 'the allowlist is invalid (its last good version is served)'],
    ['the host paused', { paused: true }, 'paused'],
    ['the host not running', { daemon: { running: false, heartbeat_at: null } }, 'the host is not running'],
    ['a spool the daemon stopped serving', { spool_problem: 'queue/ cannot be read (EACCES)' }, 'the spool needs attention'],
  ])('needs attention for %s, above everything else', (_what, over, reason) => {
    const t = trayState(status({ ...over, approvals: [approval('a1')], running: [run] }));
    expect(t.icon).toBe('attention');
    expect(t.tooltip).toContain(reason);
  });

  it('says what is wrong with the spool in the menu, on one line', () => {
    const long = `queue/ cannot be read (EACCES): ${'x'.repeat(200)}`;
    const t = trayState(status({ spool_problem: long }));
    const item = t.menu.find((i) => i.label.startsWith('Spool problem: '));
    expect(item).toMatchObject({ enabled: false, label: expect.stringContaining('queue/ cannot be read (EACCES)') });
    expect(item!.label.length).toBeLessThanOrEqual('Spool problem: '.length + 80);
    expect(trayState(status()).menu.some((i) => i.label.startsWith('Spool problem'))).toBe(false);
  });

  it('offers resume while paused, and recent runs', () => {
    const t = trayState(status({ paused: true }), [{ id: 'r9', op: 'test', spool: 'default', state: 'failed' }]);
    expect(ids(t.menu)).toEqual(['open', 'resume', 'request:r9', 'logs', 'quit']);
    expect(t.menu.find((i) => i.label === 'Recent runs')?.submenu?.[0]?.label).toBe('test: failed');
    // With several spools, each run names its spool.
    const two = trayState(status({ spools: [spoolInfo('default'), spoolInfo('work')] }), [{ id: 'r9', op: 'test', spool: 'work', state: 'failed' }]);
    expect(two.menu.find((i) => i.label === 'Recent runs')?.submenu?.[0]?.label).toBe('work: test: failed');
  });

  it('keeps recent runs newest first, each request once with its latest state, eight at most', () => {
    const r = (id: string, state: 'succeeded' | 'failed' | 'uncertain' = 'succeeded') => ({ id, op: 'test', spool: 'default', state });
    let recent = addRecentRuns([], [r('a'), r('b'), r('c', 'uncertain')]);
    expect(recent.map((x) => x.id)).toEqual(['c', 'b', 'a']);
    recent = addRecentRuns(recent, [r('d'), r('c', 'failed')]); // c settled by a human
    expect(recent).toEqual([r('c', 'failed'), r('d'), r('b'), r('a')]);
    recent = addRecentRuns(recent, ['e', 'f', 'g', 'h', 'i'].map((id) => r(id)));
    expect(recent.map((x) => x.id)).toEqual(['i', 'h', 'g', 'f', 'e', 'c', 'd', 'b']);
  });
});
