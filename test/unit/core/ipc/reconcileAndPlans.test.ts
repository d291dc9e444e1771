// The app's channels for reconcile checks, orphaned runs and plans, end to end: the preload API over
// main's registration (schema checks) and handlers, on a real HostService, with a real daemon that is
// killed with SIGKILL where a test needs an interrupted or orphaned run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AppEdges } from '../../../../main/core/ipc/handlers';
import type { DumbwaiterApi } from '../../../../preload/api';
import { HostService } from '../../../../main/core/service';
import { TestHost, eventually, type DaemonProcess } from '../../../helpers/host';
import { groupRunning } from '../../../helpers/processes';
import type { KeyFile } from '../../../../shared/protocol/types';
import { connect } from './appApi';

/** Every native question, answered with `person.answer`. */
const person = { answer: true, asked: [] as { title: string; message: string; detail: string }[] };
const PERSON: AppEdges = {
  pickFolder: async () => null,
  pickSavePath: async () => null,
  confirm: async ({ title, message, detail }) => (person.asked.push({ title, message, detail }), person.answer),
};

let host: TestHost;
let svc: HostService;
let api: DumbwaiterApi;
let key: KeyFile;
let daemon: DaemonProcess;

/** Files the operations below make or look for, under the test's root. */
const file = (name: string) => path.join(host.root, name);

const allowlist = () => `version: 1
operations:
  - name: release
    command: [/bin/sh, -c, ': > "$0"', "${file('released-')}{version}"]
    cwd: ${JSON.stringify(host.work)}
    args:
      version: {type: string, pattern: "[0-9.]+"}
    reconcile:
      command: [/bin/sh, -c, 'echo "looking up $1 for $2"; test -e "$0"', "${file('released-')}{version}", "{version}", "{request_id}"]
      timeout_s: 5
    scope: write
    approval: never
  - name: touchy
    command: [/bin/echo, "{tag}"]
    cwd: ${JSON.stringify(host.work)}
    args:
      tag: {type: string, pattern: "[a-z]+"}
    reconcile:
      command: [/bin/sh, -c, ': > "$0"', "${file('reconciled-')}{tag}-{request_id}"]
    scope: read
    approval: never
  - name: cannot-tell
    command: ["true"]
    reconcile:
      command: [/bin/sh, -c, "echo the registry is down >&2; exit 3"]
    scope: read
    approval: never
  - name: plain
    command: ["true"]
    scope: read
    approval: never
  - name: stamp
    description: Asks each time; its environment holds a token the app has no need to see
    command: [/bin/echo, "stamped {what}"]
    env: {STAMP_TOKEN: "not-for-the-page"}
    args:
      what: {type: string, pattern: "[a-z]+"}
    scope: write
    approval: always
  - name: interrupted
    description: Runs until killed; its reconcile check says it took effect once its done file exists
    command: [/bin/sh, -c, "sleep 60"]
    reconcile:
      command: [/bin/sh, -c, 'echo "checked $1"; test -e "$0" && exit 0; exit 3', "${file('done-')}{request_id}", "{request_id}"]
    scope: read
    approval: never
    concurrency: 4
`;

beforeAll(async () => {
  host = new TestHost('version: 1\noperations: []\n');
  host.writeAllowlist(allowlist());
  svc = new HostService(host.home, host.spool);
  api = connect(svc, PERSON);
  key = host.createKey('agent', 'write');
  daemon = await host.startDaemon();
}, 60_000);

afterAll(async () => {
  svc?.close();
  await host?.cleanup();
});

const ask = () => {
  person.asked.length = 0;
  return person.asked;
};
const dryRuns = () => svc.searchAudit({ kind: 'dry_run', limit: 1000 });

