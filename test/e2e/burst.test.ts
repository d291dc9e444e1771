// A burst of 500 requests written at once: every one is claimed, run exactly once and answered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, countingCommand } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

const N = 500;
let host: TestHost;
let key: KeyFile;
let counter: string;

beforeAll(async () => {
  host = new TestHost(NO_OPERATIONS, { max_concurrent_runs: 4 });
  counter = path.join(host.root, 'runs.txt');
  host.writeAllowlist(allowlistYaml({ name: 'tick', command: countingCommand(counter), concurrency: 4 }));
  key = host.createKey('burst', 'read');
});

afterAll(async () => {
  await host.cleanup();
});

describe('a burst of requests', () => {
  it(`answers all ${N}, runs each exactly once, and loses none`, async () => {
    // Written before the daemon starts and while it runs, to cover the start-up scan and the watcher.
    for (let i = 0; i < N / 2; i++) host.submit(key, `b-${i}`, 'tick');
    await host.startDaemon();
    for (let i = N / 2; i < N; i++) host.submit(key, `b-${i}`, 'tick');
    await eventually('every result to be final', () => {
      const done = readdirSync(path.join(host.spool, 'results')).filter((n) => n.endsWith('.json'));
      if (done.length < N) return undefined;
      return done.every((n) => host.result(n.slice(0, -5))?.state === 'succeeded') ? true : undefined;
    }, 120_000);
    const runs = readFileSync(counter, 'utf8').trim().split('\n');
    expect(runs).toHaveLength(N);
    expect(new Set(runs).size).toBe(N);
    expect(readdirSync(path.join(host.spool, 'queue'))).toEqual([]);
    const claimed = readdirSync(path.join(host.spool, 'claimed'));
    expect(claimed).toHaveLength(1); // this host's own folder, now empty
    expect(readdirSync(path.join(host.spool, 'claimed', claimed[0]!))).toEqual([]);
  });
});
