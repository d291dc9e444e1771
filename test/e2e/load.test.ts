// Load: 10,000 requests queued while the daemon is stopped, then it starts: every one finishes, none is
// lost, each runs exactly once, and the daemon's memory stays bounded (its RSS is sampled from /proc).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { TestHost, eventually } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, countingCommand } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

const N = 10_000;
/** A generous bound: the daemon idles at well under 150 MB; a leak per request would show far above it. */
const RSS_LIMIT_MB = 400;
let host: TestHost;
let key: KeyFile;
let counter: string;

beforeAll(() => {
  host = new TestHost(NO_OPERATIONS, { max_concurrent_runs: 4 });
  counter = path.join(host.root, 'runs.txt');
  // As cheap as /bin/true (one process, a shell built-in), but it counts its own runs.
  host.writeAllowlist(allowlistYaml({ name: 'noop', command: countingCommand(counter), concurrency: 4 }));
  key = host.createKey('load', 'read');
});

afterAll(async () => {
  await host?.cleanup();
});

/** The resident set size of a process, in kB (VmRSS in /proc/<pid>/status); null once it is gone. */
function rssKb(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

function countByState(db: Database.Database): Record<string, number> {
  const rows = db.prepare('SELECT state, count(*) AS n FROM requests GROUP BY state').all() as { state: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

describe('load', () => {
  it(`finishes ${N} requests queued while the daemon was stopped, each once, in bounded memory`, async () => {
    // Signed in advance and written straight into queue/ (tmp/ then rename, as a client does).
    const ids = Array.from({ length: N }, (_, i) => `load-${String(i).padStart(5, '0')}`);
    const t0 = Date.now();
    for (const id of ids) {
      const tmp = path.join(host.spool, 'tmp', `${id}.json.part`);
      writeFileSync(tmp, host.envelope(key, id, 'noop'));
      renameSync(tmp, host.queuePath(`${id}.json`));
    }
    const writeMs = Date.now() - t0;
    expect(readdirSync(path.join(host.spool, 'queue'))).toHaveLength(N);

    const started = Date.now();
    const d = await host.startDaemon();
    const pid = d.proc.pid!;
    let peakKb = rssKb(pid) ?? 0;
    const startKb = peakKb;
    const sampler = setInterval(() => (peakKb = Math.max(peakKb, rssKb(pid) ?? 0)), 100);
    const db = new Database(path.join(host.home, 'ledger.sqlite'), { readonly: true, timeout: 10_000 });
    let lastLog = Date.now();
    let counts: Record<string, number> = {};
    try {
      await eventually(
        `all ${N} requests to finish`,
        () => {
          counts = countByState(db);
          if (Date.now() - lastLog > 30_000) {
            lastLog = Date.now();
            console.log(`load: after ${Math.round((Date.now() - started) / 1000)} s: ${JSON.stringify(counts)}, rss ${Math.round((rssKb(pid) ?? 0) / 1024)} MB`);
          }
          return (counts.succeeded ?? 0) + (counts.failed ?? 0) + (counts.rejected ?? 0) + (counts.uncertain ?? 0) >= N ? true : undefined;
        },
        540_000,
      );
    } finally {
      clearInterval(sampler);
      db.close();
    }
    const elapsedMs = Date.now() - started;
    peakKb = Math.max(peakKb, rssKb(pid) ?? 0);
    const perSecond = N / (elapsedMs / 1000);
    console.log(
      `load: ${N} requests written in ${writeMs} ms; daemon start to last result ${(elapsedMs / 1000).toFixed(1)} s ` +
        `(${perSecond.toFixed(0)} requests/s, concurrency 4); RSS at start ${Math.round(startKb / 1024)} MB, peak ${Math.round(peakKb / 1024)} MB (limit ${RSS_LIMIT_MB} MB)`,
    );

    expect(counts).toEqual({ succeeded: N });
    // Every one has its final result file.
    const notSucceeded = ids.filter((id) => host.result(id)?.state !== 'succeeded');
    expect(notSucceeded).toEqual([]);
    // Each ran exactly once: the operation counts its own runs.
    const runs = readFileSync(counter, 'utf8').trim().split('\n');
    expect(runs).toHaveLength(N);
    expect(new Set(runs).size).toBe(N);
    // None lost or stranded anywhere in the spool.
    expect(readdirSync(path.join(host.spool, 'queue'))).toEqual([]);
    expect(readdirSync(path.join(host.spool, 'quarantine'))).toEqual([]);
    const { host_id } = JSON.parse(readFileSync(path.join(host.home, 'settings.json'), 'utf8')) as { host_id: string };
    const claimed = path.join(host.spool, 'claimed', host_id);
    expect(existsSync(claimed) ? readdirSync(claimed) : []).toEqual([]);
    // Memory stayed bounded, and the daemon is still up.
    expect(d.proc.exitCode).toBeNull();
    expect(peakKb / 1024).toBeLessThan(RSS_LIMIT_MB);
  }, 600_000);
});
