// Random kills: cycles of a workload of chatty runs with the real daemon SIGKILLed at a random moment
// (its run keeper never) and restarted. After every cycle, with the daemon down, the invariants are
// checked: every request submitted so far is final, or legitimately pending (queued or running in the
// ledger, or its file still in queue/ or claimed/); none ran twice (the operations count their own runs);
// none was lost; none is uncertain (the keeper held every run). At the end the daemon is left to finish,
// and then everything must be succeeded, with matching result files and every run's log whole.
//
// The seed of the random choices is printed; DW_SEED=<n> replays the same choices (not the same timing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CLI, DaemonProcess, TestHost, eventually, sleep } from './host';
import type { KeyFile, RequestState } from '../../shared/protocol/types';
import { track } from './processes';
import { rng } from '../../bench/lib/stats'; // mulberry32, seeded: a failing run's choices can be replayed

const SEED = Number(process.env.DW_SEED ?? Date.now() % 2 ** 31);
const FINAL: RequestState[] = ['succeeded', 'failed', 'rejected', 'denied', 'expired', 'cancelled', 'uncertain'];
/** What this workload may end in: the operations always exit 0, and the run keeper holds every run
 *  across the daemon's kills (it is never killed here), so nothing is left uncertain. */
const EXPECTED_FINAL: RequestState[] = ['succeeded'];
/** Lines each operation writes (one every 10 ms), then `end`. */
const LINES = { fast: 0, slow: 40, slower: 120 } as const;

let host: TestHost;
let key: KeyFile;
let counter: string;
let hostId: string;
const daemons: DaemonProcess[] = [];

const random = rng(SEED);
const randInt = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));

beforeAll(() => {
  host = new TestHost('version: 1\noperations: []\n', { max_concurrent_runs: 4 });
  counter = path.join(host.root, 'runs.txt');
  // Each run appends its request id to runs.txt first, so a second run of anything would show; then
  // it writes numbered lines, so a line lost (or a run cut) would show in its log.
  const op = (name: keyof typeof LINES, concurrency: number) => `  - name: ${name}
    command: [/bin/sh, -c, 'echo "$DUMBWAITER_REQUEST_ID" >> "$0"; i=0; while [ $i -lt ${LINES[name]} ]; do i=$((i+1)); echo "line $i"; sleep 0.01; done; echo end', ${JSON.stringify(counter)}]
    scope: read
    approval: never
    concurrency: ${concurrency}
`;
  host.writeAllowlist(`version: 1\noperations:\n${op('fast', 4)}${op('slow', 2)}${op('slower', 2)}`);
  key = host.createKey('kills', 'read');
  hostId = (JSON.parse(readFileSync(path.join(host.home, 'settings.json'), 'utf8')) as { host_id: string }).host_id;
});

afterAll(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  await host?.cleanup();
});

/** Starts the real daemon without waiting for it to be ready (so it can be killed while it boots). */
function spawnDaemon(): DaemonProcess {
  const proc = track(spawn(process.execPath, [CLI, 'daemon', '--home', host.home, '--spool', host.spool], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] }));
  const d = new DaemonProcess(proc);
  daemons.push(d);
  return d;
}

const submitted: string[] = [];
const opOf = new Map<string, keyof typeof LINES>();
let seq = 0;
function submitOne(): void {
  const r = random();
  const op = r < 0.6 ? 'fast' : r < 0.85 ? 'slow' : 'slower';
  const id = `rk-${String(seq++).padStart(5, '0')}`;
  host.submit(key, id, op);
  submitted.push(id);
  opOf.set(id, op);
}

/** How many times each request has run so far (complete lines only). */
function runCounts(): Map<string, number> {
  const m = new Map<string, number>();
  if (!existsSync(counter)) return m;
  const text = readFileSync(counter, 'utf8');
  for (const id of text.slice(0, text.lastIndexOf('\n') + 1).split('\n')) if (id) m.set(id, (m.get(id) ?? 0) + 1);
  return m;
}

function ledgerStates(): Map<string, RequestState> {
  const db = new Database(path.join(host.home, 'ledger.sqlite'), { readonly: true, timeout: 10_000 });
  try {
    const rows = db.prepare('SELECT id, state FROM requests').all() as { id: string; state: RequestState }[];
    return new Map(rows.map((r) => [r.id, r.state]));
  } finally {
    db.close();
  }
}

