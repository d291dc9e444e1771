// What the sandbox clients say about runs a host lost sight of, with the real daemon killed by SIGKILL
// mid-run: an orphan (its processes outlived the host, the restarted one watches it), and interrupted
// runs whose reconcile command said their effect happened (0), did not (1, not_applied) or could not
// tell (3). dw.cjs and dw.py (copies of the spool's, run with nothing else) and dw mcp each say so in
// one line, with the exit code of the signed result; a cancel still ends the orphan.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TestHost, eventually } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, echoOp } from '../helpers/allowlists';
import { GatedRuns } from '../helpers/gatedRuns';
import { stopGroups, trackGroup } from '../helpers/processes';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let sandbox: string;
let env: Record<string, string>;
let runsFile: string;

/** Interrupted runs of `deploy`, by the exit code its reconcile command gives for them. */
const ANSWERS = { 'rs-applied': 0, 'rs-not-applied': 1, 'rs-unknown': 3 } as const;
const ORPHAN = 'rs-orphan';

const goFile = (id: string) => path.join(host.root, `go-${id}`);
const runs = (id: string) => (existsSync(runsFile) ? readFileSync(runsFile, 'utf8').split('\n').filter((x) => x === id).length : 0);

beforeAll(async () => {
  host = new TestHost(NO_OPERATIONS, { max_concurrent_runs: 8 });
  const gated = new GatedRuns(host);
  runsFile = gated.runsFile;
  const answers = path.join(host.root, 'answers');
  mkdirSync(answers);
  // Runs that record themselves, then wait until the file named by their `go` argument exists.
  host.writeAllowlist(
    allowlistYaml(
      gated.spec('deploy', { concurrency: 8, reconcile: { command: ['/bin/sh', '-c', 'exit "$(cat "$0/$1")"', answers, '{request_id}'] } }),
      gated.spec('sleeper'),
      echoOp(),
    ),
  );
  key = host.createKey('restarts', 'read');
  sandbox = mkdtempSync(path.join(os.tmpdir(), 'dw-restart-sandbox-'));
  const keyFile = path.join(sandbox, 'key.json');
  writeFileSync(keyFile, JSON.stringify(key));
  env = { PATH: process.env.PATH!, HOME: sandbox, DUMBWAITER_SPOOL: host.spool, DUMBWAITER_KEY_FILE: keyFile, PYTHONDONTWRITEBYTECODE: '1' };
  for (const [id, answer] of Object.entries(ANSWERS)) writeFileSync(path.join(answers, id), String(answer));

  const first = await host.startDaemon();
  for (const id of Object.keys(ANSWERS)) host.submit(key, id, 'deploy', { go: goFile(id) });
  host.submit(key, ORPHAN, 'sleeper', { go: goFile(ORPHAN) });
  for (const id of [...Object.keys(ANSWERS), ORPHAN]) {
    await host.waitResult(id, ['running']);
    trackGroup(await host.runPid(id));
    await eventually(`${id} to have started`, () => (runs(id) === 1 ? true : undefined));
  }
  await host.crash(first); // the daemon and its run keeper
  // The deploys end with the host; the sleeper lives on.
  for (const id of Object.keys(ANSWERS)) writeFileSync(goFile(id), '');
  for (const id of Object.keys(ANSWERS)) await host.runGone(id);
  await host.startDaemon();
  await eventually(`${ORPHAN} to be orphaned`, () => (host.result(ORPHAN)?.orphaned ? true : undefined));
  for (const id of Object.keys(ANSWERS)) await eventually(`the reconcile check of ${id}`, () => (host.result(id)?.reconcile ? true : undefined));
  for (const f of ['dw.cjs', 'dw.py']) copyFileSync(path.join(host.spool, 'bin', f), path.join(sandbox, f));
}, 120_000);

afterAll(async () => {
  await host.cleanup();
  stopGroups();
  rmSync(sandbox, { recursive: true, force: true });
});

type Dw = 'dw.cjs' | 'dw.py';

