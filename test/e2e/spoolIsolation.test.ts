// A hostile sandbox in spool `work` (it holds key B, a valid write key of that spool, and writes
// anything into its own folder) against the real daemon that also serves spool `default` (key A):
// request ids that default uses, results of default's requests planted in work/results/, a cancel
// of default's request. It learns nothing of default and changes nothing there; default's results
// are written into default/ only, work's into work/ only.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import type { KeyFile, ResultDoc } from '../../shared/protocol/types';

let host: TestHost;
let work: string;
let a: KeyFile;
let b: KeyFile;
let daemon: DaemonProcess;
let runs: string;
let ids = 0;

beforeEach(async () => {
  host = new TestHost('version: 1\noperations: []\n', { rescan_interval_ms: 50 });
  runs = path.join(host.root, 'runs.txt');
  host.writeAllowlist(`version: 1
operations:
  - name: mark
    command: [/bin/sh, -c, 'echo "$DUMBWAITER_REQUEST_ID" >> "$0"; echo marked', ${JSON.stringify(runs)}]
    scope: read
    approval: never
    concurrency: 4
  - name: held
    command: [echo, held]
    scope: read
    approval: always
`);
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

/** A run of `mark` by `key` through the spool at `dir`: it ran. The daemon is alive and serves it. */
async function answered(key: KeyFile, dir: string, id = `ok-${++ids}`): Promise<ResultDoc> {
  host.submit(key, id, 'mark', {}, {}, dir);
  const r = await host.waitResult(id, undefined, undefined, dir);
  expect(r.state, JSON.stringify(r.error)).toBe('succeeded');
  expect(runsOf(id)).toBe(1);
  return r;
}

/** Both spools' queues taken past what was written before (a pass over each has ended). */
async function bothPassed(): Promise<void> {
  await host.sentinel(a);
  await host.sentinel(b, undefined, undefined, work);
}

describe('request ids used in the other spool', () => {
  it("work's sandbox reuses an id of default's: a conflict in work, nothing runs, and default's result is neither written into work/results nor changed", async () => {
    await answered(a, host.spool, 'shared-1');
    const before = resultText(host.spool, 'shared-1');

    host.submit(b, 'shared-1', 'mark', {}, {}, work);
    await eventually('the conflict in the audit log', () =>
      host.service((s) => s.searchAudit({ text: '', kind: 'conflict', requestId: 'shared-1', limit: 10 })).find((e) => e.spool === 'work'),
    );
    await bothPassed();
    expect(existsSync(resultFile(work, 'shared-1'))).toBe(false);
    expect(resultText(host.spool, 'shared-1')).toBe(before);
    expect(runsOf('shared-1')).toBe(1);
    expect(host.service((s) => s.request('shared-1'))).toMatchObject({ spool: 'default', key_id: a.key_id, state: 'succeeded' });
    // What work's sandbox is told says nothing of the other spool.
    const inbox = readdirSync(path.join(work, 'inbox')).map((n) => readFileSync(path.join(work, 'inbox', n), 'utf8'));
    expect(inbox.some((m) => m.includes('shared-1'))).toBe(true);
    for (const m of inbox) for (const other of ['default', host.spool, a.key_id]) expect(m).not.toContain(other);
    expect(readdirSync(path.join(host.spool, 'inbox'))).toEqual([]);

    await answered(b, work);
  });

  it("and the other way: default reuses an id of work's, and work's result is never written into default/results", async () => {
    await answered(b, work, 'shared-2');
    const before = resultText(work, 'shared-2');
    host.submit(a, 'shared-2', 'mark');
    await eventually('the conflict in the audit log', () =>
      host.service((s) => s.searchAudit({ text: '', kind: 'conflict', requestId: 'shared-2', limit: 10 })).find((e) => e.spool === 'default'),
    );
    await bothPassed();
    expect(existsSync(resultFile(host.spool, 'shared-2'))).toBe(false);
    expect(resultText(work, 'shared-2')).toBe(before);
    expect(runsOf('shared-2')).toBe(1);
    await answered(a, host.spool);
  });

  it("default's id written into work/queue with default's own key (stolen): unknown_key, and no result is written in work for the bound id", async () => {
    await answered(a, host.spool, 'shared-3');
    const before = resultText(host.spool, 'shared-3');
    host.submit(a, 'shared-3', 'mark', {}, {}, work);
    await eventually('the refusal in the audit log', () =>
      host.service((s) => s.searchAudit({ text: 'belongs to spool "default"', kind: 'rejected', requestId: 'shared-3', limit: 10 })).find((e) => e.spool === 'work'),
    );
    await bothPassed();
    expect(existsSync(resultFile(work, 'shared-3'))).toBe(false);
    expect(resultText(host.spool, 'shared-3')).toBe(before);
    expect(runsOf('shared-3')).toBe(1);
    await answered(b, work);
  });

  it('one new id written into both queues at once: it runs once, and only the spool whose request it bound gets a result', async () => {
    host.submit(a, 'race-1', 'mark');
    host.submit(b, 'race-1', 'mark', {}, {}, work);
    await bothPassed();
    const row = await eventually('race-1 to finish', () => {
      const r = host.service((s) => s.request('race-1'));
      return r?.state === 'succeeded' ? r : undefined;
    });
    const [winner, loser] = row.spool === 'default' ? [host.spool, work] : [work, host.spool];
    expect(row.key_id).toBe(row.spool === 'default' ? a.key_id : b.key_id);
    expect((await host.waitResult('race-1', ['succeeded'], undefined, winner)).id).toBe('race-1');
    await bothPassed();
    expect(existsSync(resultFile(loser, 'race-1'))).toBe(false);
    expect(runsOf('race-1')).toBe(1);
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
    writeFileSync(resultFile(work, own.id), forged);
    await eventually(`the repair of ${own.id}`, () => (host.audit('', 'result_repaired').some((e) => e.request_id === own.id) ? true : undefined));
    expect((JSON.parse(resultText(work, own.id)) as ResultDoc).id).toBe(own.id);
    expect(resultText(work, 'd-done')).toBe(forged);
    expect(resultText(work, 'd-later')).toBe(forged);

    // After a restart too: its first sweep compares every result of each spool with the ledger.
    await daemon.stop();
    daemon = await host.startDaemon({}, { spool: null });
    writeFileSync(resultFile(work, own.id), '{}');
    await eventually(`a second repair of ${own.id}`, () => (host.audit('', 'result_repaired').filter((e) => e.request_id === own.id).length >= 2 ? true : undefined));
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
    expect(host.service((s) => s.request('d-held')?.state)).toBe('awaiting_approval');
    expect(host.result('d-held')).toEqual(waiting);
    // Still a request a human can decide: approved, it runs.
    const approve = host.cli(['approvals', 'approve', 'd-held'], { spool: null });
    expect(approve.status, approve.stderr).toBe(0);
    expect((await host.waitResult('d-held', ['succeeded'])).stdout).toBe('held\n');
    await answered(b, work);
  });
});