describe('allowlist.dryRunReconcile', () => {
  it('runs the reconcile command for the stand-in request id and says what its answer would mean', async () => {
    const text = allowlist();
    writeFileSync(file('released-1.2'), '');
    const applied = await api.allowlist.dryRunReconcile({ text, op: 'release', args: { version: '1.2' } });
    expect(applied).toMatchObject({ ok: true, verdict: 'applied', exit_code: 0, stdout: 'looking up 1.2 for dry-run\n', error: null });
    expect(applied.ok && applied.plan.argv).toEqual(['/bin/sh', '-c', 'echo "looking up $1 for $2"; test -e "$0"', file('released-1.2'), '1.2', 'dry-run']);
    expect(applied.ok && applied.plan.cwd).toBe(host.work);
    expect(applied.ok && applied.plan.timeout_s).toBe(5);
    const notApplied = await api.allowlist.dryRunReconcile({ text, op: 'release', args: { version: '9.9' } });
    expect(notApplied).toMatchObject({ ok: true, verdict: 'not_applied', exit_code: 1 });
    const unknown = await api.allowlist.dryRunReconcile({ text, op: 'cannot-tell', args: {} });
    expect(unknown).toMatchObject({ ok: true, verdict: 'unknown', exit_code: 3, stderr: 'the registry is down\n' });
    // Only the look-up ran: the operation itself never did (it would have made released-9.9).
    expect(existsSync(file('released-9.9'))).toBe(false);
    expect(dryRuns()[0]).toMatchObject({ actor: 'app', op: 'cannot-tell', message: expect.stringContaining('reconcile') });
  });

  it('asks natively first, showing the exact command, folder and stand-in id; refused, nothing runs and nothing is recorded', async () => {
    const asked = ask();
    const before = dryRuns().length;
    person.answer = false;
    const refused = await api.allowlist.dryRunReconcile({ text: allowlist(), op: 'touchy', args: { tag: 'asked' } });
    person.answer = true;
    expect(refused).toEqual({ ok: false, message: 'Not run: cancelled.', cancelled: true });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toBe('Run the reconcile command of touchy now, on this computer?');
    expect(asked[0]!.detail).toContain(`"${file('reconciled-')}asked-dry-run"`);
    expect(asked[0]!.detail).toContain(`in ${host.work}`);
    expect(asked[0]!.detail).toContain('stand-in request id "dry-run"');
    expect(existsSync(file('reconciled-asked-dry-run'))).toBe(false);
    expect(dryRuns().length).toBe(before);
    // Said yes, it runs (so the check above could have seen the file).
    expect(await api.allowlist.dryRunReconcile({ text: allowlist(), op: 'touchy', args: { tag: 'asked' } })).toMatchObject({ ok: true, verdict: 'applied' });
    expect(existsSync(file('reconciled-asked-dry-run'))).toBe(true);
  });

  it('refuses bad arguments, an operation without a reconcile command and invalid text without asking or running anything', async () => {
    const asked = ask();
    const text = allowlist();
    const before = dryRuns().length;
    expect(await api.allowlist.dryRunReconcile({ text, op: 'touchy', args: { tag: 'x; touch pwned' } })).toMatchObject({
      ok: false,
      message: expect.stringContaining('argument "tag" does not match the pattern'),
    });
    expect(await api.allowlist.dryRunReconcile({ text, op: 'plain', args: {} })).toMatchObject({ ok: false, message: expect.stringContaining('declares no reconcile command') });
    expect(await api.allowlist.dryRunReconcile({ text, op: 'nope', args: {} })).toMatchObject({ ok: false, message: expect.stringContaining('no operation "nope"') });
    expect(await api.allowlist.dryRunReconcile({ text: `${text}  - name: broken\n`, op: 'touchy', args: { tag: 'a' } })).toMatchObject({
      ok: false,
      message: expect.stringContaining('the allowlist is not valid yet'),
    });
    await expect(api.allowlist.dryRunReconcile({ text, op: '../touchy', args: {} })).rejects.toThrow('invalid arguments for allowlist.dryRunReconcile');
    expect(asked).toEqual([]);
    expect(dryRuns().length).toBe(before);
    expect(readdirSync(host.root).filter((n) => n.includes('pwned'))).toEqual([]);
  });

  it('with no desktop edge to ask, is refused and runs nothing', async () => {
    const bare = connect(svc, null);
    await expect(bare.allowlist.dryRunReconcile({ text: allowlist(), op: 'touchy', args: { tag: 'headless' } })).rejects.toThrow('refused: this needs a confirmation');
    expect(existsSync(file('reconciled-headless-dry-run'))).toBe(false);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });
});

