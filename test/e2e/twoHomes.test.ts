// Two homes on one spool (a misconfiguration): two daemons, each with its own home, ledger and lock,
// claim from the same queue/ at once. The claim is an atomic rename, so every request is taken by one
// of them only: each runs exactly once in total, gets exactly one final result, and none is lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CLI, DaemonProcess, TestHost, eventually } from '../helpers/host';
import { track } from '../helpers/processes';
import type { KeyFile } from '../../shared/protocol/types';

const N = 300;
let host: TestHost;
let home2: string;
let key: KeyFile;
let counter: string;
const daemons: DaemonProcess[] = [];

/** The real `dumbwaiter` command line against the second home (and the shared spool). */
function cli2(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--home', home2, '--spool', host.spool], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The second home's daemon, started like TestHost.startDaemon() does for the first. */
async function startDaemon2(): Promise<DaemonProcess> {
  const proc = track(spawn(process.execPath, [CLI, 'daemon', '--home', home2, '--spool', host.spool], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] }));
  const d = new DaemonProcess(proc);
  daemons.push(d);
  return d.ready();
}

function settingsOf(home: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(home, 'settings.json'), 'utf8')) as Record<string, unknown>;
}

/** Every request row of one home's ledger: id -> state. */
function ledgerStates(home: string): Map<string, string> {
  const db = new Database(path.join(home, 'ledger.sqlite'), { readonly: true, timeout: 10_000 });
  try {
    const rows = db.prepare('SELECT id, state FROM requests').all() as { id: string; state: string }[];
    return new Map(rows.map((r) => [r.id, r.state]));
  } finally {
    db.close();
  }
}

/** How many `finished` audit entries each request has in one home's ledger. */
function finishedCounts(home: string): Map<string, number> {
  const db = new Database(path.join(home, 'ledger.sqlite'), { readonly: true, timeout: 10_000 });
  try {
    const rows = db.prepare("SELECT request_id AS id, count(*) AS n FROM audit WHERE kind = 'finished' GROUP BY request_id").all() as { id: string; n: number }[];
    return new Map(rows.map((r) => [r.id, r.n]));
  } finally {
    db.close();
  }
}

beforeAll(() => {
  host = new TestHost('version: 1\noperations: []\n', { max_concurrent_runs: 4 });
  counter = path.join(host.root, 'runs.txt');
  host.writeAllowlist(`version: 1
operations:
  - name: tick
    command: [/bin/sh, -c, 'echo "$DUMBWAITER_REQUEST_ID" >> "$0"', ${JSON.stringify(counter)}]
    scope: read
    approval: never
    concurrency: 4
`);

  // The second home, made by the real command line on the first host's spool.
  home2 = path.join(host.root, 'home2');
  const init = cli2(['init']);
  expect(init.status, init.stderr).toBe(0);
  copyFileSync(path.join(host.home, 'allowlist.yaml'), path.join(home2, 'allowlist.yaml'));
  const s1 = settingsOf(host.home);
  const s2 = settingsOf(home2);
  expect(s2.spool).toBe(s1.spool);
  expect(s2.host_id).not.toBe(s1.host_id); // two distinct hosts, so two distinct claimed/<host_id>/ folders
  writeFileSync(path.join(home2, 'settings.json'), JSON.stringify({ ...s1, host_id: s2.host_id, spool: s2.spool }));

  // One key, known to both homes with the same key_id and secret, so either can verify any request.
  key = host.createKey('shared', 'read');
  const src = new Database(path.join(host.home, 'ledger.sqlite'), { readonly: true });
  const row = src.prepare('SELECT * FROM keys WHERE key_id = ?').get(key.key_id) as Record<string, unknown>;
  src.close();
  expect(row.secret_format).toBe('plain');
  const dst = new Database(path.join(home2, 'ledger.sqlite'));
  const cols = Object.keys(row);
  dst.prepare(`INSERT INTO keys (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`).run(row);
  dst.close();
});

afterAll(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  await host?.cleanup();
  if (home2) rmSync(home2, { recursive: true, force: true });
});

describe('two homes on one spool', () => {
  it(`run each of ${N} requests exactly once in total, answer each once, and lose none`, async () => {
    // Some wait in the queue before either daemon starts, so both start-up scans race for them too.
    for (let i = 0; i < 100; i++) host.submit(key, `th-${i}`, 'tick');
    const [d1, d2] = await Promise.all([host.startDaemon(), startDaemon2()]);
    for (let i = 100; i < N; i++) host.submit(key, `th-${i}`, 'tick');

    const ids = Array.from({ length: N }, (_, i) => `th-${i}`);
    await eventually('every result to be final', () => (ids.every((id) => host.result(id)?.state === 'succeeded') ? true : undefined), 120_000);
    // Both still run (neither gave up on the shared spool), and nothing is left in the queue.
    expect(d1.proc.exitCode).toBeNull();
    expect(d2.proc.exitCode).toBeNull();
    expect(readdirSync(path.join(host.spool, 'queue'))).toEqual([]);

    // Ran exactly once in total: the operation itself counts.
    const runs = readFileSync(counter, 'utf8').trim().split('\n');
    expect(runs).toHaveLength(N);
    expect(new Set(runs)).toEqual(new Set(ids));

    // Each request is in exactly one of the two ledgers, finished once there, and succeeded.
    const l1 = ledgerStates(host.home);
    const l2 = ledgerStates(home2);
    const both = ids.filter((id) => l1.has(id) && l2.has(id));
    expect(both).toEqual([]);
    expect(ids.filter((id) => !l1.has(id) && !l2.has(id))).toEqual([]);
    expect([...l1.values(), ...l2.values()].every((s) => s === 'succeeded')).toBe(true);
    const f1 = finishedCounts(host.home);
    const f2 = finishedCounts(home2);
    expect(ids.filter((id) => (f1.get(id) ?? 0) + (f2.get(id) ?? 0) !== 1)).toEqual([]);
    // Exactly one result file per request, nothing else in results/ but their logs.
    const results = readdirSync(path.join(host.spool, 'results')).filter((n) => n.endsWith('.json')).sort();
    expect(results).toEqual(ids.map((id) => `${id}.json`).sort());
    // Neither daemon refused or quarantined anything of the other's.
    expect(readdirSync(path.join(host.spool, 'quarantine'))).toEqual([]);
    expect(readdirSync(path.join(host.spool, 'inbox'))).toEqual([]);
    for (const hostId of [settingsOf(host.home).host_id, settingsOf(home2).host_id] as string[]) {
      const dir = path.join(host.spool, 'claimed', hostId);
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    }
    console.log(`two homes on one spool: home 1 took ${l1.size}, home 2 took ${l2.size} of ${N}; ${runs.length} runs, 0 twice, 0 lost`);
    // Both really competed for the queue (otherwise this test proved nothing about the race).
    expect(l1.size).toBeGreaterThan(0);
    expect(l2.size).toBeGreaterThan(0);
  });
});
