// From op and args to the RunPlan: a request's own limits (tighter only), and the reconcile command's plan.
import { describe, expect, it } from 'vitest';
import { parseAllowlist } from '../../../../main/core/allowlist/load';
import { planReconcile, planRun } from '../../../../main/core/allowlist/plan';
import { REQUEST_ID_SPEC } from '../../../../main/core/allowlist/template';
import { REQUEST_HANDLE } from '../../../../shared/protocol/ids';

const lines = (...ls: string[]) => ls.join('\n') + '\n';

const allowlist = parseAllowlist(
  lines(
    'version: 1',
    'operations:',
    '  - name: release',
    '    command: [/usr/bin/gh, release, create, "v{version}", "--title={title}"]',
    '    cwd: /tmp',
    '    env: {GH_PROMPT_DISABLED: "1"}',
    '    args:',
    '      version: {type: string, pattern: "[0-9.]+"}',
    '      title: {type: string, allow_dash: true, default: "-"}',
    '    timeout_s: 600',
    '    max_output_bytes: 4096',
    '    concurrency: 3',
    '    cost: 5',
    '    leaves_processes: true',
    '    reconcile:',
    // {title} may start with "-": after a "--" only (load.ts).
    '      command: [/usr/bin/gh, release, view, "v{version}", "--json=id", "{request_id}", --, "{title}"]',
    '      timeout_s: 20',
    '  - name: plain',
    '    command: [echo, hi]',
  ),
);

describe('planRun with a request\'s limits', () => {
  it('no limits: the operation\'s', () => {
    for (const limits of [undefined, null, {}]) {
      const r = planRun(allowlist, 'release', { version: '1.2' }, limits);
      expect(r).toMatchObject({ ok: true, plan: { timeout_s: 600, max_output_bytes: 4096 } });
    }
  });

  it('a tighter timeout or output limit is what the run gets; the operation\'s own counts as tight enough', () => {
    expect(planRun(allowlist, 'release', { version: '1.2' }, { timeout_s: 5 })).toMatchObject({ ok: true, plan: { timeout_s: 5, max_output_bytes: 4096 } });
    expect(planRun(allowlist, 'release', { version: '1.2' }, { max_output_bytes: 1 })).toMatchObject({ ok: true, plan: { timeout_s: 600, max_output_bytes: 1 } });
    expect(planRun(allowlist, 'release', { version: '1.2' }, { timeout_s: 600, max_output_bytes: 4096 })).toMatchObject({ ok: true, plan: { timeout_s: 600, max_output_bytes: 4096 } });
  });

  it('a larger limit is bad_args, naming both numbers: a request never loosens the allowlist', () => {
    const t = planRun(allowlist, 'release', { version: '1.2' }, { timeout_s: 601 });
    expect(t).toMatchObject({ ok: false, code: 'bad_args' });
    expect(!t.ok && t.message).toMatch(/timeout_s 601 is more than operation "release" allows \(timeout_s 600\)/);
    const o = planRun(allowlist, 'release', { version: '1.2' }, { timeout_s: 1, max_output_bytes: 2 ** 31 });
    expect(!o.ok && o.message).toMatch(/max_output_bytes 2147483648 .*\(max_output_bytes 4096\)/);
  });

  it('bad arguments are reported before limits, an unknown op before both', () => {
    expect(planRun(allowlist, 'release', { version: 'x' }, { timeout_s: 9999 })).toMatchObject({ ok: false, code: 'bad_args', message: expect.stringMatching(/pattern/) });
    expect(planRun(allowlist, 'nope', {}, { timeout_s: 9999 })).toMatchObject({ ok: false, code: 'unknown_op' });
  });
});

describe('planReconcile', () => {
  it('renders the op\'s args (defaults included) and the request id, with the op\'s cwd, env and output limit', () => {
    const r = planReconcile(allowlist, 'release', { version: '1.2' }, 'req-7.a_b');
    expect(r).toEqual({
      ok: true,
      plan: {
        op: 'release',
        argv: ['/usr/bin/gh', 'release', 'view', 'v1.2', '--json=id', 'req-7.a_b', '--', '-'],
        paths: [],
        cwd: '/tmp',
        env: { GH_PROMPT_DISABLED: '1' },
        timeout_s: 20,
        max_output_bytes: 4096,
        concurrency: 1,
        cost: 0,
        scope: 'write',
        approval: 'always',
        leaves_processes: false,
      },
    });
  });

  it('takes the longest handle a request can have (a 128-character id at a 32-character spool) whole', () => {
    const handle = `${'i'.repeat(128)}@${'s'.repeat(32)}`;
    expect(REQUEST_HANDLE.test(handle)).toBe(true);
    const r = planReconcile(allowlist, 'release', { version: '1.2' }, handle);
    expect(r.ok && r.plan.argv[5]).toBe(handle);
    expect(REQUEST_ID_SPEC).toMatchObject({ max_length: handle.length });
  });

  it('a value stays one argv element there too', () => {
    const r = planReconcile(allowlist, 'release', { version: '1.2', title: '; rm -rf ~ $(id)' }, 'r1');
    expect(r.ok && r.plan.argv.at(-1)).toBe('; rm -rf ~ $(id)');
  });

  it('validates args as the run does, and says when the op has no reconcile or is unknown', () => {
    expect(planReconcile(allowlist, 'release', { version: '1.2; x' }, 'r1')).toMatchObject({ ok: false, code: 'bad_args' });
    expect(planReconcile(allowlist, 'release', { version: '1.2', extra: 1 }, 'r1')).toMatchObject({ ok: false, code: 'bad_args' });
    expect(planReconcile(allowlist, 'plain', {}, 'r1')).toMatchObject({ ok: false, code: 'no_reconcile', message: expect.stringMatching(/"plain" declares no reconcile/) });
    expect(planReconcile(allowlist, 'nope', {}, 'r1')).toMatchObject({ ok: false, code: 'unknown_op' });
  });

  it('a value that would lead an element of reconcile\'s command (an option there) is refused for the run itself', () => {
    // "--grep={q}" is safe in command, but reconcile's "{q}" would hand the lookup "-rf" as an option.
    const list = parseAllowlist(
      lines('version: 1', 'operations:', '  - name: a', '    command: [/bin/echo, "--grep={q}"]', '    args:', '      q: {type: string}', '    reconcile: {command: [/bin/echo, "{q}"]}'),
    );
    expect(planRun(list, 'a', { q: '-rf' })).toMatchObject({ ok: false, code: 'bad_args', message: expect.stringMatching(/must not start with "-"/) });
    expect(planRun(list, 'a', { q: 'rf' })).toMatchObject({ ok: true });
  });
});
