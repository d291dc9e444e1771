// The log the agent reads is the host's. Sandbox code chooses request ids, so it can put something at
// results/<id>.log before the request is even sent: a folder (one of mode 000 too, which the daemon, as
// an ordinary user where AS_USER allows, must make movable first), a symlink to a host file, a FIFO.
// The real daemon moves it to quarantine, records it, and makes the log itself: the run's log holds
// exactly its output, and the signed result's log_bytes and log_sha256 are those of that file. The
// sandbox replacing the log with its own text after the run gets nowhere: both clients in the spool
// (dw.cjs through node, dw.py) say the live output is not what the host logged and print the host's
// signed output after it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import path from 'node:path';
import { TestHost, sandboxWithClients } from '../helpers/host';
import { allowlistYaml } from '../helpers/allowlists';
import { AS_USER, NO_UNPRIVILEGED_USER } from '../helpers/processes';
import type { KeyFile, ResultDoc } from '../../shared/protocol/types';

const ALLOWLIST = allowlistYaml({ name: 'suite', command: ['/bin/sh', '-c', 'echo "3 of 128 tests FAILED"; echo "see test_parser.py"'] }, { name: 'quiet', command: ['/bin/true'] });
const SUITE_OUTPUT = '3 of 128 tests FAILED\nsee test_parser.py\n';
const FORGED = 'All 128 tests PASSED\n';

let host: TestHost;
let key: KeyFile;
let sandbox: string;
let precious: string;
const asUser = AS_USER !== null;

beforeAll(async () => {
  host = new TestHost(ALLOWLIST);
  key = host.createKey('sandbox', 'read');
  precious = path.join(host.root, 'precious.txt');
  writeFileSync(precious, "the host user's own file\n");
  await host.startDaemon({}, { asUser });
  // The clients as the sandbox has them: copied out of the spool's bin/, with its key.
  sandbox = sandboxWithClients(host.spool, key).dir;
});

afterAll(async () => {
  await host?.cleanup();
  if (sandbox) rmSync(sandbox, { recursive: true, force: true });
});

if (!asUser) console.warn(`plantedLog: the daemon runs with root's powers and the mode-000 folder is skipped: ${NO_UNPRIVILEGED_USER}`);

const logFile = (id: string) => path.join(host.spool, 'results', `${id}.log`);
const quarantined = (id: string) => readdirSync(path.join(host.spool, 'quarantine')).filter((n) => n.endsWith(`-${id}.log`));
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

function mkfifo(p: string): void {
  const r = spawnSync('mkfifo', [p]);
  if (r.status !== 0) throw new Error(`mkfifo ${p}: ${r.stderr}`);
}

/** What the sandbox puts at the log's name before it sends the request, and how it is seen in quarantine. */
const PLANTS: Record<string, { plant: (file: string) => void; is: (st: Stats) => boolean; found: RegExp; asUserOnly?: boolean }> = {
  'a folder': {
    plant: (f) => {
      mkdirSync(f);
      writeFileSync(path.join(f, 'inside'), 'x');
    },
    is: (st) => st.isDirectory(),
    found: /was a folder the host did not make/,
  },
  'a folder of mode 000': {
    plant: (f) => {
      mkdirSync(f);
      chmodSync(f, 0o000);
    },
    is: (st) => st.isDirectory(),
    found: /was a folder the host did not make/,
    asUserOnly: true,
  },
  'a symlink to a host file': { plant: (f) => symlinkSync(precious, f), is: (st) => st.isSymbolicLink(), found: /was a symbolic link the host did not make/ },
  'a FIFO': { plant: (f) => mkfifo(f), is: (st) => st.isFIFO(), found: /was a FIFO the host did not make/ },
};
const KINDS = Object.keys(PLANTS).filter((k) => asUser || !PLANTS[k]!.asUserOnly);

