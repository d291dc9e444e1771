// Request ids bind within their spool, against the real daemon with two spools of one home: sandbox A
// squatting an id (`run-tests-1`) neither stops sandbox B from using it nor tells B anything; B's
// retry is B's replay, B's other request of that id B's conflict, and B's cancel reaches B's alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost } from '../helpers/host';
import type { KeyFile, ResultDoc } from '../../shared/protocol/types';

let host: TestHost;
/** Spool `work`, B's (spool `default`, host.spool, is A's). */
let work: string;
let a: KeyFile;
let b: KeyFile;
/** Each run of `say` appends "<spool folder> <tag>" here. */
let runs: string;
/** `hold` runs until this file exists. */
let gate: string;

beforeAll(async () => {
  host = new TestHost('version: 1\noperations: []\n', { rescan_interval_ms: 50 });
  runs = path.join(host.root, 'runs.txt');
  gate = path.join(host.root, 'gate');
  work = host.addSpool('work');
  host.writeAllowlist(`version: 1
operations:
  - name: say
    command: [/bin/sh, -c, 'echo "$1" >> "$0"; echo "said $1"', ${JSON.stringify(runs)}, "{tag}"]
    args:
      tag: {type: string, pattern: "[a-z0-9]*"}
    scope: read
    approval: never
    concurrency: 4
  - name: hold
    command: [/bin/sh, -c, 'while [ ! -e "$0" ]; do sleep 0.05; done; echo released', ${JSON.stringify(gate)}]
    scope: read
    approval: never
    concurrency: 4
`);
  a = host.createKeyWithCli('a', 'default');
  b = host.createKeyWithCli('b', 'work');
  await host.startDaemon({}, { spool: null });
});

afterAll(async () => {
  writeFileSync(gate, ''); // a run still holding ends
  await host.cleanup();
});

const runsOf = (tag: string) => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter((l) => l === tag).length : 0);
const inboxOf = (dir: string) =>
  readdirSync(path.join(dir, 'inbox'))
    .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
    .map((n) => JSON.parse(readFileSync(path.join(dir, 'inbox', n), 'utf8')) as { kind: string; ref: string | null; text: string });
/** What a sandbox reads of a result names no other spool: neither its name nor a handle `<id>@<spool>`. */
const namesNoOtherSpool = (r: ResultDoc | undefined) => expect(JSON.stringify(r)).not.toMatch(/@|default|work/);

/** Every request B wrote before it has been taken (B's queue is read in name order, zz- last). */
async function drainedB(): Promise<void> {
  expect((await host.sentinel(b, 'dumbwaiter.ping', {}, work)).state).toBe('succeeded');
}

describe('request ids bind within their spool', () => {
  it("A's run-tests-1 leaves B's own: B's runs and answers, B's retry is a replay, B's other args a conflict in B's spool only", async () => {
    host.submit(a, 'run-tests-1', 'say', { tag: 'a' });
    const fromA = await host.waitResult('run-tests-1');
    expect(fromA.state).toBe('succeeded');
    expect(fromA.stdout).toBe('said a\n');

    // B, later, with its own request of that id: its own run and its own result, in its own spool.
    host.submit(b, 'run-tests-1', 'say', { tag: 'b' }, {}, work);
    const fromB = await host.waitResult('run-tests-1', undefined, 10_000, work);
    expect(fromB).toMatchObject({ id: 'run-tests-1', state: 'succeeded', exit_code: 0, stdout: 'said b\n' });
    namesNoOtherSpool(fromB);
    expect(runsOf('b')).toBe(1);
    expect(host.result('run-tests-1')).toEqual(fromA); // A's untouched
    expect(readdirSync(path.join(work, 'inbox')).filter((n) => n.endsWith('.json'))).toEqual([]); // no conflict said to B

    // The host tells them apart: A's keeps the plain id, B's gets a handle that names its spool.
    const rows = host.service((s) => s.listRequests({ limit: 100 })).filter((r) => r.id.startsWith('run-tests-1'));
    expect(rows.map((r) => [r.id, r.spool]).sort()).toEqual([
      ['run-tests-1', 'default'],
      ['run-tests-1@work', 'work'],
    ]);

    // B's retry (rebuilt later, same op and args) is a replay of B's: nothing runs again.
    host.submit(b, 'run-tests-1', 'say', { tag: 'b' }, { createdAt: new Date(Date.now() + 1000).toISOString() }, work);
    await drainedB();
    expect(host.result('run-tests-1', work)).toEqual(fromB);
    expect(runsOf('b')).toBe(1);
    expect(host.audit('run-tests-1@work', 'replay')).toHaveLength(1);

    // B's other request of that id is a conflict with B's own, said in B's inbox alone.
    host.submit(b, 'run-tests-1', 'say', { tag: 'c' }, {}, work);
    await drainedB();
    expect(runsOf('c')).toBe(0);
    expect(host.result('run-tests-1', work)).toEqual(fromB);
    expect(host.result('run-tests-1')).toEqual(fromA);
    const conflicts = inboxOf(work).filter((m) => m.kind === 'conflict');
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]).toMatchObject({ ref: 'run-tests-1' });
    expect(conflicts[0]!.text).toContain('your earlier request (operation say)');
    expect(conflicts[0]!.text).not.toMatch(/@|default/);
    expect(inboxOf(host.spool).filter((m) => m.kind === 'conflict')).toEqual([]);
  });

  it("B's cancel of an id A also holds reaches B's request alone", async () => {
    host.submit(a, 'hold-1', 'hold', {});
    host.submit(b, 'hold-1', 'hold', {}, {}, work);
    await host.waitResult('hold-1', ['running']);
    await host.waitResult('hold-1', ['running'], 10_000, work);

    host.submit(b, 'cancel-1', 'dumbwaiter.cancel', { target: 'hold-1' }, {}, work);
    const cancel = await host.waitResult('cancel-1', undefined, 10_000, work);
    expect(cancel.state).toBe('succeeded');
    expect(cancel.stdout).toContain('hold-1');
    namesNoOtherSpool(cancel);
    const cancelled = await host.waitResult('hold-1', ['cancelled'], 10_000, work);
    namesNoOtherSpool(cancelled);

    expect(host.result('hold-1')?.state).toBe('running'); // A's goes on
    writeFileSync(gate, '');
    expect((await host.waitResult('hold-1', ['succeeded'])).stdout).toBe('released\n');
  });
});
