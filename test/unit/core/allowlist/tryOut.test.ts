// The editor's dry run of a reconcile command: it really runs the lookup once, for the stand-in request
// id (in its argv and its environment, as a real check has the request's id in both), through the
// executor, and says what its exit would mean; the operation's own dry run runs as that stand-in too.
import { describe, expect, it } from 'vitest';
import { DRY_RUN_REQUEST_ID, dryRun, dryRunReconcile, previewReconcile } from '../../../../main/core/allowlist/tryOut';
import { NO_CONTEXT } from '../../../../main/core/allowlist/roots';

// The lookup prints the id it was asked about, and the one it runs as, and exits with the code the sample request asks for.
const ALLOWLIST = [
  'version: 1',
  'operations:',
  '  - name: publish',
  '    command: [/bin/echo, "{code}"]',
  '    cwd: /tmp',
  '    args:',
  '      code: {type: integer, min: 0, max: 255}',
  '    reconcile:',
  '      command: [/bin/sh, -c, \'echo "asked about $1 as $DUMBWAITER_REQUEST_ID"; exit "$2"\', lookup, "{request_id}", "{code}"]',
  '      timeout_s: 1',
  '  - name: slow',
  '    command: [/bin/true]',
  '    reconcile: {command: [/bin/sleep, "30"], timeout_s: 1}',
  '  - name: plain',
  '    command: [/bin/true]',
  '  - name: whoami',
  '    command: [/bin/sh, -c, \'echo "$DUMBWAITER_REQUEST_ID"\']',
  '',
].join('\n');

const dry = (op: string, args: Record<string, unknown>) => dryRunReconcile(ALLOWLIST, 'allowlist.yaml', op, args, NO_CONTEXT, 100);

describe('dryRunReconcile', () => {
  it('runs the lookup once as the stand-in request, the id it is asked about: exit 0 is applied', async () => {
    const r = await dry('publish', { code: 0 });
    expect(r).toMatchObject({ ok: true, verdict: 'applied', plan: { argv: expect.arrayContaining([DRY_RUN_REQUEST_ID, '0']), cwd: '/tmp', timeout_s: 1 } });
    expect(DRY_RUN_REQUEST_ID).toBe('dry-run');
    expect(r.ok && r.run.stdout).toBe('asked about dry-run as dry-run\n');
  });

  it("the operation's own dry run runs as that stand-in request too", async () => {
    const r = await dryRun(ALLOWLIST, 'allowlist.yaml', 'whoami', {}, NO_CONTEXT, 100);
    expect(r.ok && r.run.stdout).toBe('dry-run\n');
  });

  it('exit 1 is not_applied, any other exit unknown', async () => {
    expect(await dry('publish', { code: 1 })).toMatchObject({ ok: true, verdict: 'not_applied', run: { exit_code: 1 } });
    expect(await dry('publish', { code: 2 })).toMatchObject({ ok: true, verdict: 'unknown', run: { exit_code: 2 } });
  });

  it('a lookup that outlives its timeout is ended, and its verdict is unknown', async () => {
    expect(await dry('slow', {})).toMatchObject({ ok: true, verdict: 'unknown', run: { error: { code: 'timeout' } } });
  });

  it('runs nothing for bad args, an op without reconcile, or an allowlist that does not load', async () => {
    expect(await dry('publish', { code: 256 })).toMatchObject({ ok: false, message: expect.stringMatching(/at most 255/) });
    expect(await dry('plain', {})).toMatchObject({ ok: false, message: expect.stringMatching(/declares no reconcile/) });
    expect(await dryRunReconcile('version: 2\n', 'allowlist.yaml', 'publish', { code: 0 }, NO_CONTEXT, 100)).toMatchObject({ ok: false, message: expect.stringMatching(/not valid yet/) });
    expect(previewReconcile(ALLOWLIST, 'allowlist.yaml', 'nope', {}, NO_CONTEXT)).toMatchObject({ ok: false, message: expect.stringMatching(/no operation "nope"/) });
  });
});