function dw(client: Dw, args: string[]) {
  const [cmd, ...argv] = client === 'dw.cjs' ? [process.execPath, path.join(sandbox, client), ...args] : ['python3', path.join(sandbox, client), ...args];
  const r = spawnSync(cmd!, argv, { encoding: 'utf8', cwd: sandbox, env, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const APPLIED = "rs-applied succeeded: the host's reconcile check says it took effect (exit code 0)";
const NOT_APPLIED = "rs-not-applied failed: the host's reconcile check says it did not take effect (exit code 1): safe to retry with a new id";
const UNKNOWN = "rs-unknown uncertain: the host's reconcile check says it could not tell (exit code 3); ask the person who runs the host to settle it";
const STILL_RUNNING = `${ORPHAN} is still running after the host restarted: the host watches it until it ends (dw cancel ${ORPHAN} ends it)`;

describe.each(['dw.cjs', 'dw.py'] as const)('%s', (client) => {
  it('says what the reconcile check found, one line each, and exits with the signed result: 0, 86 (not_applied), 84', () => {
    // Each said once: the host's message on not_applied is not said again beside the check's line.
    expect(dw(client, ['wait', 'rs-applied'])).toMatchObject({ status: 0, stderr: `dw: ${APPLIED}\n` });
    expect(dw(client, ['wait', 'rs-not-applied'])).toMatchObject({ status: 86, stderr: `dw: ${NOT_APPLIED}\n` });
    expect(dw(client, ['wait', 'rs-unknown'])).toMatchObject({ status: 84, stderr: `dw: ${UNKNOWN}\n` });
    expect(dw(client, ['status', 'rs-unknown']).stdout).toBe(`${UNKNOWN}\n`);
    expect(dw(client, ['status', 'rs-applied']).stdout).toBe(`${APPLIED}\n`);
    for (const id of Object.keys(ANSWERS)) expect(runs(id)).toBe(1); // never run again
  });

  it('says a run still runs after the host restarted: status, and a wait that ends first (85)', () => {
    expect(dw(client, ['status', ORPHAN]).stdout).toContain(`${STILL_RUNNING}\n`);
    const w = dw(client, ['wait', ORPHAN, '--timeout', '0.5']);
    expect(w.status).toBe(85);
    expect(w.stderr).toContain(`dw: ${STILL_RUNNING}\n`);
    const alive = dw(client, ['run', 'echo', `msg=alive-${client}`]);
    expect(alive.status).toBe(0);
    expect(alive.stdout).toBe(`alive-${client}\n`);
  });
});

describe('dw mcp', () => {
  it('gives the orphan and the reconcile check in the result, with its line', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(sandbox, 'dw.cjs'), 'mcp', '--wait-s', '1'], env, cwd: sandbox, stderr: 'pipe' });
    const client = new Client({ name: 'restart-clients-test', version: '1' });
    await client.connect(transport);
    try {
      const body = async (name: string, id: string) =>
        JSON.parse((((await client.callTool({ name, arguments: { id } })) as CallToolResult).content[0] as { text: string }).text) as Record<string, unknown>;
      expect(await body('dumbwaiter_status', ORPHAN)).toMatchObject({ state: 'running', orphaned: true, notes: [STILL_RUNNING] });
      expect(await body('dumbwaiter_wait', ORPHAN)).toMatchObject({ state: 'running', orphaned: true, notes: [STILL_RUNNING] });
      expect(await body('dumbwaiter_status', 'rs-not-applied')).toMatchObject({
        state: 'failed',
        error: { code: 'not_applied' },
        resolved_by: 'reconcile',
        reconcile: { exit_code: 1, verdict: 'not_applied' },
        notes: [NOT_APPLIED],
      });
      const unknown = await body('dumbwaiter_status', 'rs-unknown');
      expect(unknown).toMatchObject({ state: 'uncertain', error: { code: 'interrupted' }, reconcile: { exit_code: 3, verdict: 'unknown' }, notes: [UNKNOWN] });
      // The host's command that settles it is the human's: the agent cannot run it.
      expect(JSON.stringify(unknown)).not.toContain('dumbwaiter resolve');
      expect(host.result('rs-unknown')!.error!.message).toContain('dumbwaiter resolve rs-unknown --check');
    } finally {
      await client.close();
    }
  });
});

describe('the orphan, cancelled from the sandbox', () => {
  it('is ended: dw wait exits 83, and it never says it still runs', async () => {
    const cancel = dw('dw.py', ['cancel', ORPHAN]);
    expect(cancel.status).toBe(0);
    await host.runGone(ORPHAN);
    for (const client of ['dw.cjs', 'dw.py'] as const) {
      const w = dw(client, ['wait', ORPHAN]);
      expect(w.status).toBe(83);
      expect(w.stderr).not.toContain('still running');
    }
  });
});
