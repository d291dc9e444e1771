// Where the time goes: `node --import tsx bench/profile.ts --mode MODE [options]`. Not part of
// `npm run bench`: the investigation tool behind the findings in docs/BENCHMARKS.md. Nothing here
// edits the daemon; the what-ifs change how it is run (bench/whatif/).
//
// --mode requests (default): for each --variant, a fresh host and daemon, --requests sequential
//   /bin/true requests (each after a bare spawn, as in the benchmark), then a --burst, in --rounds
//   rounds where the variants take turns (so the machine's noise falls on all alike); with --cpu-prof
//   the daemon's main thread is split per request by what it was doing, with --strace its system
//   calls are counted per request. Variants (combine with +):
//     default    the daemon as it is (fsyncs on, the product's bundle: bin/dumbwaiter.js)
//     no-fsync   every fsync a no-op and the ledger at synchronous=OFF: what durability costs
// --mode fork: what spawn('/bin/true') costs a Node process as its RSS grows.
// --mode floor: the least any host keeping our guarantees does for a request (lib/floorHost.mjs:
//   file event, claim, HMAC, fdatasync, the run with piped output, fdatasync, result renamed), in plain
//   Node, the run in-process, through a Node spawner process and (with python3) through a Python one,
//   which starts children with vfork; and the daemon as it is: --requests of each, in turns with the
//   bare spawn the benchmark's ratio is taken against.
// --mode start: --results results (as in the benchmark), then daemon starts, timed, and one under
//   --cpu-prof split into module loading and the boot's own steps.
// --mode audit: --entries audit entries, then each benchmark query through the real searchAudit and
//   through the query as it was before commit f81d037 (every full-text match collected first, no
//   index on kind), with that query's plans.
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { BenchHost, killLeftoverDaemons, memoryOf, ResultWatcher, type RequestTarget } from './lib/host';
import { hostCpuMs } from './lib/procTree';
import { FLOOR_RUNS, FloorHost, pythonHere } from './lib/floor';
import { ms, sleep, summarize } from './lib/stats';
import { measureLatency, Spawner } from './sections/latency';
import { measureThroughput } from './sections/throughput';
import { auditQueries, buildAuditLedger, timeQueries } from './sections/audit';
import { makeHistory } from './sections/startup';
import { CATEGORIES, profileBreakdown, profileSteps, type Category } from './lib/cpuprofile';
import { Host } from '../main/core/host/host';
import { pinDir, unpin } from '../main/core/spool/pinned';
import { ftsQuery, type AuditQuery } from '../main/core/ledger/audit';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'requests' },
    requests: { type: 'string', default: '200' },
    burst: { type: 'string', default: '1000' },
    variant: { type: 'string', default: 'default,no-fsync' },
    'cpu-prof': { type: 'boolean', default: false },
    strace: { type: 'boolean', default: false },
    results: { type: 'string', default: '100000' },
    entries: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '4' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  // The comment at the top of this file is the help.
  const text = readFileSync(import.meta.filename, 'utf8').split('\n');
  console.log(text.slice(0, text.findIndex((l) => !l.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}
const WHATIF = path.join(import.meta.dirname, 'whatif');

process.on('SIGINT', () => {
  killLeftoverDaemons();
  process.exit(130);
});

function say(s: string): void {
  process.stderr.write(`[profile] ${s}\n`);
}

/** How to start the daemon for a variant: its node flags. */
function launch(variant: string): { nodeArgs: string[]; script?: string; env?: NodeJS.ProcessEnv } {
  return { nodeArgs: variant.split('+').filter((v) => v !== 'default').flatMap((v) => ['--import', path.join(WHATIF, `${v}.mjs`)]) };
}

/** Starts the daemon (optionally under --cpu-prof), runs `work`, stops it; returns the main thread's profile file. */
async function withDaemon(host: BenchHost, variant: string, prof: boolean, work: (pid: number) => Promise<void>): Promise<{ profile: string | null; skipMs: number; cleanup: () => void }> {
  const profDir = prof ? mkdtempSync(path.join(os.tmpdir(), 'dw-prof-')) : null;
  const l = launch(variant);
  const d = host.startDaemon([...l.nodeArgs, ...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=200'] : [])], l.script, l.env);
  const cleanup = () => profDir && rmSync(profDir, { recursive: true, force: true });
  let skipMs: number;
  try {
    const ready = await d.ready();
    await sleep(500);
    skipMs = ready - d.spawnedAt + 500;
    await work(d.pid);
  } catch (e) {
    await d.stop();
    cleanup();
    throw e;
  }
  await d.stop();
  if (!profDir) return { profile: null, skipMs, cleanup };
  // The main thread's profile is the largest (a worker thread writes one of its own).
  const files = readdirSync(profDir).map((f) => path.join(profDir, f));
  return { profile: files.sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0]!, skipMs, cleanup };
}

async function straceCount(pid: number, work: () => Promise<number>): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-strace-'));
  const out = path.join(dir, 'strace.txt');
  const st = spawn('strace', ['-f', '-c', '-w', '-p', String(pid), '-o', out], { stdio: 'ignore' });
  await sleep(1500); // attached to every thread
  const n = await work();
  st.kill('SIGINT');
  await new Promise((r) => st.on('exit', r));
  const lines = readFileSync(out, 'utf8').split('\n').filter((l) => /^\s*\d/.test(l));
  rmSync(dir, { recursive: true, force: true });
  return lines
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 5 && !['futex', 'epoll_pwait', 'total'].includes(f[f.length - 1]!))
    .map((f) => ({ name: f[f.length - 1]!, calls: Number(f[3]), secs: Number(f[1]) }))
    .sort((a, b) => b.calls - a.calls)
    .slice(0, 14)
    .map((r) => `    ${r.name.padEnd(14)} ${(r.calls / n).toFixed(1).padStart(6)} calls/request  (${((r.secs * 1000) / n).toFixed(2)} ms/request of wall time under strace)`)
    .join('\n');
}

interface VariantAcc {
  host: BenchHost;
  lat: number[];
  bare: number[];
  seqCpu: number;
  seqN: number;
  rss: number;
  burstN: number;
  burstMs: number;
  burstUser: number;
  burstSys: number;
  seqProf: Record<Category, number>;
  burstProf: Record<Category, number>;
}

const zero = () => Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;

function addProfile(into: Record<Category, number>, file: string | null, skipMs: number): void {
  if (!file) return;
  const { byCategory } = profileBreakdown(file, skipMs);
  for (const c of CATEGORIES) into[c] += byCategory[c];
}

function printBreakdown(label: string, byCategory: Record<Category, number>, n: number): void {
  const busy = CATEGORIES.filter((c) => c !== 'idle').reduce((a, c) => a + byCategory[c], 0);
  console.log(`  main thread per request, ${label} (--cpu-prof, which slows it): ${ms(busy / n)} busy, ${ms(byCategory.idle / n)} idle`);
  for (const c of CATEGORIES) if (c !== 'idle') console.log(`    ${ms(byCategory[c] / n).padStart(9)}  ${c}`);
}

/**
 * The variants take turns, in --rounds rounds, so that the machine's noise (other processes, the
 * disk) falls on all of them alike; each round is a fresh daemon per variant.
 */
async function modeRequests(): Promise<void> {
  const variants = values.variant!.split(',');
  const rounds = Number(values.rounds);
  const n = Math.ceil(Number(values.requests) / rounds);
  const m = Math.ceil(Number(values.burst) / rounds);
  const prof = values['cpu-prof'];
  const acc = new Map<string, VariantAcc>();
  for (const v of variants) {
    acc.set(v, { host: new BenchHost({ max_concurrent_runs: 4 }), lat: [], bare: [], seqCpu: 0, seqN: 0, rss: NaN, burstN: 0, burstMs: 0, burstUser: 0, burstSys: 0, seqProf: zero(), burstProf: zero() });
  }
  try {
    for (let r = 0; r < rounds; r++) {
      for (const v of variants) {
        say(`round ${r + 1}/${rounds}, ${v}: ${n} sequential requests, then a burst of ${m}`);
        const a = acc.get(v)!;
        const seq = await withDaemon(a.host, v, prof, async (pid) => {
          const c0 = hostCpuMs(pid);
          const { run, spawn: sp } = await measureLatency(a.host, { samples: n, warmup: 5, gapMs: () => 5 + Math.random() * 20, baseline: true });
          a.seqCpu += hostCpuMs(pid) - c0;
          a.seqN += n + 5;
          a.lat.push(...run.samples);
          a.bare.push(...sp!);
          a.rss = memoryOf(pid).rss_mib;
        });
        addProfile(a.seqProf, seq.profile, seq.skipMs);
        seq.cleanup();
        const burst = await withDaemon(a.host, v, prof, async (pid) => {
          const t = await measureThroughput(a.host, m, pid);
          a.burstN += m;
          a.burstMs += t.elapsed_ms;
          a.burstUser += t.daemon_user_ms_per_request * m;
          a.burstSys += t.daemon_sys_ms_per_request * m;
        });
        addProfile(a.burstProf, burst.profile, burst.skipMs);
        burst.cleanup();
      }
    }
    for (const v of variants) {
      const a = acc.get(v)!;
      const lat = summarize(a.lat);
      const bare = summarize(a.bare);
      const perS = (a.burstN * 1000) / a.burstMs;
      console.log(`${v}
  sequential (${a.lat.length}): p50 ${ms(lat.p50)} (p99 ${ms(lat.p99)}) vs bare spawn ${ms(bare.p50)} = ${(lat.p50 / bare.p50).toFixed(1)}x; daemon CPU ${ms(a.seqCpu / a.seqN)} per request (idle ticks included); daemon RSS ${a.rss.toFixed(0)} MiB
  burst (${a.burstN}): ${perS.toFixed(0)} /s, i.e. ${ms(1000 / perS)} per request; daemon CPU ${ms((a.burstUser + a.burstSys) / a.burstN)} per request (user ${ms(a.burstUser / a.burstN)}, system ${ms(a.burstSys / a.burstN)})`);
      if (prof) {
        printBreakdown('sequential', a.seqProf, a.seqN);
        printBreakdown('burst', a.burstProf, a.burstN);
      }
    }
    if (values.strace && spawnSync('strace', ['-V']).status === 0) {
      for (const v of variants) {
        const a = acc.get(v)!;
        const l = launch(v);
        const d = a.host.startDaemon(l.nodeArgs, l.script, l.env);
        await d.ready();
        const counts = await straceCount(d.pid, async () => {
          const k = 50;
          await measureLatency(a.host, { samples: k, warmup: 0, gapMs: () => 20, baseline: false });
          return k;
        });
        await d.stop();
        console.log(`${v}: system calls per request (strace -f -c -w, 50 sequential requests, most frequent first):\n${counts}`);
      }
    }
  } finally {
    for (const a of acc.values()) await a.host.cleanup();
  }
}

async function modeFork(): Promise<void> {
  console.log('spawn(/bin/true) from a plain node process holding extra resident memory:');
  for (const extra of [0, 50, 100, 200, 400]) {
    const r = spawnSync(process.execPath, [path.join(WHATIF, 'fork-cost.mjs'), String(extra)], { encoding: 'utf8' });
    const j = JSON.parse(r.stdout) as { rss_mib: number; spawn_call_p50_ms: number; to_close_p50_ms: number };
    console.log(`  RSS ${j.rss_mib.toFixed(0).padStart(4)} MiB: the spawn() call blocks ${ms(j.spawn_call_p50_ms)}, spawn to close ${ms(j.to_close_p50_ms)} (p50 of 100)`);
  }
}

async function modeFloor(): Promise<void> {
  const n = Number(values.requests);
  const ours = new BenchHost();
  const daemon = ours.startDaemon();
  const floors = (['in-process', 'spawner', ...(pythonHere() ? ['python' as const] : [])] as const).map((runs) => new FloorHost(runs));
  const hosts: [string, RequestTarget][] = [...floors.map((f): [string, RequestTarget] => [`the floor host, the run ${FLOOR_RUNS[f.runs]}`, f]), ['dumbwaiter daemon', ours]];
  const bare = new Spawner();
  const watchers = hosts.map(([, h]) => new ResultWatcher(h.results));
  const lat: number[][] = hosts.map(() => []);
  const spawns: number[] = [];
  try {
    await Promise.all([...floors.map((h) => h.ready()), daemon.ready()]);
    for (let i = 0; i < n + 50; i++) {
      const s = await bare.sample();
      if (i >= 50) spawns.push(s); // the first 50 warm every process up
      for (const [k, [, h]] of hosts.entries()) {
        await sleep(2);
        const id = h.nextId();
        const seen = watchers[k]!.waitFinal(id);
        const t0 = performance.now();
        h.submitFast(id);
        const r = await seen;
        if (i >= 50) lat[k]!.push(r.at - t0);
      }
    }
  } finally {
    bare.close();
    watchers.forEach((w) => w.close());
    await Promise.all(floors.map((h) => h.close()));
    await daemon.stop();
    await ours.cleanup();
  }
  const b = summarize(spawns).p50;
  console.log(`bare spawn of /bin/true from a minimal Node process, p50 of ${n}: ${ms(b)}; each host below had ${n} requests, in turns with it`);
  hosts.forEach(([name], k) => {
    const l = summarize(lat[k]!);
    console.log(`${name}: submit-to-result p50 ${ms(l.p50)} (p99 ${ms(l.p99)}) = ${(l.p50 / b).toFixed(2)}x the bare spawn`);
  });
}

async function modeStart(): Promise<void> {
  const n = Number(values.results);
  const host = new BenchHost();
  try {
    say(`making ${n} results`);
    const h = makeHistory(host, n);
    console.log(`history: ${h.results} results (${h.ledger_rows} ledger rows, ${h.audit_entries} audit entries, ${h.files} files)`);
    // What the start-up retention pass does to results/: read it, lstat every entry. Through a plain
    // path and through the pinned /proc/self/fd path the daemon uses.
    const pin = pinDir(host.results);
    for (const [how, dir] of [['plain path', host.results], ['pinned (/proc/self/fd) path', pin.path], ['plain path', host.results], ['pinned (/proc/self/fd) path', pin.path]] as const) {
      const t0 = performance.now();
      const names = readdirSync(dir);
      const t1 = performance.now();
      for (const name of names) lstatSync(path.join(dir, name));
      const t2 = performance.now();
      console.log(`  results/ through a ${how}: readdir ${ms(t1 - t0)}, lstat of ${names.length} entries ${ms(t2 - t1)} (${(((t2 - t1) * 1000) / names.length).toFixed(1)} µs each)`);
    }
    unpin(pin);
    const watcher = new ResultWatcher(host.results);
    for (const variant of ['default']) {
      const times: number[] = [];
      const answers: number[] = [];
      let rss = NaN;
      for (let i = 0; i < 3; i++) {
        const id = host.nextId('start');
        const seen = watcher.waitFinal(id, 120_000);
        host.submitFast(id);
        const l = launch(variant);
        const d = host.startDaemon(l.nodeArgs, l.script, l.env);
        times.push((await d.ready()) - d.spawnedAt);
        answers.push((await seen).at - d.spawnedAt);
        rss = memoryOf(d.pid).rss_mib;
        await d.stop();
      }
      console.log(`${variant}: spawn to "daemon running" p50 ${ms(summarize(times).p50)} (${times.map((t) => ms(t)).join(', ')}), to first answer ${ms(summarize(answers).p50)}; RSS after start ${rss.toFixed(0)} MiB`);
    }
    watcher.close();
    for (const variant of ['default']) {
      const profDir = mkdtempSync(path.join(os.tmpdir(), 'dw-prof-'));
      try {
        const l = launch(variant);
        const d = host.startDaemon([...l.nodeArgs, '--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=200'], l.script, l.env);
        const readyMs = (await d.ready()) - d.spawnedAt;
        await sleep(1000); // a signal in the first moments after the line can beat the profiler's own set-up
        await d.stop();
        const files = readdirSync(profDir).map((f) => path.join(profDir, f));
        if (files.length === 0) throw new Error(`no profile from the daemon (${JSON.stringify(await d.exited)}):\n${d.output.slice(-2000)}`);
        const main = files.sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0]!;
        const steps = profileSteps(main);
        console.log(`${variant} under --cpu-prof (slower): "daemon running" after ${ms(readyMs)}; profile from node's start:`);
        console.log(`    ${ms(steps.beforeStart).padStart(9)}  before Daemon.start (node and the bundle loaded)`);
        for (const [name, t] of steps.inStart) console.log(`    ${ms(t).padStart(9)}  ${name}`);
      } finally {
        rmSync(profDir, { recursive: true, force: true });
      }
    }
  } finally {
    await host.cleanup();
  }
}

