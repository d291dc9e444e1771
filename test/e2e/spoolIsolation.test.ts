// A hostile sandbox in spool `work` (it holds key B, a valid write key of that spool, and writes
// anything into its own folder) against the real daemon that also serves spool `default` (key A):
// request ids that default uses (each spool binds its own), results of default's requests planted in
// work/results/, a cancel of default's request. It learns nothing of default and changes nothing
// there; default's results are written into default/ only, work's into work/ only.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, markOp } from '../helpers/allowlists';
import { openHostDoc } from '../../shared/protocol/hostAuth';
import { requestHash } from '../../shared/protocol/requestHash';
import { decodeSecret } from '../../shared/protocol/sign';
import type { KeyFile, ResultDoc } from '../../shared/protocol/types';

let host: TestHost;
let work: string;
let a: KeyFile;
let b: KeyFile;
let daemon: DaemonProcess;
let runs: string;
let ids = 0;

beforeEach(async () => {
  host = new TestHost(NO_OPERATIONS, { rescan_interval_ms: 50 });
  runs = path.join(host.root, 'runs.txt');
  host.writeAllowlist(allowlistYaml(markOp(runs), { name: 'held', command: ['echo', 'held'], approval: 'always' }));
  work = host.addSpool('work');
  a = host.createKeyWithCli('a', 'default');
  b = host.createKeyWithCli('b', 'work');
  daemon = await host.startDaemon({}, { spool: null });
});

afterEach(async () => {
  await host.cleanup();
});

/** How many times `mark` ran for `id`. */
const runsOf = (id: string) => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter((l) => l === id).length : 0);
const resultFile = (dir: string, id: string) => path.join(dir, 'results', `${id}.json`);
const resultText = (dir: string, id: string) => readFileSync(resultFile(dir, id), 'utf8');

/** A run of `mark` by `key` through the spool at `dir`: it ran, by its handle in that spool. The daemon
 *  is alive and serves it. */
async function answered(key: KeyFile, dir: string, id = `ok-${++ids}`): Promise<ResultDoc> {
  host.submit(key, id, 'mark', {}, {}, dir);
  const r = await host.waitResult(id, undefined, undefined, dir);
  expect(r.state, JSON.stringify(r.error)).toBe('succeeded');
  expect(runsOf(host.handleOf(id, dir))).toBe(1);
  return r;
}

/** Both spools' queues taken past what was written before (a pass over each has ended). */
async function bothPassed(): Promise<void> {
  await host.sentinel(a);
  await host.sentinel(b, undefined, undefined, work);
}