describe('requests.checkReconcile and the views of interrupted runs', () => {
  it('an uncertain run shows its last check in the status and the request; Check again settles it when the look-up now says it took effect', async () => {
    host.submit(key, 'cut-1', 'interrupted', {});
    await host.waitResult('cut-1', ['running']);
    const pid = await host.runPid('cut-1');
    await daemon.kill9();
    process.kill(-pid, 'SIGKILL'); // gone when the host comes back: interrupted, not orphaned
    await eventually('the run to end', () => (groupRunning(pid) ? undefined : true));
    daemon = await host.startDaemon();
    // The host looked the effect up at its start, and could not tell (no done file yet).
    const attempt = await eventually('the check at the restart', () => host.result('cut-1')?.reconcile);
    expect(attempt).toMatchObject({ verdict: 'unknown', exit_code: 3, stdout: 'checked cut-1\n' });
    expect(host.result('cut-1')?.state).toBe('uncertain');

    const status = await api.status.get();
    expect(status.uncertain.find((u) => u.id === 'cut-1')).toMatchObject({ reconcilable: true, reconcile: { verdict: 'unknown', exit_code: 3 } });
    const view = await api.requests.get({ id: 'cut-1' });
    expect(view).toMatchObject({ state: 'uncertain', orphaned: false, resolved_by: null, reconcile: { verdict: 'unknown', argv: expect.arrayContaining(['cut-1']) } });

    // Still cannot tell: it stays uncertain, with the new attempt, by the app. A second check asked
    // while one runs is refused, not run alongside it.
    const checks = host.audit('cut-1', 'reconcile').length;
    const [first, second] = await Promise.allSettled([api.requests.checkReconcile({ id: 'cut-1' }), api.requests.checkReconcile({ id: 'cut-1' })]);
    expect(first).toMatchObject({ status: 'fulfilled', value: { state: 'uncertain', reconcile: { verdict: 'unknown', by: 'app' } } });
    expect(second).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('a reconcile check of cut-1 is already running') } });
    expect(host.audit('cut-1', 'reconcile').length).toBe(checks + 1);
    writeFileSync(file('done-cut-1'), '');
    const checked = await api.requests.checkReconcile({ id: 'cut-1' });
    expect(checked).toMatchObject({ state: 'succeeded', reconcile: { verdict: 'applied', exit_code: 0, by: 'app' } });
    expect(await api.requests.get({ id: 'cut-1' })).toMatchObject({ state: 'succeeded', resolved_by: 'reconcile', reconcile: { verdict: 'applied' } });
    const result = await host.waitResult('cut-1', ['succeeded']);
    expect(result.resolved_by).toBe('reconcile');
    expect((await api.status.get()).uncertain.some((u) => u.id === 'cut-1')).toBe(false);
    // Never re-run: one start only.
    expect(host.audit('cut-1', 'started')).toHaveLength(1);
  });

  it('refuses to check a request that is not uncertain, and an id outside the schema', async () => {
    const done = await host.sentinel(key, 'plain', {});
    expect(done.state).toBe('succeeded');
    await expect(api.requests.checkReconcile({ id: done.id })).rejects.toThrow(/uncertain/);
    expect((await api.requests.get({ id: done.id }))?.reconcile).toBeNull();
    await expect(api.requests.checkReconcile({ id: '../etc/passwd' })).rejects.toThrow('invalid arguments for requests.checkReconcile');
  });

  it('a run that outlived the host is orphaned in the status and the request, and cancel kills it', async () => {
    host.submit(key, 'orphan-1', 'interrupted', {});
    await host.waitResult('orphan-1', ['running']);
    const pid = await host.runPid('orphan-1');
    await daemon.kill9();
    daemon = await host.startDaemon();
    await eventually('the run to be watched as orphaned', () => (svc.requests.get('orphan-1')?.orphaned === 1 ? true : undefined));
    expect((await api.status.get()).running.find((x) => x.id === 'orphan-1')).toMatchObject({ orphaned: true });
    expect(await api.requests.get({ id: 'orphan-1' })).toMatchObject({ state: 'running', orphaned: true });
    expect(groupRunning(pid)).toBe(true);

    const out = await api.requests.cancel({ id: 'orphan-1' });
    expect(out.changed).toBe(true);
    expect((await host.waitResult('orphan-1', ['cancelled'])).state).toBe('cancelled');
    await eventually('the orphan to be killed', () => (groupRunning(pid) ? undefined : true));
    expect((await api.requests.get({ id: 'orphan-1' }))?.orphaned).toBe(false);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });
});

describe('a plan over the channels', () => {
  it('its approval card and request view list every step as it runs, never its environment; a step request names its plan, and the plan the request that used the step', async () => {
    const steps = [
      { op: 'stamp', args: { what: 'one' } },
      { op: 'stamp', args: { what: 'two' } },
    ];
    host.submit(key, 'plan-a', 'dumbwaiter.plan', { steps }, { intent: 'Stamp twice', expiresAt: new Date(Date.now() + 3600_000).toISOString() });
    await host.waitResult('plan-a', ['awaiting_approval']);
    const pending = (await api.approvals.list()).find((p) => p.id === 'plan-a');
    expect(pending?.approval).toMatchObject({ operation: 'dumbwaiter.plan', argv: [], cwd: '' });
    expect(pending?.approval.steps?.map((s) => [s.op, s.argv, s.scope, s.request_id])).toEqual([
      ['stamp', ['/bin/echo', 'stamped one'], 'write', null],
      ['stamp', ['/bin/echo', 'stamped two'], 'write', null],
    ]);
    expect((await api.approvals.approve({ id: 'plan-a' })).state).toBe('succeeded');

    host.submit(key, 'plan-a-1', 'stamp', { what: 'one' }, { extra: { plan_id: 'plan-a' } });
    expect((await host.waitResult('plan-a-1')).stdout).toBe('stamped one\n');
    const step = await api.requests.get({ id: 'plan-a-1' });
    expect(step).toMatchObject({ plan_id: 'plan-a', decided_by: 'plan plan-a', steps: null });
    const plan = await api.requests.get({ id: 'plan-a' });
    expect(plan).toMatchObject({ state: 'succeeded', plan_id: null, expires_at: expect.any(String) });
    expect(plan?.steps?.map((s) => [s.op, s.argv[1], s.request_id, s.state])).toEqual([
      ['stamp', 'stamped one', 'plan-a-1', 'succeeded'],
      ['stamp', 'stamped two', null, null],
    ]);
    // What the page gets of the plan holds no step's environment.
    expect(JSON.stringify([plan, await api.approvals.list(), await api.status.get()])).not.toContain('not-for-the-page');
  });
});
