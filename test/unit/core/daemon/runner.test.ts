// The runner on a real ledger and real spool files, without a daemon: a queued request is admitted
// again just before it starts (policy/admission.ts), since what held at intake may not any more. A
// grant revoked or a plan withdrawn sends it back to a human with its approval cleared; a revoked key,
// its expiry or age, a reached ceiling or an allowlist without its operation refuse it; an approval
// that holds lets it run, and who gave it stays in its columns. Runs end with their outcome recorded.
// At a host's start, a run recorded as running is recorded as it ended or followed when its keeper
// held it, queued again when the keeper every start went to never received it, and uncertain when no
// one can say.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HomeParts } from '../../../helpers/homeParts';
import { GREET, NO_OPERATIONS, allowlistYaml } from '../../../helpers/allowlists';
import { grantRules } from '../../../../main/core/policy/grantRules';
import { PLAN_OP } from '../../../../main/core/policy/plans';
import type { KeyFile } from '../../../../shared/protocol/types';
import type { KeyInfo } from '../../../../main/core/keys/keyStore';

let p: HomeParts;
let key: { info: KeyInfo; file: KeyFile };
beforeEach(() => {
  p = new HomeParts();
  key = p.key();
  p.core.flags.setPaused(true); // what intake takes stays queued until the test lets it start
});
afterEach(async () => {
  await p.close();
  expect(p.caught).toEqual([]); // nothing the daemon would only have logged
});

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
const lastEntry = (id: string) => p.core.audit.search({ requestId: id })[0];
/** Unpaused, and what is queued may start now. */
function startNow(): void {
  p.core.flags.setPaused(false);
  p.runner.pump();
}
/** Deploy to staging, queued as approved by a grant (which it returns). */
function queuedByGrant(id: string): string {
  const g = p.core.grants.create(key.info.key_id, 'deploy', grantRules({ target: 'staging' }), 600, 'cli:alice');
  expect(p.take(key.file, id, 'deploy', { target: 'staging' })).toEqual({ kind: 'recorded', state: 'queued' });
  return g.id;
}

describe('an approval that no longer holds', () => {
  it('a grant revoked after intake: back to a human, saying so, with who approved it cleared', () => {
    const g = queuedByGrant('r1');
    p.core.grants.revoke(g, 'cli:alice');
    startNow();
    expect(p.row('r1')).toMatchObject({ state: 'awaiting_approval', approved_by_grant: null, approved_by_actor: null, approved_by_plan: null, decided_by: null, decided_at: null });
    expect(lastEntry('r1')).toMatchObject({ kind: 'approval_requested', message: `back to approval before starting: its approval (grant ${g}) no longer holds` });
  });

  it('a plan withdrawn after its step was queued: back to a human, the plan claim on its card', () => {
    expect(p.take(key.file, 'pl-1', PLAN_OP, { steps: [{ op: 'deploy', args: { target: 'staging' } }] }, { expiresAt: inAnHour() }).kind).toBe('recorded');
    p.core.decisions.approve('pl-1', 'cli:alice');
    expect(p.take(key.file, 'st-1', 'deploy', { target: 'staging' }, { extra: { plan_id: 'pl-1' } })).toEqual({ kind: 'recorded', state: 'queued' });
    p.core.decisions.cancel('pl-1', 'cli:alice');
    startNow();
    const row = p.row('st-1');
    expect(row).toMatchObject({ state: 'awaiting_approval', approved_by_plan: null, decided_by: null });
    expect(JSON.parse(row.approval_json!).plan_claim).toMatchObject({ plan_id: 'pl-1', reason: expect.stringContaining('plan pl-1 expired or was withdrawn at') });
    expect(lastEntry('st-1')?.message).toBe('back to approval before starting: its approval (plan pl-1) no longer holds');
  });
});

describe('refused before it starts', () => {
  it('its key revoked meanwhile', () => {
    queuedByGrant('r1');
    p.core.keys.revoke(key.info.key_id);
    startNow();
    expect(p.row('r1')).toMatchObject({ state: 'rejected', error_code: 'revoked_key', error_message: `key ${key.info.key_id} was revoked before this request started` });
  });

  it('older than the host now allows', () => {
    const created = new Date(Date.now() - 120_000).toISOString();
    expect(p.take(key.file, 'r1', 'greet', { name: 'ada' }, { createdAt: created })).toEqual({ kind: 'recorded', state: 'queued' });
    p.setSettings({ max_request_age_s: 60 });
    startNow();
    expect(p.row('r1')).toMatchObject({ state: 'expired', error_code: 'expired', error_message: `created_at ${created} is older than this host's maximum request age (60 s), before it could start` });
  });

  it('a spend ceiling reached meanwhile, and an allowlist that lost its operation, each said as checked again', () => {
    expect(p.take(key.file, 'r1', 'greet', { name: 'ada' })).toEqual({ kind: 'recorded', state: 'queued' });
    p.setSettings({ ceilings: [{ name: 'none', per: 'global', window_s: 3600, max_runs: 0, action: 'reject' }] });
    startNow();
    expect(p.row('r1')).toMatchObject({ state: 'rejected', error_code: 'spend_ceiling', error_message: 'ceiling "none" (all keys, per 3600 s): 0 of 0 runs used (checked again before starting)' });
    p.setSettings({ ceilings: [] });
    expect(p.take(key.file, 'r2', 'deploy', { target: 'staging' })).toEqual({ kind: 'recorded', state: 'awaiting_approval' });
    p.core.decisions.approve('r2', 'cli:alice');
    p.setAllowlist(NO_OPERATIONS);
    p.runner.pump();
    expect(p.row('r2')).toMatchObject({ state: 'rejected', error_code: 'unknown_op', error_message: expect.stringMatching(/^no operation "deploy".* \(checked again before starting\)$/) });
  });
});

