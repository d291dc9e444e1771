// Spend ceilings with the real daemon: each kind (runs, cost units, run time) with `reject` and with
// `ask`, per key and global, computed from the ledger (so they survive a restart), checked again just
// before a queued run starts, and shown by `dumbwaiter status`.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { TestHost, eventually } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, countingCommand } from '../helpers/allowlists';
import { killGroup } from '../helpers/processes';
import type { KeyFile, ResultDoc } from '../../shared/protocol/types';

const ACTOR = `cli:${os.userInfo().username}`;

interface Ceiling {
  name: string;
  per?: 'global' | 'key';
  key_id?: string;
  window_s: number;
  max_runs?: number;
  max_cost?: number;
  max_run_time_s?: number;
  action?: 'reject' | 'ask';
}

interface SpendLine {
  ceiling: Ceiling;
  key_id: string | null;
  spend: { runs: number; cost: number; run_time_s: number };
}

let host: TestHost | null = null;
let counter = '';

afterEach(async () => {
  await host?.cleanup();
  host = null;
});

/** A host whose operations each append their request id to runs.txt, so every real run shows. */
function makeHost(ceilings: Ceiling[] = [], settings: Record<string, unknown> = {}): TestHost {
  const h = new TestHost(NO_OPERATIONS, { ceilings, ...settings });
  counter = path.join(h.root, 'runs.txt');
  h.writeAllowlist(
    allowlistYaml(
      { name: 'record', command: countingCommand(counter), concurrency: 4 },
      { name: 'costly', command: countingCommand(counter), concurrency: 4, cost: 3 },
      { name: 'nap', command: countingCommand(counter, 'sleep "$1"', '{seconds}'), args: { seconds: { type: 'string', pattern: '[0-9]+(\\.[0-9]+)?' } }, concurrency: 1 },
    ),
  );
  host = h;
  return h;
}

function runs(): string[] {
  return existsSync(counter) ? readFileSync(counter, 'utf8').split('\n').filter(Boolean) : [];
}

function ranTimes(id: string): number {
  return runs().filter((r) => r === id).length;
}

