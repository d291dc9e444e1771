// Crash safety with the real daemon killed by SIGKILL: an interrupted run becomes uncertain and is never
// re-run; queued and claimed work continues after the restart; a human settles the uncertain run.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { TestHost, eventually } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, countingCommand } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let counter: string;

beforeEach(() => {
  host = new TestHost(NO_OPERATIONS);
  counter = path.join(host.root, 'runs.txt');
  // Each run appends its request id to runs.txt, so a second run of anything would show.
  const command = countingCommand(counter, 'sleep "$1"', '{seconds}');
  host.writeAllowlist(allowlistYaml({ name: 'record', command, args: { seconds: { type: 'integer', min: 0, max: 30 } }, concurrency: 4 }));
  key = host.createKey('crash', 'read');
});

afterEach(async () => {
  await host.cleanup();
});

/** This host's own claimed folder: claimed/<host_id>/. */
function claimedDir(): string {
  const { host_id } = JSON.parse(readFileSync(path.join(host.home, 'settings.json'), 'utf8')) as { host_id: string };
  return path.join(host.spool, 'claimed', host_id);
}

function runs(): string[] {
  return existsSync(counter) ? readFileSync(counter, 'utf8').trim().split('\n').filter(Boolean) : [];
}

describe('a host killed with SIGKILL', () => {
  it('marks the interrupted run uncertain, never re-runs it, and runs what was queued', async () => {
    const d1 = await host.startDaemon();
    host.submit(key, 'long-1', 'record', { seconds: 3 });
    await host.waitResult('long-1', ['running']);
    await eventually('the run to start', () => (runs().includes('long-1') ? true : undefined));
    await host.runPid('long-1'); // recorded: the orphan can be found and waited for
    await host.crash(d1); // the daemon and its run keeper: the keeper alone would have kept the run

    // Work that arrives while the host is down waits in the queue.
    host.submit(key, 'after-1', 'record', { seconds: 0 });
    expect(host.result('long-1')?.state).toBe('running');

    const d2 = await host.startDaemon();
    const r = await host.waitResult('long-1', ['uncertain']);
    expect(r.error?.code).toBe('interrupted');
    expect(r.error?.message).toContain('dumbwaiter resolve long-1');
    // after-1 ran: runs of one operation start in claim order, so a long-1 to run again would have started first.
    expect((await host.waitResult('after-1')).state).toBe('succeeded');
    await host.runGone('long-1'); // the orphaned first run ends on its own; nothing may start it again
    expect(runs().filter((x) => x === 'long-1')).toHaveLength(1);
    expect(runs().filter((x) => x === 'after-1')).toHaveLength(1);
    expect(host.audit('long-1', 'started')).toHaveLength(1);
    expect(host.result('long-1')?.state).toBe('uncertain');
    expect(host.audit('long-1', 'uncertain')).toHaveLength(1);

    // A restart of the restarted daemon changes nothing about it either: a run submitted after the
    // restart has run (so long-1 would have started before it).
    await d2.stop();
    await host.startDaemon();
    expect((await host.sentinel(key, 'record', { seconds: 0 })).state).toBe('succeeded');
    expect(host.result('long-1')?.state).toBe('uncertain');
    expect(runs().filter((x) => x === 'long-1')).toHaveLength(1);
    expect(host.audit('long-1', 'started')).toHaveLength(1);

    // A human settles it, while the daemon runs; the result file says so.
    const res = host.cli(['resolve', 'long-1', '--failed', '--note', 'checked by hand: it did not finish']);
    expect(res.status).toBe(0);
    const settled = await host.waitResult('long-1', ['failed']);
    expect(settled).toMatchObject({ state: 'failed', resolved_by: 'human', note: 'checked by hand: it did not finish' });
    expect(host.audit('long-1', 'resolved')[0]?.actor).toMatch(/^cli:/);
    // Only uncertain runs can be resolved.
    const again = host.cli(['resolve', 'long-1', '--succeeded']);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('not uncertain');
  });

  it('processes a file left in claimed/ by a crash, and does not run a recorded one twice', async () => {
    // As if the host died right after claiming (before its ledger insert): the file is in claimed/.
    mkdirSync(claimedDir(), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(claimedDir(), 'left-1.json'), host.envelope(key, 'left-1', 'record', { seconds: 0 }));
    const d1 = await host.startDaemon();
    expect((await host.waitResult('left-1')).state).toBe('succeeded');
    expect(existsSync(path.join(claimedDir(), 'left-1.json'))).toBe(false);

    // As if it died after the ledger insert but before dropping the claimed file: same bytes again.
    host.submit(key, 'left-2', 'record', { seconds: 0 });
    await host.waitResult('left-2');
    await d1.stop();
    // The same payload bytes (so the same MAC) are what such a crash leaves behind.
    const row = host.service((s) => s.requests.get('left-2'))!;
    const payload = JSON.stringify({ id: 'left-2', op: 'record', args: { seconds: 0 }, created_at: row.created_at });
    writeFileSync(path.join(claimedDir(), 'left-2.json'), host.envelope(key, 'left-2', 'record', {}, { payload }));
    await host.startDaemon();
    await eventually('the leftover to be dropped', () => (existsSync(path.join(claimedDir(), 'left-2.json')) ? undefined : true));
    expect(runs().filter((x) => x === 'left-2')).toHaveLength(1);
    expect(host.audit('left-2', 'claim_recovered')).toHaveLength(1);
  });

  it('rewrites a result file that a crash left behind the ledger', async () => {
    const d1 = await host.startDaemon();
    host.submit(key, 'sync-1', 'record', { seconds: 0 });
    const done = await host.waitResult('sync-1');
    await d1.stop();
    // As if the host died after committing the final state but before replacing the result file.
    const file = path.join(host.spool, 'results', 'sync-1.json');
    writeFileSync(file, JSON.stringify({ ...done, state: 'running', exit_code: null }));
    const db = new Database(path.join(host.home, 'ledger.sqlite'));
    db.prepare('UPDATE requests SET synced = 0 WHERE id = ?').run('sync-1');
    db.close();
    await host.startDaemon();
    const fixed = await host.waitResult('sync-1', ['succeeded']);
    expect(fixed.exit_code).toBe(0);
  });

  it('rewrites final results a power cut took back though the ledger has them: the host\'s older file, or none', async () => {
    // Result files are written without fsyncs (the ledger, committed first, is the durable record): a
    // power cut can leave the host's own earlier version in place, or no file, with the row marked synced.
    const d1 = await host.startDaemon();
    host.submit(key, 'cut-older', 'record', { seconds: 1 });
    host.submit(key, 'cut-gone', 'record', { seconds: 0 });
    await host.waitResult('cut-older', ['running']);
    const file = (id: string) => path.join(host.spool, 'results', `${id}.json`);
    const runningText = readFileSync(file('cut-older'), 'utf8'); // signed by the host, for this request
    await host.waitResult('cut-older');
    await host.waitResult('cut-gone');
    await eventually('both rows marked synced', () => (host.service((s) => [s.requests.get('cut-older')?.synced, s.requests.get('cut-gone')?.synced]).join() === '1,1' ? true : undefined));
    await d1.kill9();
    writeFileSync(file('cut-older'), runningText);
    rmSync(file('cut-gone'));

    await host.startDaemon();
    expect(await host.waitResult('cut-older', ['succeeded'])).toMatchObject({ exit_code: 0 });
    expect(await host.waitResult('cut-gone', ['succeeded'])).toMatchObject({ exit_code: 0 });
    expect(runs().filter((x) => x.startsWith('cut-')).sort()).toEqual(['cut-gone', 'cut-older']); // each ran once
  });
});
