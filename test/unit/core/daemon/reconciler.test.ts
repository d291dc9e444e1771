// The reconcile check on a real ledger with real commands: each exit maps to its verdict and move
// (0 succeeded, 1 failed not_applied, anything else uncertain with the attempt), every attempt is in
// the audit log, a request that is not uncertain or an operation without reconcile is refused, and a
// stop ends a check in progress, which then says so.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Reconciler } from '../../../../main/core/daemon/reconciler';
import { parseAllowlist } from '../../../../main/core/allowlist/load';
import { UserError } from '../../../../main/core/errors';
import { scopedLogger } from '../../../../main/core/log';
import type { ReconcileAttempt } from '../../../../shared/protocol/types';
import { TestLedger } from '../../../helpers/ledger';
import { eventually } from '../../../helpers/host';
import { alive } from '../../../helpers/processes';

let l: TestLedger;
let dir: string;
let reconciler: Reconciler;

beforeEach(() => {
  l = new TestLedger();
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-reconcile-'));
  const allowlist = parseAllowlist(`version: 1
operations:
  - name: deploy
    command: [/bin/true, "{code}"]
    args:
      code: {type: string, pattern: "[0-9]+"}
    scope: read
    reconcile:
      command: [/bin/sh, -c, 'echo "checked $1"; exit "$0"', "{code}", "{request_id}"]
  - name: slow
    command: [/bin/true]
    scope: read
    reconcile:
      command: [/bin/sh, -c, 'echo $$ > "$0"; exec sleep 300', "${path.join(dir, 'pid')}"]
  - name: gated
    command: [/bin/true]
    scope: read
    reconcile:
      command: [/bin/sh, -c, 'echo $$ > "$0"; while [ ! -e "$1" ]; do sleep 0.05; done', "${path.join(dir, 'gated-pid')}", "${path.join(dir, 'go')}"]
  - name: plain
    command: [/bin/true]
    scope: read
`);
  reconciler = new Reconciler({ requests: l.requests, audit: l.audit, lifecycle: l.lifecycle, allowlist: () => allowlist, killGraceMs: () => 200, log: scopedLogger('test') });
});

afterEach(() => {
  l.close();
  rmSync(dir, { recursive: true, force: true });
});

const uncertain = (id: string, op = 'deploy', args: Record<string, unknown> = {}) =>
  l.add(id, { op, args_json: JSON.stringify(args), state: 'uncertain', error_code: 'interrupted', error_message: 'the host stopped while this ran' });
const attemptOf = (id: string) => JSON.parse(l.requests.get(id)!.reconcile_json!) as ReconcileAttempt;
const kinds = (id: string) => l.audit.search({ requestId: id }).reverse().map((e) => e.kind);