function idsIn(dir: string): Set<string> {
  return new Set(existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)) : []);
}

/** Run count of each uncertain request when it was first seen uncertain: it may never change after. */
const uncertainRuns = new Map<string, number>();
/** The final state each request was first seen in: a final state never changes (nobody resolves here). */
const finalSeen = new Map<string, RequestState>();

interface Tally {
  succeeded: number;
  uncertain: number;
  other: number;
  ranTwice: number;
  lost: number;
  pending: number;
}

/** Checks every invariant; returns what is wrong (empty when all hold). `end`: nothing may be pending. */
function check(when: string, end: boolean): { problems: string[]; tally: Tally } {
  const problems: string[] = [];
  const tally: Tally = { succeeded: 0, uncertain: 0, other: 0, ranTwice: 0, lost: 0, pending: 0 };
  const ledger = ledgerStates();
  const runs = runCounts();
  const queued = idsIn(path.join(host.spool, 'queue'));
  const claimed = idsIn(path.join(host.spool, 'claimed', hostId));
  for (const id of submitted) {
    const n = runs.get(id) ?? 0;
    const state = ledger.get(id);
    if (n > 1) {
      tally.ranTwice++;
      problems.push(`${id} ran ${n} times (ledger: ${state ?? 'no row'})`);
    }
    if (state === undefined) {
      // Not recorded yet: its file must still be where the host will find it.
      if (queued.has(id) || claimed.has(id)) {
        tally.pending++;
        if (end) problems.push(`${id} is still in ${queued.has(id) ? 'queue/' : 'claimed/'} at the end`);
        if (n > 0) problems.push(`${id} ran ${n} time(s) but is not in the ledger`);
      } else {
        tally.lost++;
        problems.push(`${id} was lost: not in the ledger, not in queue/ or claimed/ (result file: ${host.result(id)?.state ?? 'none'})`);
      }
      continue;
    }
    if (queued.has(id)) problems.push(`${id} is in the ledger (${state}) and still in queue/`);
    if (FINAL.includes(state)) {
      const first = finalSeen.get(id);
      if (first === undefined) finalSeen.set(id, state);
      else if (first !== state) problems.push(`${id} went from final state ${first} to ${state}`);
      if (state === 'succeeded') tally.succeeded++;
      else if (state === 'uncertain') tally.uncertain++;
      else tally.other++;
      if (!EXPECTED_FINAL.includes(state)) problems.push(`${id} ended ${state}, which this workload never should (${JSON.stringify(host.result(id)?.error)})`);
      if (state === 'succeeded' && n !== 1) problems.push(`${id} succeeded but ran ${n} times`);
      if (state === 'uncertain') {
        const before = uncertainRuns.get(id);
        if (before === undefined) uncertainRuns.set(id, n);
        else if (before !== n) problems.push(`${id} is uncertain and ran again: ${before} run(s) when it became uncertain, ${n} now`);
      }
      if (end) {
        const r = host.result(id);
        if (r?.state !== state) problems.push(`${id}: the ledger says ${state}, its result file ${r?.state ?? 'is missing'}`);
        if (claimed.has(id)) problems.push(`${id} is still in claimed/ at the end`);
        const want = [...Array.from({ length: LINES[opOf.get(id)!] }, (_, i) => `line ${i + 1}`), 'end', ''].join('\n');
        if (state === 'succeeded' && host.logOf(id) !== want) problems.push(`${id}: its log is not whole: ${JSON.stringify(host.logOf(id).slice(-200))}`);
      }
    } else if (state === 'queued' || state === 'running') {
      // Legitimately pending while the daemon is down: queued waits; running is the keeper's, picked up at the next start.
      tally.pending++;
      if (end) problems.push(`${id} is still ${state} at the end`);
      if (state === 'queued' && n > 0) problems.push(`${id} is queued but already ran ${n} time(s)`);
    } else {
      problems.push(`${id} is in state ${state}, which this workload never should be`);
    }
  }
  return { problems: problems.map((p) => `${when}: ${p}`), tally };
}

