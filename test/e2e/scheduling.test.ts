// Scheduling: per-operation concurrency and the global limit hold; spools take turns; the rescan finds
// requests without any file event; everything the daemon does is in its log file.
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { GO_ARG, allowlistYaml, type OpSpec } from '../helpers/allowlists';
import type { ResultDoc } from '../../shared/protocol/types';

let host: TestHost | null = null;

afterEach(async () => {
  await host?.cleanup();
  host = null;
});

const sleeper = (name: string, concurrency: number): OpSpec => ({ name, command: ['sleep', '0.4'], concurrency });

/** The most runs that overlapped in time, from their results' start and finish times. */
function maxOverlap(results: ResultDoc[]): number {
  const events = results.flatMap((r) => [
    { t: Date.parse(r.started_at!), d: 1 },
    { t: Date.parse(r.finished_at!), d: -1 },
  ]);
  events.sort((a, b) => a.t - b.t || a.d - b.d);
  let cur = 0;
  let max = 0;
  for (const e of events) max = Math.max(max, (cur += e.d));
  return max;
}

describe('scheduling', () => {
  it('runs at most `concurrency` of one operation at once, and at most max_concurrent_runs overall', async () => {
    host = new TestHost(allowlistYaml(sleeper('one-at-a-time', 1), sleeper('two-at-a-time', 2), sleeper('many', 8)), { max_concurrent_runs: 3 });
    const key = host.createKey('sched', 'read');
    await host.startDaemon();
    for (let i = 0; i < 3; i++) host.submit(key, `one-${i}`, 'one-at-a-time');
    for (let i = 0; i < 4; i++) host.submit(key, `two-${i}`, 'two-at-a-time');
    for (let i = 0; i < 6; i++) host.submit(key, `many-${i}`, 'many');
    const ones = await Promise.all([0, 1, 2].map((i) => host!.waitResult(`one-${i}`)));
    const twos = await Promise.all([0, 1, 2, 3].map((i) => host!.waitResult(`two-${i}`)));
    const many = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => host!.waitResult(`many-${i}`)));
    for (const r of [...ones, ...twos, ...many]) expect(r.state).toBe('succeeded');
    expect(maxOverlap(ones)).toBe(1);
    expect(maxOverlap(twos)).toBeLessThanOrEqual(2);
    expect(maxOverlap([...ones, ...twos, ...many])).toBeLessThanOrEqual(3);
    expect(maxOverlap(many)).toBeGreaterThan(1); // it does run things in parallel
  });

  it("takes each spool's requests in turn: a long queue in one spool never holds another's back", async () => {
    host = new TestHost(allowlistYaml({ name: 'gated', command: ['/bin/sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.05; done', '{go}'], args: GO_ARG, concurrency: 1 }));
    const work = host.addSpool('work');
    const busy = host.createKey('busy', 'read');
    const other = host.createKey('other', 'read', null, 'work');
    await host.startDaemon({}, { spool: null }); // every spool of the home
    const go = (id: string) => path.join(host!.root, `go-${id}`);
    for (const id of ['a1', 'a2', 'a3']) host.submit(busy, id, 'gated', { go: go(id) });
    await host.waitResult('a1', ['running']);
    await host.waitResult('a3', ['queued']);
    host.submit(other, 'b1', 'gated', { go: go('b1') }, {}, work);
    await host.waitResult('b1', ['queued'], undefined, work);
    writeFileSync(go('a1'), '');
    // a2 and a3 were queued before b1; yet the next to start is the other spool's.
    const next = await eventually('the next run to start', () => (host!.result('b1', work)?.state === 'running' ? 'b1' : host!.result('a2')?.state === 'running' ? 'a2' : undefined));
    expect(next).toBe('b1');
    for (const id of ['b1', 'a2', 'a3']) writeFileSync(go(id), '');
    expect((await host.waitResult('b1', undefined, undefined, work)).state).toBe('succeeded');
    for (const id of ['a2', 'a3']) expect((await host.waitResult(id)).state).toBe('succeeded');
  });

  it('finds requests by rescanning when no file events arrive', async () => {
    host = new TestHost(allowlistYaml({ name: 'ok', command: ['true'] }), { file_events: false, rescan_interval_ms: 300 });
    const key = host.createKey('rescan', 'read');
    await host.startDaemon();
    host.submit(key, 'rescan-1', 'ok');
    expect((await host.waitResult('rescan-1')).state).toBe('succeeded');
    // The run's last line is logged once its result is out: waited for, not raced.
    const log = await eventually('the run\'s end in the log file', () => {
      const text = readFileSync(path.join(host!.home, 'logs', 'dumbwaiter.log'), 'utf8');
      return text.includes('rescan-1: succeeded') ? text : undefined;
    });
    expect(log).toContain('(daemon)');
    expect(log).toContain('rescan-1: started ok');
  });
});