describe('Reconciler.check', () => {
  it('exit 0: succeeded, resolved by reconcile, the error cleared, the attempt kept', async () => {
    uncertain('r1', 'deploy', { code: '0' });
    const row = await reconciler.check('r1', 'cli:alice');
    expect(row).toMatchObject({ state: 'succeeded', resolved_by: 'reconcile', error_code: null, error_message: null });
    expect(attemptOf('r1')).toMatchObject({ argv: ['/bin/sh', '-c', expect.any(String), '0', 'r1'], exit_code: 0, signal: null, stdout: 'checked r1\n', error: null, verdict: 'applied', by: 'cli:alice' });
    expect(kinds('r1')).toEqual(['reconcile', 'reconciled']);
    expect(l.audit.search({ requestId: 'r1', kind: 'reconcile' })[0]).toMatchObject({ actor: 'cli:alice', message: 'reconcile check by cli:alice: exit code 0: "checked r1": it took effect' });
  });

  it('exit 1: failed with not_applied, saying a retry with a new id is safe', async () => {
    uncertain('r2', 'deploy', { code: '1' });
    const row = await reconciler.check('r2', 'daemon (restart)');
    expect(row).toMatchObject({ state: 'failed', resolved_by: 'reconcile', error_code: 'not_applied' });
    expect(row.error_message).toBe('its reconcile command says it did not take effect (exit code 1: "checked r2"): it is safe to retry with a new request id');
    expect(attemptOf('r2').verdict).toBe('not_applied');
  });

  it('any other exit: still uncertain, with the attempt and what it said', async () => {
    uncertain('r3', 'deploy', { code: '3' });
    const row = await reconciler.check('r3', 'daemon (restart)');
    expect(row).toMatchObject({ state: 'uncertain', error_code: 'interrupted', resolved_by: null });
    expect(row.error_message).toContain('its reconcile command could not tell (exit code 3: "checked r3")');
    expect(row.error_message).toContain('dumbwaiter resolve r3 --check');
    expect(attemptOf('r3')).toMatchObject({ exit_code: 3, verdict: 'unknown' });
    expect(kinds('r3')).toEqual(['reconcile']);
    // Asked again: the new attempt replaces the last one.
    await reconciler.check('r3', 'cli:bob');
    expect(attemptOf('r3').by).toBe('cli:bob');
    expect(kinds('r3')).toEqual(['reconcile', 'reconcile']);
  });

  it('a request a human settled while the check ran keeps that verdict; the attempt is still in the log, saying so', async () => {
    uncertain('g1', 'gated');
    const checking = reconciler.check('g1', 'cli:alice');
    const pidFile = path.join(dir, 'gated-pid');
    await eventually('the check to start', () => (existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n') ? true : undefined));
    l.lifecycle.move(l.requests.get('g1')!, 'failed', { resolved_by: 'human', error_code: null, error_message: null }, { kind: 'resolved', message: 'settled by hand' });
    writeFileSync(path.join(dir, 'go'), '');
    expect(await checking).toMatchObject({ state: 'failed', resolved_by: 'human', reconcile_json: null });
    expect(kinds('g1')).toEqual(['resolved', 'reconcile']);
    expect(l.audit.search({ requestId: 'g1', kind: 'reconcile' })[0]).toMatchObject({
      actor: 'cli:alice',
      message: 'reconcile check by cli:alice: exit code 0: it took effect (not applied: the request is failed now)',
      details: { verdict: 'applied', exit_code: 0 },
    });
  });

  it('arguments its command no longer accepts: an attempt that says why, still uncertain', async () => {
    uncertain('r4', 'deploy', { code: 'not a number' });
    const row = await reconciler.check('r4', 'cli:alice');
    expect(row.state).toBe('uncertain');
    expect(attemptOf('r4')).toMatchObject({ argv: [], exit_code: null, verdict: 'unknown' });
    expect(attemptOf('r4').error).toMatch(/^its reconcile command cannot be made for this request's arguments now: /);
  });

  it('refuses a request that is not uncertain, or whose operation has no reconcile command, changing nothing', async () => {
    await expect(reconciler.check('nope', 'cli:alice')).rejects.toThrow(new UserError('no request nope in the ledger'));
    l.add('done', { state: 'succeeded' });
    await expect(reconciler.check('done', 'cli:alice')).rejects.toThrow(new UserError('request done is succeeded, not uncertain: nothing to check'));
    l.add('going', { state: 'running' });
    await expect(reconciler.check('going', 'cli:alice')).rejects.toThrow(/is running, not uncertain: its effect can be checked once it has ended/);
    uncertain('p1', 'plain');
    await expect(reconciler.check('p1', 'cli:alice')).rejects.toThrow('operation "plain" declares no reconcile command: Settle it with: dumbwaiter resolve p1 --succeeded|--failed');
    uncertain('gone', 'removed-op');
    await expect(reconciler.check('gone', 'cli:alice')).rejects.toThrow(/no operation "removed-op"/);
    expect(l.requests.get('p1')).toMatchObject({ state: 'uncertain', reconcile_json: null });
    expect(l.audit.search({})).toEqual([]);
  });
});

describe("the daemon's checks", () => {
  it('run once started; a stop ends one in progress, which says so and stays uncertain', async () => {
    const row = uncertain('s1', 'slow');
    reconciler.enqueue(row, 'daemon (restart)');
    const pidFile = path.join(dir, 'pid');
    reconciler.start();
    const pid = await eventually('the check to start', () => (existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n') ? Number(readFileSync(pidFile, 'utf8')) : undefined));
    await reconciler.stop();
    expect(alive(pid)).toBe(false);
    expect(l.requests.get('s1')?.state).toBe('uncertain');
    expect(attemptOf('s1')).toMatchObject({ verdict: 'unknown', error: 'the check was ended because the host was stopping', by: 'daemon (restart)' });
  });

  it('does not check anything once stopped', async () => {
    await reconciler.stop();
    reconciler.enqueue(uncertain('s2', 'deploy', { code: '0' }), 'daemon (restart)');
    reconciler.start();
    await reconciler.stop(); // waits for any check that had started
    expect(l.requests.get('s2')).toMatchObject({ state: 'uncertain', reconcile_json: null });
  });
});
