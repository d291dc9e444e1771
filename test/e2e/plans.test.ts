// Plan approval with the real daemon: an agent proposes its steps (dumbwaiter.plan), a human approves
// them once, and each step then runs once without asking (payload plan_id) while anything else, a
// second use, another key, a denied or expired plan, still gets the usual policy; across restarts and
// a SIGKILL; spend ceilings still ask.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, clockPast, eventually, type DaemonProcess } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, countingCommand } from '../helpers/allowlists';
import type { KeyFile, PlanStep, RequestState } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;

/** `record` appends its request id to runs.txt, so every real run shows; it asks a human by default. */
async function setup(settings: Record<string, unknown> = {}): Promise<DaemonProcess> {
  host = new TestHost(NO_OPERATIONS, settings);
  host.writeAllowlist(allowlist());
  key = host.createKey('planner', 'write');
  return host.startDaemon();
}

const allowlist = (says = 'echo "$1 $2"') =>
  allowlistYaml({
    name: 'record',
    description: 'Write down a word (asks a human)',
    command: countingCommand(path.join(host.work, 'runs.txt'), says, '{word}', '{n}'),
    cwd: host.work,
    args: { word: { type: 'string', enum: ['alpha', 'beta', 'gamma'] }, n: { type: 'integer', min: 0, max: 9 } },
    scope: 'write',
    approval: 'always',
    concurrency: 4,
  });

afterEach(async () => {
  await host.cleanup();
});

function runs(): string[] {
  const f = path.join(host.work, 'runs.txt');
  return existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').filter(Boolean) : [];
}

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
const alpha = { op: 'record', args: { word: 'alpha', n: 1 } };
const beta = { op: 'record', args: { word: 'beta', n: 2 } };

/** Proposes a plan and waits until a human is asked about it. */
async function propose(id: string, steps: { op: string; args: Record<string, unknown> }[], expiresAt = inAnHour(), k = key) {
  host.submit(k, id, 'dumbwaiter.plan', { steps }, { expiresAt, intent: 'ship 1.2' });
  return host.waitResult(id, ['awaiting_approval']);
}

function approve(id: string): void {
  const r = host.cli(['approvals', 'approve', id]);
  if (r.status !== 0) throw new Error(`approve ${id} failed: ${r.stderr}`);
}

function step(id: string, args: Record<string, unknown>, planId: string, k = key): void {
  host.submit(k, id, 'record', args, { extra: { plan_id: planId } });
}

/** The plan's result once its steps' uses read `uses` (request id and state of each). */
function planShows(id: string, uses: [string | null, RequestState | null][]): Promise<PlanStep[]> {
  return eventually(`plan ${id} to show ${JSON.stringify(uses)}`, () => {
    const steps = host.result(id)?.plan?.steps;
    return steps && JSON.stringify(steps.map((s) => [s.request_id, s.state])) === JSON.stringify(uses) ? steps : undefined;
  });
}

const unmatched = (id: string) => host.audit(id, 'plan_step_unmatched').map((a) => a.message);