describe('an approval that holds', () => {
  it("a person's: it starts and runs, and who approved it stays", async () => {
    expect(p.take(key.file, 'r1', 'deploy', { target: 'staging' })).toEqual({ kind: 'recorded', state: 'awaiting_approval' });
    p.core.decisions.approve('r1', 'cli:alice');
    startNow();
    expect(p.row('r1').state).toBe('running');
    expect(await p.until('r1', ['succeeded'])).toMatchObject({ stdout: 'deploy staging\n', approved_by_actor: 'cli:alice', decided_by: 'cli:alice' });
  });

  it('a grant that covers it only by the time it starts: recorded as its approval, and used', async () => {
    expect(p.take(key.file, 'r1', 'greet', { name: 'ada' })).toEqual({ kind: 'recorded', state: 'queued' });
    // The operation now asks for approval, and a grant covers this call.
    p.setAllowlist(allowlistYaml({ ...GREET, approval: 'always' }));
    const g = p.core.grants.create(key.info.key_id, 'greet', grantRules({ name: 'ada' }), 600, 'cli:alice');
    startNow();
    expect(p.row('r1')).toMatchObject({ state: 'running', approved_by_grant: g.id, decided_by: `grant ${g.id}` });
    expect(p.core.grants.get(g.id)?.uses).toBe(1);
    await p.until('r1', ['succeeded']);
  });
});

describe('at the start of a host, a run recorded as running', () => {
  /** `id` recorded as running, as the runner records a start, with nothing started (no process). */
  function recordedRunning(id: string): void {
    expect(p.take(key.file, id, 'greet', { name: 'ada' })).toEqual({ kind: 'recorded', state: 'queued' });
    p.core.flags.setPaused(false); // nothing pumps here: it stays queued until started below
    expect(p.core.lifecycle.start(p.row(id), { started_at: new Date().toISOString(), cost: 1 })?.state).toBe('running');
  }
  const outcome = (exit_code: number) => ({ exit_code, signal: null, stdout: 'hi\n', stderr: '', stdout_truncated: false, stderr_truncated: false, error: null, terminated: null, finished_at: new Date().toISOString(), duration_ms: 5, log: { bytes: 3, sha256: 'a'.repeat(64) } });

  it('that the keeper every start went to does not hold was never started: queued again, its unused log taken away, and runs once', async () => {
    recordedRunning('r1');
    const log = path.join(p.spool, 'results', 'r1.log');
    writeFileSync(log, ''); // made by the daemon that died before the keeper received the run
    p.runner.recoverInterrupted(new Map(), true);
    expect(p.row('r1')).toMatchObject({ state: 'queued', started_at: null });
    expect(existsSync(log)).toBe(false); // not taken for something the sandbox planted at the next start
    expect(lastEntry('r1')).toMatchObject({ kind: 'requeued', message: expect.stringContaining('it never ran, and is queued again') });
    startNow();
    await p.until('r1', ['succeeded']);
    expect(p.core.audit.search({ requestId: 'r1', kind: 'log_quarantined' })).toEqual([]);
  });

  it("queued again, a grant's run counts as one use of the grant", async () => {
    const g = queuedByGrant('r1');
    p.core.flags.setPaused(false);
    expect(p.core.lifecycle.start(p.row('r1'), { started_at: new Date().toISOString(), cost: 1 })?.state).toBe('running');
    p.runner.recoverInterrupted(new Map(), true);
    startNow();
    await p.until('r1', ['succeeded']);
    expect(p.core.grants.get(g)?.uses).toBe(1);
  });

  it('with no word from that keeper may have started: uncertain, never run again', () => {
    recordedRunning('r1');
    p.runner.recoverInterrupted(new Map(), false);
    expect(p.row('r1')).toMatchObject({ state: 'uncertain', error_code: 'interrupted' });
  });

  it('that ended in the keeper while no daemon ran is recorded as it ended, its exit code and log digest', () => {
    recordedRunning('r1');
    p.runner.recoverInterrupted(new Map([['r1', { outcome: outcome(3) }]]), true);
    expect(p.row('r1')).toMatchObject({ state: 'failed', exit_code: 3, stdout: 'hi\n', log_bytes: 3 });
  });

  it('that the keeper still runs is followed until it ends, holding its slot', async () => {
    recordedRunning('r1');
    let end!: (o: ReturnType<typeof outcome>) => void;
    const done = new Promise<ReturnType<typeof outcome>>((r) => (end = r));
    p.runner.recoverInterrupted(new Map([['r1', { handle: { pid: 4242, marker: 'm'.repeat(32), since: 1, done, terminate() {} } }]]), true);
    expect(p.row('r1')).toMatchObject({ state: 'running', pid: 4242, orphaned: 0 });
    expect(p.runner.size).toBe(1);
    end(outcome(0));
    await p.until('r1', ['succeeded']);
    expect(p.runner.size).toBe(0);
  });
});
