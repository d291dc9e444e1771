// A queue flood without a key: junk written into queue/ as fast as this process can (badly named
// files, validly named garbage, folders, symlinks, FIFOs), named to sort before every real request.
// Measured: the daemon's memory while it drains the flood (sampled RSS, and its peak), how long a
// valid request written in the middle of the flood takes to be answered, and how long the whole
// flood takes to drain (every entry moved out of queue/).
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { type BenchHost, ResultWatcher, memoryOf } from '../lib/host';
import { sleep } from '../lib/stats';

export interface FloodRun {
  junk: number;
  /** How long writing the junk took. */
  write_ms: number;
  kinds: Record<string, number>;
  /** Submit to final result of the valid request written half-way through the flood. */
  valid_during_ms: number;
  /** First junk write to an empty queue/. */
  drain_ms: number;
  /** Sampled VmRSS while it drained, and VmHWM (the peak since the daemon started). */
  max_rss_mib: number;
  peak_rss_mib: number;
  /** RSS before the flood, for comparison. */
  before_rss_mib: number;
  /** A valid request after the flood drained: answered as usual. */
  valid_after_ms: number;
}

/** Files per FIFO-making mkfifo call. */
const MKFIFO_BATCH = 500;

export async function measureFlood(host: BenchHost, n: number, daemonPid: number): Promise<FloodRun> {
  const queue = path.join(host.spool, 'queue');
  const outside = path.join(host.t.root, 'outside');
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'target'), 'a file a symlink points to');
  const watcher = new ResultWatcher(host.results);
  let maxRss = 0;
  const sampler = setInterval(() => (maxRss = Math.max(maxRss, memoryOf(daemonPid).rss_mib)), 100);
  const kinds: Record<string, number> = { bad_name: 0, garbage: 0, folder: 0, symlink: 0, fifo: 0 };
  try {
    const before = memoryOf(daemonPid).rss_mib;
    const validId = host.nextId('valid');
    let validDuring: Promise<number> | null = null;
    const t0 = performance.now();
    const fifos: string[] = [];
    for (let i = 0; i < n; i++) {
      // "a-..." sorts before the valid ids: in name order, every junk entry comes first.
      const tag = String(i).padStart(7, '0');
      const kind = i % 20;
      if (kind < 12) {
        writeFileSync(path.join(queue, `a-junk ${tag}.txt`), 'junk');
        kinds.bad_name!++;
      } else if (kind < 18) {
        writeFileSync(path.join(queue, `a-${tag}.json`), '{"v":1,"key_id":"nobody","payload":"{}","mac":"x"}');
        kinds.garbage!++;
      } else if (kind === 18 && i % 40 === 18) {
        mkdirSync(path.join(queue, `a-dir-${tag}.json`));
        kinds.folder!++;
      } else if (kind === 18) {
        symlinkSync(path.join(outside, 'target'), path.join(queue, `a-link-${tag}.json`));
        kinds.symlink!++;
      } else {
        fifos.push(path.join(queue, `a-fifo-${tag}.json`));
        kinds.fifo!++;
        if (fifos.length >= MKFIFO_BATCH) spawnSync('mkfifo', fifos.splice(0));
      }
      if (i === Math.floor(n / 2)) {
        const seen = watcher.waitFinal(validId, 10 * 60_000);
        const at = performance.now();
        host.submitFast(validId);
        validDuring = seen.then((s) => s.at - at);
      }
    }
    if (fifos.length) spawnSync('mkfifo', fifos.splice(0));
    const writeMs = performance.now() - t0;
    const deadline = Date.now() + 30 * 60_000;
    while (readdirSync(queue).length > 0) {
      if (Date.now() > deadline) throw new Error('the flood did not drain within 30 minutes');
      await sleep(200);
    }
    const drainMs = performance.now() - t0;
    const duringMs = await validDuring!;
    const afterId = host.nextId('valid');
    const seen = watcher.waitFinal(afterId);
    const at = performance.now();
    host.submitFast(afterId);
    const afterMs = (await seen).at - at;
    return {
      junk: n,
      write_ms: writeMs,
      kinds,
      valid_during_ms: duringMs,
      drain_ms: drainMs,
      max_rss_mib: Math.max(maxRss, memoryOf(daemonPid).rss_mib),
      peak_rss_mib: memoryOf(daemonPid).peak_rss_mib,
      before_rss_mib: before,
      valid_after_ms: afterMs,
    };
  } finally {
    clearInterval(sampler);
    watcher.close();
  }
}