describe('a plan', () => {
  it("is approved once; then each of its steps runs without asking, once, and the plan's result lists them", async () => {
    await setup();
    const waiting = await propose('pl-1', [alpha, beta]);
    expect(waiting.approval).toMatchObject({ operation: 'dumbwaiter.plan', argv: [], cwd: '', intent: 'ship 1.2', key_name: 'planner' });
    expect(waiting.approval!.steps!.map((s) => [s.op, s.argv.slice(4), s.cwd, s.scope])).toEqual([
      ['record', ['alpha', '1'], host.work, 'write'],
      ['record', ['beta', '2'], host.work, 'write'],
    ]);
    // The human sees every step as it would run, and the plan's expiry.
    const listed = host.cli(['approvals', 'list']);
    expect(listed.stdout).toMatch(/^Approve a plan of 2 steps\?\n/);
    expect(listed.stdout).toMatch(/\n {2}Each step runs once, without asking again, until the plan expires at \d{4}-/);
    expect(listed.stdout).toContain('  Step 1: record (write)\n');
    expect(listed.stdout).toContain(`      in folder: ${JSON.stringify(host.work)}\n`);
    expect(listed.stdout).toMatch(/\n {2}Step 2: record \(write\)\n(.*\n)*? {6}argument \d+: "beta"\n {6}argument \d+: "2"\n/);

    approve('pl-1');
    const approved = await host.waitResult('pl-1', ['succeeded']);
    expect(approved.approval?.decided_by).toMatch(/^cli:/);
    expect(approved.plan?.steps.map((s) => s.request_id)).toEqual([null, null]);
    expect(runs()).toEqual([]); // approving a plan runs nothing by itself

    step('st-alpha', { n: 1, word: 'alpha' }, 'pl-1'); // another key order: the same arguments
    expect(await host.waitResult('st-alpha', ['succeeded'])).toMatchObject({ stdout: 'alpha 1\n' });
    expect(host.service((s) => s.requests.get('st-alpha')?.decided_by)).toBe('plan pl-1');

    // The same step again (a new id): it was used, so a human is asked as usual.
    step('st-alpha-again', alpha.args, 'pl-1');
    await host.waitResult('st-alpha-again', ['awaiting_approval']);
    expect(unmatched('st-alpha-again')).toEqual([expect.stringContaining('was already used (by st-alpha)')]);
    // Arguments that are not a step of the plan: asked as usual.
    step('st-gamma', { word: 'gamma', n: 1 }, 'pl-1');
    await host.waitResult('st-gamma', ['awaiting_approval']);
    expect(unmatched('st-gamma')).toEqual([expect.stringContaining('no step of plan pl-1 is record with these arguments')]);

    step('st-beta', beta.args, 'pl-1');
    await host.waitResult('st-beta', ['succeeded']);
    const steps = await planShows('pl-1', [['st-alpha', 'succeeded'], ['st-beta', 'succeeded']]);
    expect(steps[1]).toMatchObject({ op: 'record', args: beta.args, scope: 'write' });
    expect(runs()).toEqual(['st-alpha', 'st-beta']);
    // Recorded on the plan and on the step, once for each step used.
    expect(host.audit('', 'plan_step_used').map((a) => a.request_id).sort()).toEqual(['pl-1', 'pl-1', 'st-alpha', 'st-beta']);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('is named on the card and in the result of a request that claims it but is no step of it, with the difference; a match or no claim names none', async () => {
    await setup();
    await propose('pl-claim', [alpha, beta]);
    approve('pl-claim');
    await host.waitResult('pl-claim', ['succeeded']);
    const claimOf = (id: string) => host.service((svc) => svc.verdicts.pending().find((a) => a.id === id)?.approval.plan_claim);

    // One argument differs from the closest step: the reason names the step, the argument and both values.
    step('st-n3', { word: 'alpha', n: 3 }, 'pl-claim');
    const differs = await host.waitResult('st-n3', ['awaiting_approval']);
    const reason = 'no step of plan pl-claim is record with these arguments: the closest, step 1, differs in n (step 1, request 3)';
    expect(differs.approval?.plan_claim).toEqual({ plan_id: 'pl-claim', reason });
    expect(claimOf('st-n3')).toEqual({ plan_id: 'pl-claim', reason });
    // The command line's card says it too, whoever decides there.
    expect(host.cli(['approvals', 'list']).stdout).toContain(`  ! Claims plan pl-claim, but differs from its steps: ${reason}. It is not one of that plan's approved steps, so it asks you like any request.\n`);
    // Both arguments differ from every step: the first, unused one is named, with each difference.
    step('st-gamma', { word: 'gamma', n: 7 }, 'pl-claim');
    expect((await host.waitResult('st-gamma', ['awaiting_approval'])).approval?.plan_claim?.reason).toBe(
      'no step of plan pl-claim is record with these arguments: the closest, step 1, differs in n (step 1, request 7) and word (step "alpha", request "gamma")',
    );
    // A plan id that names no plan.
    step('st-nowhere', alpha.args, 'pl-nowhere');
    await host.waitResult('st-nowhere', ['awaiting_approval']);
    expect(claimOf('st-nowhere')).toEqual({ plan_id: 'pl-nowhere', reason: 'no plan pl-nowhere of this key' });
    expect(host.result('st-nowhere')?.approval?.plan_claim).toEqual({ plan_id: 'pl-nowhere', reason: 'no plan pl-nowhere of this key' });

    // Claiming nothing, or matching a step: no claim to tell.
    host.submit(key, 'st-plain', 'record', alpha.args);
    expect((await host.waitResult('st-plain', ['awaiting_approval'])).approval?.plan_claim).toBeUndefined();
    step('st-beta', beta.args, 'pl-claim');
    expect((await host.waitResult('st-beta', ['succeeded'])).approval).toBeUndefined();
    expect(runs()).toEqual(['st-beta']);
  });

  it("is one key's: another key naming it, or a plan_id that is not a plan, gets the usual policy", async () => {
    await setup();
    const other = host.createKey('other agent', 'write');
    await propose('pl-mine', [alpha]);
    approve('pl-mine');
    await host.waitResult('pl-mine', ['succeeded']);
    step('st-theirs', alpha.args, 'pl-mine', other);
    await host.waitResult('st-theirs', ['awaiting_approval']);
    expect(unmatched('st-theirs')).toEqual([expect.stringContaining('no plan pl-mine of this key')]);
    step('st-not-a-plan', alpha.args, 'st-theirs');
    await host.waitResult('st-not-a-plan', ['awaiting_approval']);
    expect(unmatched('st-not-a-plan')).toEqual([expect.stringContaining('no plan st-theirs of this key')]);
    // The plan's own key still has its step.
    step('st-mine', alpha.args, 'pl-mine');
    await host.waitResult('st-mine', ['succeeded']);
    expect(runs()).toEqual(['st-mine']);
  });

  it('lets nothing run once denied, or once expired', async () => {
    await setup();
    await propose('pl-denied', [alpha]);
    const forAWhile = host.cli(['approvals', 'approve', 'pl-denied', '--for', '10m']);
    expect([forAWhile.status, forAWhile.stderr]).toEqual([1, expect.stringContaining('pl-denied is a plan: it is approved once, as a whole')]);
    expect(host.cli(['approvals', 'deny', 'pl-denied', '--reason', 'too much']).status).toBe(0);
    await host.waitResult('pl-denied', ['denied']);
    step('st-denied', alpha.args, 'pl-denied');
    await host.waitResult('st-denied', ['awaiting_approval']);
    expect(unmatched('st-denied')).toEqual([expect.stringContaining('plan pl-denied is denied, not approved')]);

    // A short plan, approved in-process the moment it lands (no CLI to start): its expiry leaves a wide
    // margin for the proposal on a busy machine, and the test waits for the clock to pass it.
    const soon = Date.now() + 10_000;
    await propose('pl-short', [alpha], new Date(soon).toISOString());
    host.service((s) => s.verdicts.approve('pl-short', 'test'));
    await host.waitResult('pl-short', ['succeeded']);
    await clockPast(soon);
    step('st-late', alpha.args, 'pl-short');
    await host.waitResult('st-late', ['awaiting_approval']);
    expect(unmatched('st-late')).toEqual([expect.stringContaining('plan pl-short expired at')]);
    expect(runs()).toEqual([]);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('is withdrawn by a cancel (the human\'s, or its agent\'s dumbwaiter.cancel): its unused steps ask again, a queued one too', async () => {
    await setup();
    await propose('pl-wd', [alpha, beta]);
    approve('pl-wd');
    await host.waitResult('pl-wd', ['succeeded']);
    // A step taken while the host is paused waits queued; the withdrawal sends it back to a human.
    expect(host.cli(['pause']).status).toBe(0);
    step('st-queued', alpha.args, 'pl-wd');
    await host.waitResult('st-queued', ['queued']);
    const cancel = host.cli(['cancel', 'pl-wd']);
    expect([cancel.status, cancel.stdout]).toEqual([0, expect.stringContaining('plan pl-wd withdrawn by')]);
    expect(host.audit('pl-wd', 'plan_withdrawn')).toHaveLength(1);
    expect(host.cli(['resume']).status).toBe(0);
    const back = await host.waitResult('st-queued', ['awaiting_approval']);
    expect(back.approval?.argv).toBeDefined();
    expect(back.approval?.plan_claim).toEqual({ plan_id: 'pl-wd', reason: expect.stringMatching(/^plan pl-wd expired or was withdrawn at \S+, before this step could start$/) });
    step('st-after', beta.args, 'pl-wd');
    await host.waitResult('st-after', ['awaiting_approval']);
    expect(unmatched('st-after')).toEqual([expect.stringContaining('plan pl-wd expired at')]);

    // The agent withdraws its own plan.
    await propose('pl-agent', [alpha]);
    approve('pl-agent');
    await host.waitResult('pl-agent', ['succeeded']);
    host.submit(key, 'wd-agent', 'dumbwaiter.cancel', { target: 'pl-agent' });
    expect((await host.waitResult('wd-agent', ['succeeded'])).stdout).toContain('plan pl-agent withdrawn');
    step('st-agent', alpha.args, 'pl-agent');
    await host.waitResult('st-agent', ['awaiting_approval']);
    expect(runs()).toEqual([]);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('no longer covers a step whose command changed since the approval, nor one queued before the change: a human is asked again, and told why', async () => {
    await setup();
    await propose('pl-old', [alpha, beta]);
    approve('pl-old');
    await host.waitResult('pl-old', ['succeeded']);
    // A step taken while the host is paused waits queued, and is checked again before it starts.
    expect(host.cli(['pause']).status).toBe(0);
    step('st-queued-then-changed', beta.args, 'pl-old');
    await host.waitResult('st-queued-then-changed', ['queued']);
    host.writeAllowlist(allowlist('echo "$1 $2"; echo changed'));
    await eventually('the allowlist to be reloaded', () => (host.audit('reloaded', 'allowlist_loaded').length > 0 ? true : undefined));
    step('st-changed', alpha.args, 'pl-old');
    const asked = await host.waitResult('st-changed', ['awaiting_approval']);
    expect(asked.approval?.argv[2]).toContain('echo changed');
    expect(unmatched('st-changed')).toEqual([expect.stringContaining('what step 1 of plan pl-old would run changed since the plan was approved')]);
    expect(asked.approval?.plan_claim).toEqual({ plan_id: 'pl-old', reason: 'what step 1 of plan pl-old would run changed since the plan was approved' });
    expect(host.cli(['resume']).status).toBe(0);
    const back = await host.waitResult('st-queued-then-changed', ['awaiting_approval']);
    expect(back.approval?.plan_claim).toEqual({ plan_id: 'pl-old', reason: 'what this step of plan pl-old would run changed since the plan was approved' });
    expect(runs()).toEqual([]);
  });

  it('is refused when a step is not a call this key may make, or its expiry is missing or too far', async () => {
    await setup();
    const reader = host.createKey('reader', 'read');
    host.submit(reader, 'pl-scope', 'dumbwaiter.plan', { steps: [alpha] }, { expiresAt: inAnHour() });
    expect(await host.waitResult('pl-scope')).toMatchObject({ state: 'rejected', error: { code: 'scope_denied', message: expect.stringContaining('steps[0]') } });
    host.submit(key, 'pl-builtin', 'dumbwaiter.plan', { steps: [{ op: 'dumbwaiter.cancel', args: { target: 'pl-scope' } }] }, { expiresAt: inAnHour() });
    expect(await host.waitResult('pl-builtin')).toMatchObject({ state: 'rejected', error: { code: 'bad_args', message: expect.stringContaining('is built in') } });
    host.submit(key, 'pl-forever', 'dumbwaiter.plan', { steps: [alpha] }, { expiresAt: new Date(Date.now() + 25 * 3600_000).toISOString() });
    expect(await host.waitResult('pl-forever')).toMatchObject({ state: 'rejected', error: { code: 'bad_args', message: expect.stringContaining('more than 24 h ahead') } });
    host.submit(key, 'pl-no-expiry', 'dumbwaiter.plan', { steps: [alpha] });
    expect(await host.waitResult('pl-no-expiry')).toMatchObject({ state: 'rejected', error: { code: 'bad_args', message: expect.stringContaining('expires_at') } });
    expect(runs()).toEqual([]);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('survives restarts: approved while the host is down, a step after a stop, another after a SIGKILL', async () => {
    const d1 = await setup();
    await propose('pl-r', [alpha, beta]);
    await d1.stop();
    approve('pl-r'); // from the command line, with no daemon running
    const d2 = await host.startDaemon();
    await host.waitResult('pl-r', ['succeeded']);
    step('st-r1', alpha.args, 'pl-r');
    await host.waitResult('st-r1', ['succeeded']);
    await d2.kill9();
    await host.startDaemon();
    step('st-r1-again', alpha.args, 'pl-r');
    await host.waitResult('st-r1-again', ['awaiting_approval']);
    step('st-r2', beta.args, 'pl-r');
    await host.waitResult('st-r2', ['succeeded']);
    await planShows('pl-r', [['st-r1', 'succeeded'], ['st-r2', 'succeeded']]);
    expect(runs()).toEqual(['st-r1', 'st-r2']);
  });

  it('takes a step in the same commit as the request: a SIGKILL right after it leaves the step used, once', async () => {
    const d1 = await setup();
    await propose('pl-k', [alpha]);
    approve('pl-k');
    await host.waitResult('pl-k', ['succeeded']);
    await d1.stop();
    // A slot is free, so that commit also marks it running: cut there, before its run keeper got it,
    // it never ran, and the next start queues it again: it runs once, the step still its own.
    const crashing = await host.startDaemon({ DUMBWAITER_FAULT: 'after_start_at_once' });
    await eventually('the daemon to have its run keeper', () => host.service((s) => s.core.flags.keeper) || undefined);
    step('st-k', alpha.args, 'pl-k');
    await crashing.exited;
    await host.startDaemon();
    await host.waitResult('st-k', ['succeeded']);
    await planShows('pl-k', [['st-k', 'succeeded']]);
    step('st-k-again', alpha.args, 'pl-k');
    await host.waitResult('st-k-again', ['awaiting_approval']);
    expect(runs()).toEqual(['st-k']);
  });

  it('does not lift a spend ceiling: a step that would cross it asks a human, and stays unused', async () => {
    await setup({ ceilings: [{ name: 'one-run', per: 'key', window_s: 3600, max_runs: 1, action: 'ask' }] });
    await propose('pl-c', [alpha, beta]);
    approve('pl-c');
    await host.waitResult('pl-c', ['succeeded']);
    step('st-c1', alpha.args, 'pl-c');
    await host.waitResult('st-c1', ['succeeded']);
    step('st-c2', beta.args, 'pl-c');
    const asked = await host.waitResult('st-c2', ['awaiting_approval']);
    expect(asked.approval?.ceiling).toContain('one-run');
    expect(asked.approval?.plan_claim).toBeUndefined(); // it is a step of the plan: the ceiling is why it asks
    expect(host.result('pl-c')?.plan?.steps.map((s) => s.request_id)).toEqual(['st-c1', null]);
    approve('st-c2'); // a human lets it past the ceiling
    await host.waitResult('st-c2', ['succeeded']);
    expect(runs()).toEqual(['st-c1', 'st-c2']);
  });
});