describe('request ids used in the other spool', () => {
  // An id binds within its spool: default's sandbox squatting one costs work's nothing and tells it
  // nothing. The host's handle for work's request is `<id>@work` whoever used the id first (its run's
  // DUMBWAITER_REQUEST_ID, so runsOf tells the two apart: the first two tests see the same value, one
  // with default first, one with work first), default's the plain id; what work's sandbox reads names
  // only the id it gave.
  it("work's agent uses an id default's sandbox took first: its own run and result (dw run, exit 0), its retry a replay, its other request of that id a conflict (exit 87) in work alone", async () => {
    const fromA = await answered(a, host.spool, 'run-tests-1');
    const keyFile = path.join(host.root, 'key-b.json');
    writeFileSync(keyFile, JSON.stringify(b));
    const dw = (args: string[]) =>
      spawnSync(process.execPath, [path.join(work, 'bin', 'dw.cjs'), ...args], {
        encoding: 'utf8',
        cwd: host.root,
        env: { PATH: process.env.PATH!, HOME: host.root, DUMBWAITER_SPOOL: work, DUMBWAITER_KEY_FILE: keyFile },
        timeout: 30_000,
      });

    const run = dw(['run', '--id', 'run-tests-1', 'mark']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe('marked\n');
    expect(runsOf('run-tests-1@work')).toBe(1);
    const fromB = JSON.parse(resultText(work, 'run-tests-1')) as ResultDoc;
    expect(fromB).toMatchObject({ id: 'run-tests-1', state: 'succeeded', exit_code: 0, request_hash: requestHash(b.key_id, 'mark', {}) });
    expect(openHostDoc('result', resultText(work, 'run-tests-1'), { keyId: b.key_id, secret: decodeSecret(b.secret) }).ok).toBe(true);
    expect(resultText(work, 'run-tests-1')).not.toMatch(/@|default/);
    expect(JSON.parse(resultText(host.spool, 'run-tests-1'))).toEqual(fromA); // default's untouched
    expect(runsOf('run-tests-1')).toBe(1);
    expect(host.service((s) => s.requests.get('run-tests-1@work'))).toMatchObject({ spool: 'work', wire_id: 'run-tests-1', key_id: b.key_id });
    expect(host.service((s) => s.requests.get('run-tests-1'))).toMatchObject({ spool: 'default', wire_id: 'run-tests-1', key_id: a.key_id });

    // Its retry (same operation and arguments) is a replay of its own: nothing runs again.
    const retry = dw(['run', '--id', 'run-tests-1', 'mark']);
    expect(retry.status, retry.stderr).toBe(0);
    expect(runsOf('run-tests-1@work')).toBe(1);
    expect(host.audit('', 'replay').map((e) => e.request_id)).toEqual(['run-tests-1@work']);

    // Another request of that id is a conflict with its own, said in work's inbox alone.
    const other = dw(['run', '--id', 'run-tests-1', 'held']);
    expect(other.status, other.stderr).toBe(87);
    expect(other.stderr).not.toMatch(/@|default/);
    await bothPassed();
    expect(JSON.parse(resultText(work, 'run-tests-1'))).toEqual(fromB);
    expect(JSON.parse(resultText(host.spool, 'run-tests-1'))).toEqual(fromA);
    const inbox = readdirSync(path.join(work, 'inbox')).map((n) => readFileSync(path.join(work, 'inbox', n), 'utf8'));
    expect(inbox).toHaveLength(1);
    expect(inbox[0]).toContain('"ref": "run-tests-1"');
    expect(inbox[0]).toContain('your earlier request (operation mark)');
    for (const other of ['@', 'default', host.spool, a.key_id]) expect(inbox[0]).not.toContain(other);
    expect(readdirSync(path.join(host.spool, 'inbox'))).toEqual([]);
  });

  it("and the other way: default's sandbox uses an id of work's, and each spool keeps its own request and result, and its handle", async () => {
    // Work first this time: its run sees the same handle as when default had the id first.
    const fromB = await answered(b, work, 'run-tests-1');
    expect(runsOf('run-tests-1@work')).toBe(1);
    expect(runsOf('run-tests-1')).toBe(0);
    const before = resultText(work, 'run-tests-1');
    host.submit(a, 'run-tests-1', 'mark');
    const fromA = await host.waitResult('run-tests-1');
    expect(fromA).toMatchObject({ id: 'run-tests-1', state: 'succeeded', request_hash: requestHash(a.key_id, 'mark', {}) });
    // Default's request keeps its plain id as its handle, though work's was recorded first.
    expect(runsOf('run-tests-1')).toBe(1);
    expect(host.service((s) => s.requests.get('run-tests-1'))).toMatchObject({ spool: 'default', wire_id: 'run-tests-1', key_id: a.key_id });
    expect(host.service((s) => s.requests.get('run-tests-1@work'))).toMatchObject({ spool: 'work', wire_id: 'run-tests-1', key_id: b.key_id });
    expect(resultText(work, 'run-tests-1')).toBe(before);
    expect(fromB.request_hash).toBe(requestHash(b.key_id, 'mark', {}));
    expect(host.audit('', 'conflict')).toEqual([]);
  });

  it("default's id written into work/queue with default's own key (stolen): unknown_key in work, and default's request is untouched", async () => {
    await answered(a, host.spool, 'shared-3');
    const before = resultText(host.spool, 'shared-3');
    host.submit(a, 'shared-3', 'mark', {}, {}, work);
    const refused = await host.waitResult('shared-3', undefined, undefined, work);
    expect(refused.error?.code).toBe('unknown_key');
    expect(resultText(work, 'shared-3')).not.toMatch(/@|default/);
    await bothPassed();
    expect(resultText(host.spool, 'shared-3')).toBe(before);
    expect(runsOf('shared-3')).toBe(1);
    await answered(b, work);
  });

  it('one new id written into both queues at once: each spool\'s request runs once and gets its own result', async () => {
    host.submit(a, 'race-1', 'mark');
    host.submit(b, 'race-1', 'mark', {}, {}, work);
    const [inA, inB] = [await host.waitResult('race-1'), await host.waitResult('race-1', undefined, undefined, work)];
    expect(inA).toMatchObject({ id: 'race-1', state: 'succeeded', request_hash: requestHash(a.key_id, 'mark', {}) });
    expect(inB).toMatchObject({ id: 'race-1', state: 'succeeded', request_hash: requestHash(b.key_id, 'mark', {}) });
    // Whichever was recorded first, default's has the plain handle and work's its spool's.
    expect([runsOf('race-1'), runsOf('race-1@work')]).toEqual([1, 1]);
  });

  it("a plan and its step named by ids default's sandbox holds too: work's step takes work's plan, and the plan's result names work's ids alone", async () => {
    const inAnHour = new Date(Date.now() + 3600_000).toISOString();
    await answered(a, host.spool, 'plan-1');
    await answered(a, host.spool, 'step-1');
    host.submit(b, 'plan-1', 'dumbwaiter.plan', { steps: [{ op: 'held', args: {} }] }, { expiresAt: inAnHour }, work);
    await host.waitResult('plan-1', ['awaiting_approval'], undefined, work);
    const approve = host.cli(['approvals', 'approve', 'plan-1@work'], { spool: null });
    expect(approve.status, approve.stderr).toBe(0);
    await host.waitResult('plan-1', ['succeeded'], undefined, work);

    // `held` asks a human each time, but not as a step of the approved plan.
    host.submit(b, 'step-1', 'held', {}, { extra: { plan_id: 'plan-1' } }, work);
    await host.waitResult('step-1', ['succeeded', 'awaiting_approval'], undefined, work);
    expect(host.result('step-1', work)?.state).toBe('succeeded');
    expect(host.audit('', 'plan_step_used').map((e) => e.request_id).sort()).toEqual(['plan-1@work', 'step-1@work']);
    const plan = await eventually('the plan to show its step used', () => {
      const r = host.result('plan-1', work);
      return r?.plan?.steps[0]?.state === 'succeeded' ? r : undefined;
    });
    expect(plan.plan?.steps[0]?.request_id).toBe('step-1');
    for (const text of [resultText(work, 'plan-1'), resultText(work, 'step-1')]) expect(text).not.toMatch(/@|default/);
    // The app links the step to work's request, by the host's handle.
    expect(host.service((s) => s.requests.handleIn('work', 'step-1'))).toBe('step-1@work');
  });

  it("a cancel from work of an id both spools hold waiting reaches work's request alone", async () => {
    host.submit(a, 'held-1', 'held');
    host.submit(b, 'held-1', 'held', {}, {}, work);
    const waitingA = await host.waitResult('held-1', ['awaiting_approval']);
    await host.waitResult('held-1', ['awaiting_approval'], undefined, work);

    host.submit(b, 'c-held', 'dumbwaiter.cancel', { target: 'held-1' }, {}, work);
    const cancel = await host.waitResult('c-held', undefined, undefined, work);
    expect(cancel).toMatchObject({ state: 'succeeded', stdout: 'held-1 cancelled (it was awaiting approval)\n' });
    expect((await host.waitResult('held-1', ['cancelled'], undefined, work)).id).toBe('held-1');
    await bothPassed();
    expect(host.result('held-1')).toEqual(waitingA);
    expect(host.service((s) => s.requests.list({ limit: 100 })).filter((r) => r.id.startsWith('held-1')).map((r) => [r.spool, r.state]).sort()).toEqual([
      ['default', 'awaiting_approval'],
      ['work', 'cancelled'],
    ]);
  });
});

describe("results of default's requests planted in work/results/", () => {
  it("forged files named for default's requests (finished, and one not yet written) are never replaced by default's signed results", async () => {
    await answered(a, host.spool, 'd-done');
    const forged = '{"v":1,"id":"FORGED","state":"succeeded","stdout":"forged\\n"}';
    writeFileSync(resultFile(work, 'd-done'), forged);
    writeFileSync(resultFile(work, 'd-later'), forged); // before default's request of that id exists
    await answered(a, host.spool, 'd-later');
    // Written again now that both ids are bound (to default's requests): file events on both names.
    writeFileSync(resultFile(work, 'd-done'), forged);
    writeFileSync(resultFile(work, 'd-later'), forged);

    // An event the daemon acts on, after those: a forgery of work's own result, which it repairs. The
    // names of the earlier events were looked at first (and, of another spool, left alone).
    const own = await answered(b, work);
    const ownHandle = host.handleOf(own.id, work);
    writeFileSync(resultFile(work, own.id), forged);
    await eventually(`the repair of ${own.id}`, () => (host.audit('', 'result_repaired').some((e) => e.request_id === ownHandle) ? true : undefined));
    expect((JSON.parse(resultText(work, own.id)) as ResultDoc).id).toBe(own.id);
    expect(resultText(work, 'd-done')).toBe(forged);
    expect(resultText(work, 'd-later')).toBe(forged);

    // After a restart too: its first sweep compares every result of each spool with the ledger.
    await daemon.stop();
    daemon = await host.startDaemon({}, { spool: null });
    writeFileSync(resultFile(work, own.id), '{}');
    await eventually(`a second repair of ${own.id}`, () => (host.audit('', 'result_repaired').filter((e) => e.request_id === ownHandle).length >= 2 ? true : undefined));
    await bothPassed();
    expect(resultText(work, 'd-done')).toBe(forged);
    expect(resultText(work, 'd-later')).toBe(forged);
    // Default's own results stand, and nothing was repaired for them in any spool.
    expect((JSON.parse(resultText(host.spool, 'd-done')) as ResultDoc).state).toBe('succeeded');
    expect((JSON.parse(resultText(host.spool, 'd-later')) as ResultDoc).state).toBe('succeeded');
    expect(host.audit('', 'result_repaired').filter((e) => e.request_id === 'd-done' || e.request_id === 'd-later')).toEqual([]);
    await answered(a, host.spool);
  });
});

describe("a cancel of default's request from work", () => {
  it("dumbwaiter.cancel with key B of default's waiting request: \"no request\", as for an id never used, and default's request is untouched", async () => {
    host.submit(a, 'd-held', 'held');
    const waiting = await host.waitResult('d-held', ['awaiting_approval']);

    host.submit(b, 'c-1', 'dumbwaiter.cancel', { target: 'd-held' }, {}, work);
    host.submit(b, 'c-2', 'dumbwaiter.cancel', { target: 'never-used' }, {}, work);
    const cancel = await host.waitResult('c-1', undefined, undefined, work);
    const none = await host.waitResult('c-2', undefined, undefined, work);
    expect(cancel.state).toBe('rejected');
    expect(cancel.error).toEqual({ code: 'bad_args', message: 'no request d-held on this host' });
    expect(none.error).toEqual({ code: 'bad_args', message: 'no request never-used on this host' });

    await bothPassed();
    expect(host.service((s) => s.requests.get('d-held')?.state)).toBe('awaiting_approval');
    expect(host.result('d-held')).toEqual(waiting);
    // Still a request a human can decide: approved, it runs.
    const approve = host.cli(['approvals', 'approve', 'd-held'], { spool: null });
    expect(approve.status, approve.stderr).toBe(0);
    expect((await host.waitResult('d-held', ['succeeded'])).stdout).toBe('held\n');
    await answered(b, work);
  });
});