/**
 * The search as it was before commit f81d037, for comparison on the same data: every FTS match
 * collected by an IN subquery, then sorted; the kind filter without an index (NOT INDEXED).
 */
function searchBeforeF81d037(db: Database.Database, q: AuditQuery, explain = false): unknown[] {
  const where: string[] = [];
  const params: Record<string, unknown> = { limit: Math.min(Math.max(q.limit ?? 100, 1), 10_000) };
  const match = q.text ? ftsQuery(q.text) : null;
  if (match) {
    where.push('a.seq IN (SELECT rowid FROM audit_fts WHERE audit_fts MATCH @match)');
    params.match = match;
  }
  if (q.kind) {
    where.push('a.kind = @kind');
    params.kind = q.kind;
  }
  if (q.requestId) {
    where.push('a.request_id = @requestId');
    params.requestId = q.requestId;
  }
  const sql = `SELECT a.* FROM audit a ${q.kind && !q.requestId ? 'NOT INDEXED' : ''} ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY a.seq DESC LIMIT @limit`;
  return db.prepare(`${explain ? 'EXPLAIN QUERY PLAN ' : ''}${sql}`).all(params);
}

async function modeAudit(): Promise<void> {
  const n = Number(values.entries);
  const host = new BenchHost();
  try {
    say(`inserting ${n} audit entries`);
    const l = await buildAuditLedger(host, n, (s) => say(s));
    const queries = auditQueries(l);
    const reps = 10;
    const svc = new Host(host.home, host.spool);
    const now = timeQueries(queries, reps, (q) => svc.audit.search(q));
    svc.close();
    const db = new Database(path.join(host.home, 'ledger.sqlite'));
    const before = timeQueries(queries, reps, (q) => searchBeforeF81d037(db, q));
    const plans = queries
      .filter((q) => q.query.text || q.query.kind)
      .map((q) => `    ${q.name}: ${(searchBeforeF81d037(db, q.query, true) as { detail: string }[]).map((r) => r.detail).join('; ')}`);
    db.close();
    console.log(`audit search over ${l.entries} entries, p50 of ${reps} each (ms): the query before f81d037 | Host.audit.search now`);
    now.queries.forEach((q, i) => {
      const b = before.queries[i]!;
      console.log(`  ${q.name.padEnd(32)} ${String(q.rows).padStart(3)} rows  ${b.timing.p50.toFixed(2).padStart(8)} | ${q.timing.p50.toFixed(2).padStart(8)}${b.rows !== q.rows ? `  (${b.rows} rows before!)` : ''}`);
    });
    console.log(`  p95 over all                              ${before.all.p95.toFixed(2).padStart(8)} | ${now.all.p95.toFixed(2).padStart(8)}`);
    console.log(`  query plans before f81d037:\n${plans.join('\n')}`);
  } finally {
    await host.cleanup();
  }
}

const modes: Record<string, () => Promise<void>> = { requests: modeRequests, fork: modeFork, floor: modeFloor, start: modeStart, audit: modeAudit };
const run = modes[values.mode!];
if (!run) throw new Error(`unknown mode "${values.mode}" (${Object.keys(modes).join(', ')})`);
try {
  await run();
} finally {
  killLeftoverDaemons();
}
