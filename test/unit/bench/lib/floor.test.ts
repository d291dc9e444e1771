// The floor host the benchmark measures the daemon against: for each way it starts runs, a signed
// request is answered with its result only after the durable record of its start and of its end, and
// its claimed file is gone, as the daemon leaves it.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { FloorHost, pythonHere, type FloorRuns } from '../../../../bench/lib/floor';
import { ResultWatcher } from '../../../../bench/lib/host';

const python = pythonHere();

describe.each<FloorRuns>(['in-process', 'spawner', 'python'])('the floor host, runs started %s', (runs) => {
  it.skipIf(runs === 'python' && !python)('answers a request after recording its start and end durably, and removes its claimed file and its spool when closed', async () => {
    const host = new FloorHost(runs);
    const watcher = new ResultWatcher(host.results);
    try {
      await host.ready();
      const id = host.nextId();
      const seen = watcher.waitFinal(id);
      host.submitFast(id);
      const { doc } = await seen;
      expect(doc.state).toBe('succeeded');
      expect(doc.duration_ms).toBeGreaterThanOrEqual(0);
      expect(readFileSync(path.join(host.spool, 'journal'), 'utf8')).toBe(`running ${id}\nfinished ${id} 0\n`);
      expect(readdirSync(path.join(host.spool, 'claimed'))).toEqual([]);
    } finally {
      watcher.close();
      await host.close();
    }
    expect(existsSync(host.spool)).toBe(false);
  });
});