function setCeilings(h: TestHost, ceilings: Ceiling[]): void {
  const r = h.cli(['config', 'set', 'ceilings', JSON.stringify(ceilings)]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
}

async function submitAndWait(h: TestHost, key: KeyFile, id: string, op: string, args: Record<string, unknown> = {}): Promise<ResultDoc> {
  h.submit(key, id, op, args);
  return h.waitResult(id, ['succeeded', 'failed', 'rejected', 'awaiting_approval']);
}

function spendOf(h: TestHost): SpendLine[] {
  const r = h.cli(['status', '--json']);
  expect(r.status).toBe(0);
  return (JSON.parse(r.stdout) as { spend: SpendLine[] }).spend;
}

/** A `reject` ceiling: the result, the message and the audit entry; nothing ran. */
function expectCeilingRejection(h: TestHost, r: ResultDoc, name: string, spendText: string | RegExp): void {
  expect(r.state).toBe('rejected');
  expect(r.error?.code).toBe('spend_ceiling');
  expect(r.error?.message).toContain(`ceiling "${name}"`);
  if (typeof spendText === 'string') expect(r.error?.message).toContain(spendText);
  else expect(r.error?.message).toMatch(spendText);
  expect(r.started_at).toBeNull();
  expect(ranTimes(r.id)).toBe(0);
  const hits = h.audit('', 'ceiling_hit').filter((a) => a.request_id === r.id);
  expect(hits).toHaveLength(1);
  expect(hits[0]!.message).toContain('spend_ceiling');
  expect(hits[0]!.message).toContain(`ceiling "${name}"`);
}

/** An `ask` ceiling: waiting for a human who sees the ceiling; approving it from the CLI runs it. */
async function expectAskThenApprove(h: TestHost, r: ResultDoc, name: string, spendText: string | RegExp): Promise<ResultDoc> {
  expect(r.state).toBe('awaiting_approval');
  expect(r.error).toBeNull();
  expect(r.approval?.ceiling).toContain(`ceiling "${name}"`);
  if (typeof spendText === 'string') expect(r.approval?.ceiling).toContain(spendText);
  else expect(r.approval?.ceiling).toMatch(spendText);
  expect(ranTimes(r.id)).toBe(0);
  const listed = h.cli(['approvals', 'list']);
  expect(listed.stdout).toContain(r.id);
  expect(listed.stdout).toContain(`  ! Asked because this run would cross a spend limit: ceiling "${name}"`);

  const ok = h.cli(['approvals', 'approve', r.id]);
  expect(ok.stderr).toBe('');
  expect(ok.status).toBe(0);
  const done = await h.waitResult(r.id);
  expect(done.state).toBe('succeeded');
  expect(ranTimes(r.id)).toBe(1);
  expect(done.approval?.decided_by).toBe(ACTOR);
  const approved = h.audit('', 'approved').filter((a) => a.request_id === r.id);
  expect(approved).toHaveLength(1);
  expect(approved[0]!.actor).toBe(ACTOR);
  expect(approved[0]!.message).toContain(`allowed past ceiling "${name}"`);
  return done;
}

describe('max_runs', () => {
  it('reject: set with config set while the daemon runs; the request over it is rejected with spend_ceiling', async () => {
    const h = makeHost();
    const key = h.createKey('runs', 'read');
    const d = await h.startDaemon();
    expect((await submitAndWait(h, key, 'mr-1', 'record')).state).toBe('succeeded');

    // An invalid list is refused as a whole, with the reason; nothing changes.
    const bad = h.cli(['config', 'set', 'ceilings', JSON.stringify([{ name: 'nothing', window_s: 3600 }])]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('a ceiling needs at least one of max_runs, max_cost, max_run_time_s');
    expect(JSON.parse(h.cli(['config', 'get', 'ceilings', '--json']).stdout)).toEqual({ ceilings: [] });

    const reloads = () => d.stderr.split('settings reloaded').length;
    const before = reloads();
    setCeilings(h, [{ name: 'hourly-runs', window_s: 3600, max_runs: 1, action: 'reject' }]);
    await eventually('the daemon to reload its settings', () => (reloads() > before ? true : undefined), 5000);

    expectCeilingRejection(h, await submitAndWait(h, key, 'mr-2', 'record'), 'hourly-runs', '1 of 1 runs used');
    expect(runs()).toEqual(['mr-1']);
  });

  it('ask: the request waits for a human who sees the ceiling; approving it runs it past the ceiling', async () => {
    const h = makeHost([{ name: 'runs-ask', window_s: 3600, max_runs: 1, action: 'ask' }]);
    const key = h.createKey('runs', 'read');
    await h.startDaemon();
    expect((await submitAndWait(h, key, 'ma-1', 'record')).state).toBe('succeeded');
    const waiting = await submitAndWait(h, key, 'ma-2', 'record');
    expect(h.audit('ma-2', 'approval_requested')[0]?.message).toContain('would cross ceiling "runs-ask"');
    await expectAskThenApprove(h, waiting, 'runs-ask', '1 of 1 runs used');
    // The approval was for that one request: the next one asks again, now two runs over.
    const next = await submitAndWait(h, key, 'ma-3', 'record');
    expect(next.state).toBe('awaiting_approval');
    expect(next.approval?.ceiling).toContain('2 of 1 runs used');
  });
});

describe('max_cost (the operation\'s cost)', () => {
  it('reject: a run that would take the cost over the limit is refused; a free operation still runs', async () => {
    const h = makeHost([{ name: 'budget', window_s: 3600, max_cost: 5, action: 'reject' }]);
    const key = h.createKey('cost', 'read');
    await h.startDaemon();
    expect((await submitAndWait(h, key, 'mc-1', 'costly')).state).toBe('succeeded');
    expectCeilingRejection(h, await submitAndWait(h, key, 'mc-2', 'costly'), 'budget', '3 of 5 cost units used, this run costs 3');
    // cost 0: 3 + 0 does not cross 5, so the ceiling is about cost units, not runs.
    expect((await submitAndWait(h, key, 'mc-free', 'record')).state).toBe('succeeded');
    expect(spendOf(h)).toEqual([expect.objectContaining({ key_id: null, spend: { runs: 2, cost: 3, run_time_s: 0 } })]);
  });

  it('ask: the approver sees the cost ceiling; approved, it runs and the spend goes past the limit', async () => {
    const h = makeHost([{ name: 'budget-ask', window_s: 3600, max_cost: 5, action: 'ask' }]);
    const key = h.createKey('cost', 'read');
    await h.startDaemon();
    expect((await submitAndWait(h, key, 'mca-1', 'costly')).state).toBe('succeeded');
    await expectAskThenApprove(h, await submitAndWait(h, key, 'mca-2', 'costly'), 'budget-ask', '3 of 5 cost units used, this run costs 3');
    expect(spendOf(h)[0]?.spend.cost).toBe(6);
  });
});

describe('max_run_time_s', () => {
  it('reject: once the run time in the window reaches the limit, the next request is refused', async () => {
    const h = makeHost([{ name: 'cpu', window_s: 3600, max_run_time_s: 1, action: 'reject' }]);
    const key = h.createKey('time', 'read');
    await h.startDaemon();
    const first = await submitAndWait(h, key, 'mt-1', 'nap', { seconds: '1.2' });
    expect(first.state).toBe('succeeded');
    const used = Math.round(first.duration_ms! / 1000);
    expect(used).toBeGreaterThanOrEqual(1);
    expectCeilingRejection(h, await submitAndWait(h, key, 'mt-2', 'nap', { seconds: '0' }), 'cpu', `${used} of 1 s of run time used`);
  });

  it('ask: the approver sees the run-time ceiling; approving it runs it', async () => {
    const h = makeHost([{ name: 'cpu-ask', window_s: 3600, max_run_time_s: 1, action: 'ask' }]);
    const key = h.createKey('time', 'read');
    await h.startDaemon();
    expect((await submitAndWait(h, key, 'mta-1', 'nap', { seconds: '1.2' })).state).toBe('succeeded');
    await expectAskThenApprove(h, await submitAndWait(h, key, 'mta-2', 'nap', { seconds: '0' }), 'cpu-ask', /\d+ of 1 s of run time used/);
  });
});

describe('several ceilings', () => {
  // Whatever the order of the ceilings, a `reject` ceiling holds even when an `ask` one is crossed too.
  it('a request crossing a reject ceiling is rejected even when an ask ceiling listed first is crossed too', async () => {
    const h = makeHost([
      { name: 'soft', window_s: 3600, max_runs: 1, action: 'ask' },
      { name: 'hard', window_s: 3600, max_runs: 2, action: 'reject' },
    ]);
    const key = h.createKey('both', 'read');
    await h.startDaemon();
    expect((await submitAndWait(h, key, 'sh-1', 'record')).state).toBe('succeeded');
    // Crosses only the soft ceiling: a human lets it through.
    await expectAskThenApprove(h, await submitAndWait(h, key, 'sh-2', 'record'), 'soft', '1 of 1 runs used');
    // Crosses both: the hard ceiling (2 of 2 runs used) must reject it.
    expectCeilingRejection(h, await submitAndWait(h, key, 'sh-3', 'record'), 'hard', '2 of 2 runs used');
  });
});

describe('per key and global', () => {
  it('a per-key ceiling counts each key on its own; a global one counts all keys together', async () => {
    const h = makeHost([
      { name: 'each-key', per: 'key', window_s: 3600, max_runs: 1, action: 'reject' },
      { name: 'everyone', per: 'global', window_s: 3600, max_runs: 3, action: 'reject' },
    ]);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => h.createKey(n, 'read')) as [KeyFile, KeyFile, KeyFile, KeyFile];
    await h.startDaemon();

    expect((await submitAndWait(h, a, 'pk-a1', 'record')).state).toBe('succeeded');
    const a2 = await submitAndWait(h, a, 'pk-a2', 'record');
    expectCeilingRejection(h, a2, 'each-key', '1 of 1 runs used');
    expect(a2.error?.message).toContain(`key ${a.key_id}`);
    // Key b has its own count: its first run is fine although key a is at its limit.
    expect((await submitAndWait(h, b, 'pk-b1', 'record')).state).toBe('succeeded');
    expect((await submitAndWait(h, c, 'pk-c1', 'record')).state).toBe('succeeded');
    // Key d has used nothing, but all keys together have used 3 of 3 (rejections do not count).
    const d1 = await submitAndWait(h, d, 'pk-d1', 'record');
    expectCeilingRejection(h, d1, 'everyone', '3 of 3 runs used');
    expect(d1.error?.message).toContain('all keys');
    expect(runs().sort()).toEqual(['pk-a1', 'pk-b1', 'pk-c1']);

    // status: one line per key for the per-key ceiling, one for the global ceiling.
    const spend = spendOf(h);
    const perKey = Object.fromEntries(spend.filter((s) => s.ceiling.name === 'each-key').map((s) => [s.key_id, s.spend.runs]));
    expect(perKey).toEqual({ [a.key_id]: 1, [b.key_id]: 1, [c.key_id]: 1, [d.key_id]: 0 });
    const global = spend.filter((s) => s.ceiling.name === 'everyone');
    expect(global).toEqual([expect.objectContaining({ key_id: null, spend: expect.objectContaining({ runs: 3 }) })]);
  });

  it('a per-key ceiling with key_id applies to that key only', async () => {
    const h = makeHost();
    const a = h.createKey('a', 'read');
    const b = h.createKey('b', 'read');
    setCeilings(h, [{ name: 'only-a', per: 'key', key_id: a.key_id, window_s: 3600, max_runs: 1 }]);
    await h.startDaemon();
    expect((await submitAndWait(h, a, 'ka-1', 'record')).state).toBe('succeeded');
    expectCeilingRejection(h, await submitAndWait(h, a, 'ka-2', 'record'), 'only-a', '1 of 1 runs used');
    expect((await submitAndWait(h, b, 'kb-1', 'record')).state).toBe('succeeded');
    expect((await submitAndWait(h, b, 'kb-2', 'record')).state).toBe('succeeded');
    expect(spendOf(h)).toEqual([expect.objectContaining({ key_id: a.key_id, spend: expect.objectContaining({ runs: 1 }) })]);
  });
});

describe('spend is computed from the ledger', () => {
  it('survives a daemon restart: the ceiling still holds', async () => {
    const h = makeHost([{ name: 'daily', window_s: 86400, max_runs: 2, max_cost: 100, action: 'reject' }]);
    const key = h.createKey('restart', 'read');
    const d1 = await h.startDaemon();
    expect((await submitAndWait(h, key, 'rs-1', 'record')).state).toBe('succeeded');
    expect((await submitAndWait(h, key, 'rs-2', 'costly')).state).toBe('succeeded');
    await d1.stop();
    expect(spendOf(h)[0]?.spend).toEqual({ runs: 2, cost: 3, run_time_s: 0 });

    await h.startDaemon();
    expectCeilingRejection(h, await submitAndWait(h, key, 'rs-3', 'record'), 'daily', '2 of 2 runs used');
    expect(runs()).toEqual(['rs-1', 'rs-2']);
  });

  // A run cut short by a crash has no known duration: it must not keep counting as running.
  it('a run interrupted by a crash (uncertain) does not count as running for ever', async () => {
    const h = makeHost([{ name: 'time-cap', window_s: 3600, max_run_time_s: 3 }]);
    const key = h.createKey('crash', 'read');
    const d1 = await h.startDaemon();
    h.submit(key, 'cr-1', 'nap', { seconds: '30' });
    await h.waitResult('cr-1', ['running']);
    await eventually('the run to start', () => (ranTimes('cr-1') === 1 ? true : undefined));
    const pid = await h.runPid('cr-1');
    await h.crash(d1); // and its run keeper, which would have seen the run end
    killGroup(pid); // the run is really over: its whole process group is gone
    // Started ten minutes ago, for real, in the ledger (still within the window): counted as running
    // until now, it would be far over the ceiling's 3 s, without the test waiting for the clock.
    const db = new Database(path.join(h.home, 'ledger.sqlite'));
    expect(db.prepare('UPDATE requests SET started_at = ? WHERE id = ?').run(new Date(Date.now() - 600_000).toISOString(), 'cr-1').changes).toBe(1);
    db.close();
    await h.startDaemon();
    expect((await h.waitResult('cr-1', ['uncertain'])).state).toBe('uncertain');
    expect(spendOf(h)[0]!.spend.run_time_s).toBeLessThan(3);
    expect((await submitAndWait(h, key, 'cr-2', 'nap', { seconds: '0' })).state).toBe('succeeded');
  });

  it('counts only runs that started within the rolling window', async () => {
    const h = makeHost([{ name: 'per-minute', window_s: 60, max_runs: 1, max_cost: 3 }]);
    const key = h.createKey('window', 'read');
    const d1 = await h.startDaemon();
    expect((await submitAndWait(h, key, 'w-1', 'costly')).state).toBe('succeeded');
    expectCeilingRejection(h, await submitAndWait(h, key, 'w-2', 'costly'), 'per-minute', '1 of 1 runs used');
    await d1.stop();
    // Make the first run two minutes old, for real, in the ledger: it leaves the window.
    const db = new Database(path.join(h.home, 'ledger.sqlite'));
    const twoMinAgo = new Date(Date.now() - 120_000).toISOString();
    expect(db.prepare('UPDATE requests SET started_at = ?, finished_at = ? WHERE id = ?').run(twoMinAgo, twoMinAgo, 'w-1').changes).toBe(1);
    db.close();
    expect(spendOf(h)[0]?.spend).toEqual({ runs: 0, cost: 0, run_time_s: 0 });
    await h.startDaemon();
    expect((await submitAndWait(h, key, 'w-3', 'costly')).state).toBe('succeeded');
    expect(runs()).toEqual(['w-1', 'w-3']);
  });

  it('is checked again just before a queued request starts: behind a slow run, only max_runs run', async () => {
    const h = makeHost([{ name: 'two-runs', window_s: 3600, max_runs: 2, action: 'reject' }]);
    const key = h.createKey('queue', 'read');
    await h.startDaemon();
    h.submit(key, 'q-slow', 'nap', { seconds: '2' });
    await h.waitResult('q-slow', ['running']);
    // One run used, so each of these passes the check at intake and waits behind the slow one (concurrency 1).
    for (const id of ['q-1', 'q-2', 'q-3']) h.submit(key, id, 'nap', { seconds: '0' });
    for (const id of ['q-1', 'q-2', 'q-3']) expect((await h.waitResult(id, ['queued'])).state).toBe('queued');
    expect(h.result('q-slow')?.state).toBe('running');

    expect((await h.waitResult('q-slow')).state).toBe('succeeded');
    expect((await h.waitResult('q-1')).state).toBe('succeeded');
    for (const id of ['q-2', 'q-3']) {
      const r = await h.waitResult(id);
      expectCeilingRejection(h, r, 'two-runs', '2 of 2 runs used');
      expect(r.error?.message).toContain('checked again before starting');
    }
    expect(runs()).toEqual(['q-slow', 'q-1']);
  });

  it('status --json (and status) show the spend against every ceiling', async () => {
    const h = makeHost([
      { name: 'runs-h', window_s: 3600, max_runs: 10 },
      { name: 'cost-h', window_s: 3600, max_cost: 20, action: 'ask' },
      { name: 'time-per-key', per: 'key', window_s: 600, max_run_time_s: 100 },
    ]);
    const key = h.createKey('status', 'read');
    await h.startDaemon();
    expect((await submitAndWait(h, key, 'st-1', 'costly')).state).toBe('succeeded');
    expect((await submitAndWait(h, key, 'st-2', 'costly')).state).toBe('succeeded');
    const napped = await submitAndWait(h, key, 'st-3', 'nap', { seconds: '1.1' });
    expect(napped.state).toBe('succeeded');
    const runTime = Math.round((h.service((s) => s.requests.get('st-1')!.duration_ms! + s.requests.get('st-2')!.duration_ms!) + napped.duration_ms!) / 1000);
    expect(runTime).toBeGreaterThanOrEqual(1);
    const expected = { runs: 3, cost: 6, run_time_s: runTime };

    const spend = spendOf(h);
    expect(spend.map((s) => [s.ceiling.name, s.key_id])).toEqual([
      ['runs-h', null],
      ['cost-h', null],
      ['time-per-key', key.key_id],
    ]);
    for (const s of spend) expect(s.spend).toEqual(expected);
    expect(spend[1]!.ceiling).toMatchObject({ max_cost: 20, action: 'ask', window_s: 3600 });

    const text = h.cli(['status']).stdout;
    expect(text).toContain('Spend:');
    expect(text).toMatch(/runs-h \(all keys, per 3600 s, reject\): runs \[[#.]+\] 3\/10/);
    expect(text).toMatch(/cost-h \(all keys, per 3600 s, ask\): cost \[[#.]+\] 6\/20/);
    expect(text).toContain(`time-per-key (key ${key.key_id}, per 600 s, reject): run time`);
    expect(text).toContain(`${runTime}/100 s`);
  });
});

describe('a rotated key', () => {
  /** Rotates `key` with the CLI, as a person would; the new key file. */
  function rotate(h: TestHost, key: KeyFile, n: number): KeyFile {
    const out = path.join(h.root, `rotated-${n}.key.json`);
    const r = h.cli(['keys', 'rotate', key.key_id, '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('the new one keeps its spend so far and its spend ceilings');
    return JSON.parse(readFileSync(out, 'utf8')) as KeyFile;
  }
  const ceilingsNow = (h: TestHost) => (JSON.parse(h.cli(['config', 'get', 'ceilings', '--json']).stdout) as { ceilings: Ceiling[] }).ceilings;

  it('keeps a ceiling pinned to it: the new key is stopped where the old one was, and the ceiling names the new key', async () => {
    const h = makeHost();
    const old = h.createKey('agent', 'read');
    const other = h.createKey('other', 'read');
    setCeilings(h, [{ name: 'pinned', per: 'key', key_id: old.key_id, window_s: 3600, max_runs: 2 }]);
    await h.startDaemon();
    expect((await submitAndWait(h, old, 'rp-1', 'record')).state).toBe('succeeded');
    expect((await submitAndWait(h, old, 'rp-2', 'record')).state).toBe('succeeded');
    expectCeilingRejection(h, await submitAndWait(h, old, 'rp-3', 'record'), 'pinned', '2 of 2 runs used');

    const fresh = rotate(h, old, 1);
    expect(ceilingsNow(h)).toEqual([expect.objectContaining({ name: 'pinned', key_id: fresh.key_id })]);
    expect(h.audit('', 'key_rotated')[0]!.message).toContain(`its spend so far counts for ${fresh.key_id}; ceiling "pinned" now name ${fresh.key_id}`);
    expectCeilingRejection(h, await submitAndWait(h, fresh, 'rp-4', 'record'), 'pinned', '2 of 2 runs used');
    // The ceiling is the key's: another key still runs.
    expect((await submitAndWait(h, other, 'rp-5', 'record')).state).toBe('succeeded');
    expect(runs()).toEqual(['rp-1', 'rp-2', 'rp-5']);
    expect(spendOf(h)).toEqual([expect.objectContaining({ key_id: fresh.key_id, spend: { runs: 2, cost: 0, run_time_s: 0 } })]);
  });

  it('keeps its spend against a ceiling of every key, however many times it is rotated', async () => {
    const h = makeHost([{ name: 'each', per: 'key', window_s: 3600, max_cost: 7 }]);
    const first = h.createKey('agent', 'read');
    await h.startDaemon();
    expect((await submitAndWait(h, first, 'rk-1', 'costly')).state).toBe('succeeded');
    const second = rotate(h, first, 1);
    expect((await submitAndWait(h, second, 'rk-2', 'costly')).state).toBe('succeeded');
    const third = rotate(h, second, 2);
    expect(ceilingsNow(h)).toEqual([expect.not.objectContaining({ key_id: expect.anything() })]);
    expectCeilingRejection(h, await submitAndWait(h, third, 'rk-3', 'costly'), 'each', '6 of 7 cost units used, this run costs 3');
    expect(runs()).toEqual(['rk-1', 'rk-2']);
    expect(spendOf(h)).toEqual([expect.objectContaining({ key_id: third.key_id, spend: { runs: 2, cost: 6, run_time_s: 0 } })]);
  });
});
