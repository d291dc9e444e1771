// Output is bounded where it is produced. Sandbox A (spool `work`) steers an operation allowed 64 MiB
// of output into printing 64 MiB of NUL bytes on stdout and on stderr (each such byte is 6 characters
// of JSON), while sandbox B's run (spool `default`) is in progress, against the real daemon and its
// spawner: B's run ends as it would have; A's result carries the last OUTPUT_EXCERPT_BYTES of each
// stream, the whole output is in the log the result signs, and `dw wait` (the spool's own dw.cjs and
// dw.py) accepts it; the host (the daemon and its spawner) holds no more than HOST_BOUND meanwhile; and A
// replacing its result again and again costs the repair no more than that either.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GATED_OP, TestHost, eventually, sandboxWithClients, type DaemonProcess } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml } from '../helpers/allowlists';
import { OUTPUT_EXCERPT_BYTES, type KeyFile } from '../../shared/protocol/types';
import { MAX_RESULT_BYTES } from '../../shared/client/spoolFiles';

const MIB = 1024 * 1024;
const OUTPUT = 64 * MIB;
/** What the daemon and its spawner may hold together at their peak (their resident memory): some
 *  155 MiB with tiny excerpts, so this leaves room for the excerpts, not for the output (128 MiB here;
 *  docs/BENCHMARKS.md, "Huge output"). */
const HOST_BOUND = 300 * MIB;
/** Results A replaces in a row (the repair writes an id back by file events up to BACKOFF_AFTER times a minute). */
const REPLACEMENTS = 3;

let host: TestHost;
let work: string;
let a: KeyFile;
let b: KeyFile;
let daemon: DaemonProcess;
let sandbox: string;

beforeEach(async () => {
  host = new TestHost(NO_OPERATIONS, { rescan_interval_ms: 50 });
  host.writeAllowlist(
    allowlistYaml({ name: 'flood', command: ['/bin/sh', '-c', `head -c ${OUTPUT} /dev/zero; head -c ${OUTPUT} /dev/zero >&2`], max_output_bytes: OUTPUT, spools: ['work'] }, GATED_OP),
  );
  work = host.addSpool('work');
  a = host.createKeyWithCli('a', 'work');
  b = host.createKeyWithCli('b', 'default');
  daemon = await host.startDaemon({}, { spool: null });
  sandbox = sandboxWithClients(work, a).dir;
});

afterEach(async () => {
  await host.cleanup();
  rmSync(sandbox, { recursive: true, force: true });
});

/** A line of /proc/<pid>/status in bytes (kB there), or 0 once the process is gone. */
function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The daemon's child processes (its spawner): runs are the spawner's children, not counted. */
function childrenOf(pid: number): number[] {
  const kids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) kids.push(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return kids;
}

/** The host's memory: the sum of the resident sizes of the daemon and its spawner, sampled every 20 ms,
 *  and the sum of their high-water marks (VmHWM: it counts what a sample missed) at stop(). */
function sampleHost(pid: number): { stop(): { sampled: number; peak: number } } {
  let sampled = 0;
  const procs = new Set<number>([pid]);
  const sample = () => {
    for (const k of childrenOf(pid)) procs.add(k);
    sampled = Math.max(sampled, [...procs].reduce((sum, p) => sum + statusBytes(p, 'VmRSS'), 0));
  };
  sample();
  const timer = setInterval(sample, 20);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { sampled, peak: [...procs].reduce((sum, p) => sum + statusBytes(p, 'VmHWM'), 0) };
    },
  };
}