/** `dw run` of a client in the sandbox (a replay of a request already sent: the same id and arguments). */
function dwRun(client: 'dw.cjs' | 'dw.py', args: string[]) {
  const program = client === 'dw.cjs' ? process.execPath : 'python3';
  const r = spawnSync(program, [path.join(sandbox, client), 'run', ...args], {
    cwd: sandbox,
    encoding: 'utf8',
    env: { PATH: process.env.PATH!, HOME: sandbox, DUMBWAITER_SPOOL: host.spool, DUMBWAITER_KEY_FILE: path.join(sandbox, 'key.json') },
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The sandbox puts its own text where the log is: written aside, renamed over the name. */
function forge(id: string, text: string): void {
  const tmp = path.join(host.spool, 'tmp', `forged-${id}`);
  writeFileSync(tmp, text);
  rmSync(logFile(id), { recursive: true, force: true });
  renameSync(tmp, logFile(id));
}

/** The run's log must be the host's: a regular file holding exactly `output`, as the signed result says. */
function expectHostLog(r: ResultDoc, output: string): void {
  const st = lstatSync(logFile(r.id));
  expect(st.isFile() && st.nlink === 1).toBe(true);
  const bytes = readFileSync(logFile(r.id));
  expect(bytes.toString()).toBe(output);
  expect({ log_bytes: r.log_bytes, log_sha256: r.log_sha256 }).toEqual({ log_bytes: bytes.length, log_sha256: sha256(bytes) });
}

describe('something the sandbox put at results/<id>.log before the request', () => {
  it.each(KINDS)('%s is moved to quarantine and recorded; the run has the host\'s log, which the signed result describes', async (kind) => {
    const { plant, is, found } = PLANTS[kind]!;
    const id = `planted-${KINDS.indexOf(kind)}`;
    plant(logFile(id));
    host.submit(key, id, 'suite');
    const r = await host.waitResult(id);
    expect(r).toMatchObject({ state: 'succeeded', exit_code: 0, stdout: SUITE_OUTPUT });
    expectHostLog(r, SUITE_OUTPUT);

    const [moved, ...more] = quarantined(id);
    expect(more).toEqual([]);
    expect(is(lstatSync(path.join(host.spool, 'quarantine', moved!)))).toBe(true);
    const entries = host.audit('', 'log_quarantined').filter((e) => e.request_id === id);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.message).toMatch(found);
    expect(entries[0]!.message).toContain(`moved to quarantine/${moved}`);
    expect(readFileSync(precious, 'utf8')).toBe("the host user's own file\n");
  });

  it('a run that prints nothing gets an empty log of the host\'s in place of what was planted', async () => {
    symlinkSync(precious, logFile('planted-quiet'));
    host.submit(key, 'planted-quiet', 'quiet');
    const r = await host.waitResult('planted-quiet');
    expect(r).toMatchObject({ state: 'succeeded', exit_code: 0, stdout: '' });
    expectHostLog(r, '');
    expect(quarantined('planted-quiet')).toHaveLength(1);
    expect(readFileSync(precious, 'utf8')).toBe("the host user's own file\n");
  });
});

describe("the host's log replaced by the sandbox's text after the run", () => {
  it.each(['dw.cjs', 'dw.py'] as const)('%s shows the forged text only with a note that it is not what the host logged, then the signed output', async (client) => {
    const id = `forged-after-${client.replace('.', '-')}`;
    mkdirSync(logFile(id)); // the attack of issue 31: a folder, so the host makes no log ...
    host.submit(key, id, 'suite');
    const r = await host.waitResult(id);
    expectHostLog(r, SUITE_OUTPUT);
    forge(id, FORGED); // ... and the sandbox's text in its place
    const run = dwRun(client, ['suite', '--id', id]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${FORGED}${SUITE_OUTPUT}`);
    expect(run.stderr).toContain(`dw: the live output above is not what the host logged (results/${id}.log was changed by someone else); the host's signed output follows:`);
  });
});
