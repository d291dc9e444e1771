// Reconcile with the real daemon killed by SIGKILL mid-run: once the interrupted run's processes are
// gone, the restarted daemon asks the operation's reconcile command whether it took effect. Exit 0:
// succeeded (resolved_by reconcile); exit 1: failed, not_applied; anything else or a timeout:
// uncertain with the attempt attached; no reconcile: uncertain as before. `resolve --check` asks again.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { GatedRuns } from '../helpers/gatedRuns';
import { stopGroups, trackGroup } from '../helpers/processes';
import type { KeyFile, ReconcileAttempt } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let gated: GatedRuns;
/** answers/<request id>: the exit code the reconcile command of `deploy` gives for that request. */
let answers: string;

const op = (name: string, reconcile: string) => gated.op(name, `    concurrency: 8\n${reconcile}`);

beforeEach(() => {
  host = new TestHost('version: 1\noperations: []\n', { max_concurrent_runs: 8 });
  gated = new GatedRuns(host);
  answers = path.join(host.root, 'answers');
  mkdirSync(answers);
  const gate = path.join(host.root, 'check-go');
  host.writeAllowlist(`version: 1
operations:
${op('deploy', `    reconcile:
      command: [/bin/sh, -c, 'echo "looked up $1"; echo "answer file for $1" >&2; exit "$(cat "$0/$1")"', "${answers}", "{request_id}"]
      timeout_s: 20
`)}
${op('slow-check', `    reconcile:
      command: [/bin/sleep, "30"]
      timeout_s: 1
`)}
${op('gated-check', `    reconcile:
      command: [/bin/sh, -c, ': > "$0.started"; while [ ! -e "$0" ]; do sleep 0.05; done; exit 0', "${gate}"]
      timeout_s: 60
`)}
${op('plain', '')}`);
  key = host.createKey('reconcile', 'read');
});

afterEach(async () => {
  await host.cleanup();
  stopGroups();
});

const goFile = (id: string) => gated.goFile(id);
const runs = (id: string) => gated.runs(id);

/**
 * Starts a daemon, starts each request, kills the daemon with SIGKILL while they run, then lets them
 * end (so that their processes are gone before the next start, and they are not orphans).
 */
async function interrupted(reqs: [id: string, op: string][]): Promise<void> {
  await gated.startThenKill9(key, reqs);
  for (const [id] of reqs) writeFileSync(goFile(id), '');
  for (const [id] of reqs) await host.runGone(id);
}

const reconcileAudit = (id: string) => host.audit(id, 'reconcile').filter((e) => e.request_id === id);

