// A run cannot stall the host by making its processes slow to look at, with the real daemon serving two
// spools. Spool A's operation leaves behind, after setsid, a process (as an ordinary user when the tests
// run as root: the host reads anyone's then) that keeps its memory map busy (test/helpers/staller.ts):
// reading its /proc/<pid>/environ, which the leftover scan did in the spawner that every spool's runs
// go through, waited tens of seconds a read. While A's run is being ended, spool B's requests are
// answered about as fast as before it, and B's heartbeat goes on; A's result comes once its kill window
// is over, and its log says which process could not be looked at and was left running.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { alive } from '../helpers/processes';
import { stallerCommand } from '../helpers/staller';
import type { KeyFile } from '../../shared/protocol/types';

const stall = stallerCommand();
if (!('argv' in stall)) console.warn(`leftoverStall: skipped: ${stall.why}`);

let host: TestHost;
let b: string;
let keyA: KeyFile;
let keyB: KeyFile;
let stuck = 0;

beforeAll(async () => {
  if (!('argv' in stall)) return;
  host = new TestHost('version: 1\noperations: []\n');
  const pidFile = path.join(host.root, 'staller.pid');
  // The staller's argv follows the script: "$0" is where it writes its pid, "$@" the staller.
  const leave = ['/bin/sh', '-c', 'setsid "$@" > "$0" 2>/dev/null & while [ ! -s "$0" ]; do sleep 0.01; done; echo started', pidFile, ...stall.argv];
  host.writeAllowlist(`version: 1
operations:
  - name: leave-staller
    command: ${JSON.stringify(leave)}
    scope: read
    approval: never
  - name: hello
    command: [echo, hello]
    scope: read
    approval: never
    concurrency: 4
`);
  b = host.addSpool('b');
  keyA = host.createKeyWithCli('a', 'default');
  keyB = host.createKeyWithCli('b', 'b');
  await host.startDaemon({}, { spool: null });
});

afterAll(async () => {
  // By pid: the net's check of a process group (test/helpers/processes.ts) would read its environment.
  if (stuck) process.kill(stuck, 'SIGKILL');
  await host?.cleanup();
});

let ids = 0;
/** How long B's `hello` takes from its request to its result, in ms. */
async function helloB(): Promise<number> {
  const id = `b-${++ids}`;
  const t = performance.now();
  host.submit(keyB, id, 'hello', {}, {}, b);
  const r = await host.waitResult(id, undefined, 120_000, b);
  expect(r).toMatchObject({ state: 'succeeded', stdout: 'hello\n' });
  return performance.now() - t;
}

const heartbeatOfB = () => (JSON.parse(readFileSync(path.join(b, 'host.json'), 'utf8')) as { heartbeat_at: string }).heartbeat_at;

describe.runIf('argv' in stall)('a process that is slow to look at', () => {
  it("holds up neither another spool's requests nor the host, and is left running and said", async () => {
    const before: number[] = [];
    for (let i = 0; i < 3; i++) before.push(await helloB());
    const baseline = Math.max(...before);

    host.submit(keyA, 'a-1', 'leave-staller');
    const pidFile = path.join(host.root, 'staller.pid');
    stuck = await eventually('the staller to start', () => (existsSync(pidFile) && /^\d+\n$/.test(readFileSync(pidFile, 'utf8')) ? Number(readFileSync(pidFile, 'utf8')) : undefined));
    const beat = heartbeatOfB();
    // A's run has exited or is about to: its leftovers are being looked for now, for a few seconds
    // (its kill window), while B's requests go on. Reading the staller's environment in the spawner
    // held each of them 15 s and more.
    const during: number[] = [];
    while (host.result('a-1') === undefined) during.push(await helloB());
    during.push(await helloB());
    expect(Math.max(...during)).toBeLessThan(3000 + 5 * baseline);
    await eventually("B's heartbeat to move on", () => (heartbeatOfB() !== beat ? true : undefined));

    const a = await host.waitResult('a-1');
    expect(a).toMatchObject({ state: 'succeeded', exit_code: 0, stdout: 'started\n' });
    // Never taken for gone, never killed: it may be someone else's as far as the host can tell.
    expect(host.logOf('a-1')).toBe(
      `started\n[dumbwaiter: 1 process started during the run could not be looked at in time (pid ${stuck}: reading its environment waited over 1 s) and was left running: it may be the run's]\n`,
    );
    expect(alive(stuck)).toBe(true);
    // Said where the human looks too, not only in the run's log.
    const finished = host.audit('', 'finished').find((e) => e.request_id === 'a-1');
    expect(finished?.message).toContain(`could not be looked at in time (pid ${stuck}`);
  });
});