/** `dw wait` of the client the host placed in A's spool: dw.cjs, or dw.py. */
function dwWait(client: 'dw.cjs' | 'dw.py', id: string) {
  const program = client === 'dw.cjs' ? process.execPath : 'python3';
  const r = spawnSync(program, [path.join(sandbox, client), 'wait', id], {
    cwd: sandbox,
    env: { PATH: process.env.PATH!, HOME: sandbox, DUMBWAITER_SPOOL: work, DUMBWAITER_KEY_FILE: path.join(sandbox, 'key.json') },
    maxBuffer: 64 * MIB,
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

describe("64 MiB of NUL bytes on stdout and stderr from sandbox A's run", () => {
  it("leaves B's run in progress to end as it would have, gives A a result dw wait accepts, and keeps the host's memory bounded", async () => {
    const go = path.join(host.root, 'go-b');
    host.submit(b, 'b-run', 'gated', { go });
    await host.waitResult('b-run', ['running']);
    const memory = sampleHost(daemon.proc.pid!);

    host.submit(a, 'a-flood', 'flood', {}, {}, work);
    const r = await host.waitResult('a-flood', ['succeeded', 'failed', 'uncertain'], 120_000, work);
    const during = memory.stop();
    writeFileSync(go, '');
    const rb = await host.waitResult('b-run', ['succeeded', 'failed', 'uncertain']);
    expect(rb.state, JSON.stringify(rb.error)).toBe('succeeded');
    expect(rb.stdout).toBe('started\ndone\n');

    expect(r).toMatchObject({ state: 'succeeded', exit_code: 0, stdout_truncated: true, stderr_truncated: true });
    expect(r.stdout).toBe('\0'.repeat(OUTPUT_EXCERPT_BYTES));
    expect(r.stderr).toBe('\0'.repeat(OUTPUT_EXCERPT_BYTES));
    const resultFile = path.join(work, 'results', 'a-flood.json');
    const hostText = readFileSync(resultFile);
    expect(hostText.length).toBeLessThan(MAX_RESULT_BYTES);
    // The whole output, to the operation's limit, is in the log the result signs.
    const log = readFileSync(path.join(work, 'results', 'a-flood.log'));
    expect(r.log_bytes).toBe(log.length);
    expect(r.log_sha256).toBe(createHash('sha256').update(log).digest('hex'));
    expect(log.subarray(0, OUTPUT).equals(Buffer.alloc(OUTPUT))).toBe(true);
    expect(log.subarray(OUTPUT).toString()).toMatch(/^\n\[dumbwaiter: output limit of 67108864 bytes reached; the rest is not logged\]\n$/);

    for (const client of ['dw.cjs', 'dw.py'] as const) {
      const waited = dwWait(client, 'a-flood');
      expect(waited.status, `${client}: ${waited.stderr}`).toBe(0);
      expect(waited.stdout.equals(Buffer.alloc(OUTPUT_EXCERPT_BYTES)), client).toBe(true);
      expect(waited.stderr, client).not.toMatch(/still|ignored/);
    }

    console.log(`host memory with ${OUTPUT / MIB} MiB on each stream: sampled ${(during.sampled / MIB).toFixed(0)} MiB, peak (VmHWM) ${(during.peak / MIB).toFixed(0)} MiB; result ${hostText.length} bytes`);
    expect(during.sampled).toBeLessThan(HOST_BOUND);
    expect(during.peak).toBeLessThan(HOST_BOUND);

    // A replaces its result with one of the host's size, one byte changed (read in full to compare),
    // again and again: each is put back, and the host's memory stays as bounded.
    const repairs = sampleHost(daemon.proc.pid!);
    const times: number[] = [];
    for (let i = 0; i < REPLACEMENTS; i++) {
      const forged = Buffer.from(hostText);
      forged[forged.length - 3] = 0x20;
      const tmp = path.join(work, 'tmp', `forged-${i}`);
      writeFileSync(tmp, forged);
      const t0 = Date.now();
      renameSync(tmp, resultFile);
      await eventually("the host's result back", () => (existsSync(resultFile) && readFileSync(resultFile).equals(hostText) ? true : undefined), 30_000);
      times.push(Date.now() - t0);
    }
    const during2 = repairs.stop();
    console.log(`repairs of a ${hostText.length}-byte result: ${times.join(', ')} ms; host memory sampled ${(during2.sampled / MIB).toFixed(0)} MiB`);
    expect(during2.sampled).toBeLessThan(HOST_BOUND);
    expect(Math.max(...times)).toBeLessThan(5_000);
    expect(daemon.proc.exitCode).toBeNull();
  }, 180_000);
});
