// Scheduling: per-operation concurrency and the global limit hold; the rescan finds requests without
// any file event; everything the daemon does is in its log file.
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost } from '../helpers/host';
import type { ResultDoc } from '../../shared/protocol/types';

let host: TestHost | null = null;

afterEach(async () => {
  await host?.cleanup();
  host = null;
});

const sleeper = (name: string, concurrency: number) => `
  - name: ${name}
    command: [sleep, "0.4"]
    scope: read
    approval: never
    concurrency: ${concurrency}
`;

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
    host = new TestHost(`version: 1\noperations:${sleeper('one-at-a-time', 1)}${sleeper('two-at-a-time', 2)}${sleeper('many', 8)}`, {
      max_concurrent_runs: 3,
    });
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

  it('finds requests by rescanning when no file events arrive', async () => {
    host = new TestHost(`version: 1\noperations:\n  - {name: ok, command: ["true"], scope: read, approval: never}\n`, {
      file_events: false,
      rescan_interval_ms: 300,
    });
    const key = host.createKey('rescan', 'read');
    await host.startDaemon();
    host.submit(key, 'rescan-1', 'ok');
    expect((await host.waitResult('rescan-1')).state).toBe('succeeded');
    const log = readFileSync(path.join(host.home, 'logs', 'dumbwaiter.log'), 'utf8');
    expect(log).toContain('(daemon)');
    expect(log).toContain('rescan-1: started ok');
    expect(log).toContain('rescan-1: succeeded');
  });
});