describe('a run interrupted by a SIGKILL of the daemon, once its processes are gone', () => {
  it('is succeeded, resolved by reconcile, when the reconcile command exits 0', async () => {
    await interrupted([['rc-applied', 'deploy']]);
    writeFileSync(path.join(answers, 'rc-applied'), '0');
    await host.startDaemon();
    const r = await host.waitResult('rc-applied', ['succeeded', 'failed']);
    expect(r).toMatchObject({ state: 'succeeded', resolved_by: 'reconcile', error: null });
    expect(r.reconcile).toMatchObject({ exit_code: 0, verdict: 'applied', by: 'daemon (restart)', error: null, stdout: 'looked up rc-applied\n' });
    expect(r.reconcile!.argv).toEqual(['/bin/sh', '-c', expect.any(String), answers, 'rc-applied']);
    // Uncertain first (a crash during the check leaves it so), then the attempt, then the verdict.
    expect(host.audit('rc-applied').map((e) => e.kind).filter((k) => ['uncertain', 'reconcile', 'reconciled'].includes(k)).reverse()).toEqual(['uncertain', 'reconcile', 'reconciled']);
    expect(reconcileAudit('rc-applied')[0]?.message).toContain('it took effect');
    expect(runs('rc-applied')).toBe(1); // never re-run
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('is failed with not_applied, safe to retry, when the reconcile command exits 1', async () => {
    await interrupted([['rc-not-applied', 'deploy']]);
    writeFileSync(path.join(answers, 'rc-not-applied'), '1');
    await host.startDaemon();
    const r = await host.waitResult('rc-not-applied', ['succeeded', 'failed']);
    expect(r).toMatchObject({ state: 'failed', resolved_by: 'reconcile', error: { code: 'not_applied' } });
    expect(r.error!.message).toContain('safe to retry with a new request id');
    expect(r.reconcile).toMatchObject({ exit_code: 1, verdict: 'not_applied' });
    expect(runs('rc-not-applied')).toBe(1);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('stays uncertain with the attempt attached when the reconcile command exits 3, or times out', async () => {
    await interrupted([
      ['rc-three', 'deploy'],
      ['rc-timeout', 'slow-check'],
    ]);
    writeFileSync(path.join(answers, 'rc-three'), '3');
    await host.startDaemon();
    const three = await eventually('the exit-3 attempt', () => (host.result('rc-three')?.reconcile ? host.result('rc-three') : undefined));
    expect(three).toMatchObject({ state: 'uncertain', error: { code: 'interrupted' }, reconcile: { exit_code: 3, verdict: 'unknown', error: null } });
    expect(three.error!.message).toContain('its reconcile command could not tell (exit code 3: "answer file for rc-three")');
    expect(three.error!.message).toContain('dumbwaiter resolve rc-three --check');
    const slow = await eventually('the timed-out attempt', () => (host.result('rc-timeout')?.reconcile ? host.result('rc-timeout') : undefined));
    expect(slow).toMatchObject({ state: 'uncertain', reconcile: { verdict: 'unknown', exit_code: null, argv: ['/bin/sleep', '30'] } });
    expect(slow.reconcile!.error).toContain('timeout of 1 s');
    expect(reconcileAudit('rc-timeout')[0]?.message).toContain('it could not tell');
    const status = JSON.parse(host.cli(['status', '--json']).stdout) as { uncertain: { id: string; reconcilable: boolean; reconcile: ReconcileAttempt | null }[] };
    expect(status.uncertain.find((u) => u.id === 'rc-three')).toMatchObject({ reconcilable: true, reconcile: { exit_code: 3, verdict: 'unknown' } });
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('stays uncertain as before when its operation declares no reconcile command', async () => {
    await interrupted([['rc-plain', 'plain']]);
    await host.startDaemon();
    const r = await host.waitResult('rc-plain', ['uncertain']);
    expect(r.reconcile_pending).toBeUndefined(); // no check is coming: this is the outcome
    expect(r.error?.message).toContain('Settle it with: dumbwaiter resolve rc-plain --succeeded|--failed');
    expect(r.reconcile).toBeUndefined();
    expect((await host.sentinel(key)).state).toBe('succeeded');
    expect(reconcileAudit('rc-plain')).toEqual([]);
    const status = JSON.parse(host.cli(['status', '--json']).stdout) as { uncertain: { id: string; reconcilable: boolean; reconcile: ReconcileAttempt | null }[] };
    expect(status.uncertain.find((u) => u.id === 'rc-plain')).toMatchObject({ reconcilable: false, reconcile: null });
    const check = host.cli(['resolve', 'rc-plain', '--check']);
    expect(check.status).toBe(1);
    expect(check.stderr).toContain('operation "plain" declares no reconcile command');
  });

  it('does not hold up other requests while a check is still going', async () => {
    await interrupted([['rc-gated', 'gated-check']]);
    await host.startDaemon();
    await host.waitResult('rc-gated', ['uncertain']);
    // The check waits for its gate: requests are answered meanwhile, and a run runs.
    expect((await host.sentinel(key)).state).toBe('succeeded');
    writeFileSync(goFile('after'), '');
    expect((await host.sentinel(key, 'plain', { go: goFile('after') })).state).toBe('succeeded');
    expect(host.result('rc-gated')).toMatchObject({ state: 'uncertain' });
    expect(host.result('rc-gated')?.reconcile).toBeUndefined();
    writeFileSync(path.join(host.root, 'check-go'), '');
    expect(await host.waitResult('rc-gated', ['succeeded'])).toMatchObject({ resolved_by: 'reconcile' });
  });

  it("says its check is still to come, and dw wait (both clients) started after the restart waits for the check's outcome, not the interim uncertain", async () => {
    await interrupted([['rc-waited', 'gated-check']]);
    await host.startDaemon();
    const interim = await host.waitResult('rc-waited', ['uncertain']);
    expect(interim.reconcile_pending).toBe(true);
    const keyFile = path.join(host.root, 'waiter.key.json');
    writeFileSync(keyFile, JSON.stringify(key));
    const wait = (program: string, client: string) => {
      const p = spawn(program, [path.join(host.spool, 'bin', client), 'wait', 'rc-waited', '--timeout', '120', '--spool', host.spool, '--key-file', keyFile], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.on('data', (c: Buffer) => (out += c.toString()));
      p.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const exited = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
      return { p, exited, out: () => out };
    };
    const waiters = [wait(process.execPath, 'dw.cjs'), wait('python3', 'dw.py')];
    try {
      // A request answered after both started: they still wait, for the check the gate holds.
      expect((await host.sentinel(key)).state).toBe('succeeded');
      expect(waiters.map((w) => w.p.exitCode)).toEqual([null, null]);
      writeFileSync(path.join(host.root, 'check-go'), '');
      for (const w of waiters) {
        expect(await w.exited, w.out()).toBe(0);
        expect(w.out()).not.toMatch(/uncertain/);
      }
      const settled = await host.waitResult('rc-waited', ['succeeded']);
      expect(settled.reconcile_pending).toBeUndefined();
    } finally {
      for (const w of waiters) w.p.kill('SIGKILL');
    }
  });
});

describe('an interrupted run a stop left unchecked', () => {
  it('is checked at the next start: a run the clean stop ended, and a check the stop cut short', async () => {
    expect(host.cli(['config', 'set', 'shutdown_grace_s', '1']).status).toBe(0);
    const d1 = await host.startDaemon();
    host.submit(key, 'rc-stopped', 'deploy', { go: goFile('rc-stopped') });
    await host.waitResult('rc-stopped', ['running']);
    trackGroup(await host.runPid('rc-stopped'));
    await d1.stop(); // the grace period passes: the run is ended, uncertain
    expect(host.result('rc-stopped')).toMatchObject({ state: 'uncertain', error: { code: 'interrupted' } });
    expect(host.result('rc-stopped')?.reconcile).toBeUndefined();

    // The next start (the one `interrupted` makes; or, should its SIGKILL come first, the one after) checks it.
    writeFileSync(path.join(answers, 'rc-stopped'), '1');
    await interrupted([['rc-cut', 'gated-check']]);
    const d2 = await host.startDaemon();
    expect(await host.waitResult('rc-stopped', ['failed'])).toMatchObject({ resolved_by: 'reconcile', error: { code: 'not_applied' }, reconcile: { by: 'daemon (restart)' } });
    await host.waitResult('rc-cut', ['uncertain']);
    // The check says it started (the audit has rc-cut's entries from its first life already).
    await eventually('the gated check to be going', () => (existsSync(path.join(host.root, 'check-go.started')) ? true : undefined));
    expect(host.result('rc-cut')?.reconcile).toBeUndefined();
    await d2.stop(); // cuts the gated check short
    expect(host.result('rc-cut')?.reconcile?.error).toBe('the check was ended because the host was stopping');

    writeFileSync(path.join(host.root, 'check-go'), '');
    await host.startDaemon();
    expect(await host.waitResult('rc-cut', ['succeeded'])).toMatchObject({ resolved_by: 'reconcile', reconcile: { verdict: 'applied', by: 'daemon (restart)' } });
    expect(runs('rc-cut')).toBe(1);
    expect(runs('rc-stopped')).toBe(1);
  });
});

describe('dumbwaiter resolve --check', () => {
  it('asks the reconcile command again, and the request moves as it now says', async () => {
    await interrupted([['rc-later', 'deploy']]);
    const d2 = await host.startDaemon();
    // No answer yet: `cat` fails and the shell cannot exit with "" (exit 2): the check cannot tell.
    await eventually('the first attempt', () => (host.result('rc-later')?.reconcile ? true : undefined));
    expect(host.result('rc-later')).toMatchObject({ state: 'uncertain', reconcile: { verdict: 'unknown', exit_code: 2 } });

    writeFileSync(path.join(answers, 'rc-later'), '0');
    const check = host.cli(['resolve', 'rc-later', '--check', '--json']);
    expect(check.status).toBe(0);
    const out = JSON.parse(check.stdout) as { state: string; resolved_by: string; reconcile: ReconcileAttempt };
    expect(out).toMatchObject({ state: 'succeeded', resolved_by: 'reconcile', reconcile: { verdict: 'applied', exit_code: 0 } });
    expect(out.reconcile.by).toMatch(/^cli:/);
    expect(await host.waitResult('rc-later', ['succeeded'])).toMatchObject({ resolved_by: 'reconcile', reconcile: { verdict: 'applied' } });
    expect(reconcileAudit('rc-later').map((e) => e.actor).reverse()).toEqual(['daemon (restart)', expect.stringMatching(/^cli:/)]);

    // Only an uncertain request can be checked.
    const again = host.cli(['resolve', 'rc-later', '--check']);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('is succeeded, not uncertain: nothing to check');
    expect(host.cli(['resolve', 'rc-later', '--check', '--succeeded']).status).toBe(2);
    expect(runs('rc-later')).toBe(1);
    await d2.stop();
  });

  it('works without a daemon, and prints the verdict and the new state', async () => {
    await interrupted([['rc-offline', 'deploy']]);
    const d2 = await host.startDaemon();
    await eventually('the first attempt', () => (host.result('rc-offline')?.reconcile ? true : undefined));
    await d2.stop();
    writeFileSync(path.join(answers, 'rc-offline'), '1');
    const check = host.cli(['resolve', 'rc-offline', '--check']);
    expect(check.status).toBe(0);
    expect(check.stdout).toContain('rc-offline: its reconcile command says it did not take effect (exit code 1); it is now failed.');
    expect(check.stdout).toContain('safe to retry with a new request id');
    expect(host.result('rc-offline')).toMatchObject({ state: 'failed', error: { code: 'not_applied' }, resolved_by: 'reconcile' });
  });
});