/** The suite: `cycles` kills of the daemon (DW_CYCLES overrides it). */
export function randomKills(cycles: number): void {
const CYCLES = Number(process.env.DW_CYCLES ?? cycles);
describe('random kills of the daemon during chatty runs', () => {
  it(`${CYCLES} cycles of SIGKILL at a random moment: nothing runs twice, nothing is lost, nothing is uncertain, every log is whole`, async () => {
    console.log(`random kills: seed ${SEED} (replay the choices with DW_SEED=${SEED})`);
    const t0 = Date.now();
    let bootKills = 0;
    let last: Tally | null = null;
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      // Some work arrives while the host is down.
      for (let i = randInt(0, 3); i > 0; i--) submitOne();
      const d = spawnDaemon();
      let submissions: Promise<void>[] = [];
      if (random() < 0.1) {
        // Now and then, killed while it starts: during recovery of what the last kill left behind.
        bootKills++;
        await sleep(randInt(0, 900));
      } else {
        await d.ready();
        // More work arrives while it runs (and some of it, by chance, after it was killed).
        submissions = Array.from({ length: randInt(2, 6) }, () => sleep(randInt(0, 1500)).then(submitOne));
        await sleep(randInt(0, 1500));
        if (d.proc.exitCode !== null) throw new Error(`cycle ${cycle}: the daemon exited on its own:\n${d.stderr}`);
      }
      await d.kill9();
      const how = await d.exited;
      if (how.signal !== 'SIGKILL') throw new Error(`cycle ${cycle}: the daemon exited on its own (${JSON.stringify(how)}):\n${d.stderr}`);
      await Promise.all(submissions);
      const { problems, tally } = check(`cycle ${cycle} (seed ${SEED})`, false);
      if (problems.length) console.log(`daemon output of cycle ${cycle}:\n${d.stderr.slice(-4000)}`);
      expect(problems).toEqual([]);
      last = tally;
      if (cycle % 20 === 0) {
        console.log(`random kills: cycle ${cycle}, ${submitted.length} requests, ${JSON.stringify(tally)}, ${Math.round((Date.now() - t0) / 1000)} s`);
      }
    }
    expect(last).not.toBeNull();

    // Finally the daemon is left to finish: then everything is final or uncertain.
    const d = spawnDaemon();
    await d.ready();
    const notFinal = (ledger = ledgerStates()) =>
      submitted.filter((id) => {
        const s = ledger.get(id);
        return s === undefined || !FINAL.includes(s) || host.result(id)?.state !== s;
      });
    // Within the test's own time (a long run sets more), so that what is stuck is said.
    await eventually('every request to be final, with its result file', () => (notFinal().length === 0 ? true : undefined), 30_000 + CYCLES * 500).catch((e: Error) => {
      const ledger = ledgerStates();
      const stuck = notFinal(ledger).map((id) => `${id}: ledger ${ledger.get(id) ?? 'no row'}, result file ${host.result(id)?.state ?? 'none'}`);
      console.log(`not final (seed ${SEED}):\n${stuck.join('\n')}\ndaemon output:\n${d.stderr.slice(-6000)}`);
      throw e;
    });
    await d.stop();
    const { problems, tally } = check('at the end', true);
    expect(problems).toEqual([]);
    expect(tally.succeeded + tally.uncertain + tally.other).toBe(submitted.length);
    expect(readdirSync(path.join(host.spool, 'queue'))).toEqual([]);
    expect(readdirSync(path.join(host.spool, 'claimed', hostId))).toEqual([]);
    expect(readdirSync(path.join(host.spool, 'quarantine'))).toEqual([]);
    const summary =
      `${CYCLES} cycles, ${submitted.length} requests, ${tally.succeeded} succeeded, ${tally.uncertain} uncertain, ` +
      `${tally.ranTwice} ran twice, ${tally.lost} lost`;
    console.log(`${summary} (${bootKills} kills during start-up, ${uncertainRuns.size} uncertain watched for re-runs, ` +
      `seed ${SEED}, ${Math.round((Date.now() - t0) / 1000)} s)`);
  }, CYCLES * 10_000 + 60_000);
});
}
