// The bundled sandbox client (spool/bin/dw.cjs), copied out of the spool and run with no node_modules,
// against the real daemon: the round trip, every exit code, typed arguments, a client killed after
// submitting, doctor, what it believes (only what the host signed for its key, bound to the request
// it sent) against forged results, conflicts, planted logs and files that are not files, a stopped
// host, permission denied, and the MCP server through the SDK's own client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { GATED_OP, TestHost, clockPast, eventually, type DaemonProcess } from '../helpers/host';
import { AS_USER, NO_UNPRIVILEGED_USER, track } from '../helpers/processes';
import { signHostDoc } from '../../shared/protocol/hostAuth';
import { decodeSecret } from '../../shared/protocol/sign';
import type { CatalogDoc, KeyFile, ResultDoc } from '../../shared/protocol/types';
import { SETTLE_GRACE_MS } from '../../shared/client/spoolClient';
import { MAX_LIVE_LOG_BYTES } from '../../shared/client/spoolFiles';
import { FORGED_LOG, SUITE_OP, logForger, waitingSaid } from '../helpers/clientCases';
import { allowlistYaml, echoOp } from '../helpers/allowlists';

let host: TestHost;
let daemon: DaemonProcess;
let bin: string;
let env: Record<string, string>;
let readEnv: Record<string, string>;
let readKeyFile: KeyFile;

const OPS = (root: string) =>
  allowlistYaml(
    echoOp({ description: 'Print the words' }),
    {
      name: 'typed',
      description: 'Show typed arguments',
      command: ['echo', 'workers={workers}', '{verbose}', '{files}'],
      args: { workers: { type: 'integer', min: 1, max: 8 }, verbose: { type: 'boolean', flag: '--verbose' }, files: { type: 'array', items: { type: 'string', pattern: '[a-z.]+' }, max_items: 3 } },
    },
    { name: 'fail', command: ['/bin/sh', '-c', 'echo failing >&2; exit 3'] },
    { name: 'exits87', command: ['/bin/sh', '-c', 'exit 87'] },
    { name: 'slow', command: ['/bin/sh', '-c', 'echo started; sleep 30'], concurrency: 4 },
    { name: 'deploy', command: ['echo', 'deployed'], scope: 'write', approval: 'always' },
    { name: 'nowhere', command: ['/nonexistent/tool'] },
    GATED_OP,
    SUITE_OP,
    { name: 'fresh', command: ['echo', 'fresh'], cwd: root },
  );

beforeAll(async () => {
  host = new TestHost();
  host.writeAllowlist(OPS(host.work));
  // A sandbox with nothing but a copy of the spool's bin/ folder: no node_modules anywhere above it.
  bin = mkdtempSync(path.join(os.tmpdir(), 'dw-sandbox-'));
  const keyFile = path.join(bin, 'key.json');
  writeFileSync(keyFile, JSON.stringify(host.createKey('node-client', 'write')));
  const readKey = path.join(bin, 'read-key.json');
  readKeyFile = host.createKey('reader', 'read');
  writeFileSync(readKey, JSON.stringify(readKeyFile));
  env = { DUMBWAITER_SPOOL: host.spool, DUMBWAITER_KEY_FILE: keyFile };
  readEnv = { DUMBWAITER_SPOOL: host.spool, DUMBWAITER_KEY_FILE: readKey };
  daemon = await host.startDaemon();
  copyFileSync(path.join(host.spool, 'bin', 'dw.cjs'), path.join(bin, 'dw.cjs'));
});

afterAll(async () => {
  await host.cleanup();
  rmSync(bin, { recursive: true, force: true });
});

function dw(args: string[], e: Record<string, string> = env, timeout = 30_000) {
  const r = spawnSync(process.execPath, [path.join(bin, 'dw.cjs'), ...args], {
    encoding: 'utf8',
    cwd: bin,
    env: { PATH: process.env.PATH!, HOME: bin, ...e },
    timeout,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('dw from the spool bin/ folder', () => {
  it('lists the operations with their arguments', () => {
    const r = dw(['ops']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('typed');
    expect(r.stdout).toContain('workers: integer (>= 1, <= 8, required)');
    expect(r.stdout).toContain('files: list of string');
    const json = JSON.parse(dw(['ops', '--json']).stdout) as CatalogDoc['operations'];
    expect(json.map((o) => o.name)).toContain('echo');
  });

  it('runs a request: the id on stderr at once, the live output on stdout, exit 0', () => {
    const r = dw(['run', 'echo', 'msg=hello; rm -rf ~']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('hello; rm -rf ~\n');
    const id = r.stderr.trim().split('\n')[0]!;
    expect(host.result(id)?.state).toBe('succeeded');
  });

  it('types arguments by the catalog', () => {
    const r = dw(['run', 'typed', 'workers=4', 'verbose=true', 'files=a.ts', 'files=b.ts']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('workers=4 --verbose a.ts b.ts\n');
    const id = r.stderr.trim();
    expect(host.service((s) => s.requests.get(id)?.args_json)).toBe('{"workers":4,"verbose":true,"files":["a.ts","b.ts"]}');
  });

  it.each([
    [['workers=four'], 'argument "workers" must be an integer'],
    [['workers=9'], 'argument "workers" must be at most 8'],
    [['workers=2', 'colour=red'], 'unknown argument "colour"'],
    [['verbose=true'], 'missing required argument "workers"'],
    [['workers=2', 'files=UPPER'], 'argument "files[0]" does not match'],
    [['workers=2', '__proto__=x'], 'unknown argument "__proto__"'],
  ])('refuses %j before writing anything (exit 65)', (pairs, message) => {
    const before = readdirSync(path.join(host.spool, 'queue')).length;
    const r = dw(['submit', 'typed', ...pairs]);
    expect(r.status).toBe(65);
    expect(r.stderr).toContain(message);
    expect(readdirSync(path.join(host.spool, 'queue')).length).toBe(before);
    expect(readdirSync(path.join(host.spool, 'tmp'))).toEqual([]);
  });

  it('passes a failing operation\'s exit code through, saying it is the operation\'s', () => {
    const r = dw(['run', 'fail']);
    expect(r.status).toBe(3);
    expect(r.stdout).toContain('failing');
    expect(r.stderr).toContain(`dw: ${r.stderr.split('\n')[0]} failed: the operation exited with 3\n`);
  });

  it('an operation that exits with one of dw\'s codes (87, "conflict") is told apart by its words', () => {
    const r = dw(['run', 'exits87']);
    expect(r.status).toBe(87);
    const id = r.stderr.split('\n')[0]!;
    expect(r.stderr).toContain(`dw: ${id} failed: the operation exited with 87\n`);
    expect(r.stderr).not.toContain('conflict');
    expect(host.result(id)).toMatchObject({ state: 'failed', exit_code: 87 });
  });

  it('an id that is not one (a path out of results/ and queue/) is a usage error (64) for status, wait and cancel', () => {
    // A result signed for this key, at a name a path-like id would reach outside results/.
    const key = JSON.parse(readFileSync(env.DUMBWAITER_KEY_FILE!, 'utf8')) as KeyFile;
    plant('tmp/outside.json', forgedResult('../tmp/outside', key));
    for (const args of [['status', '../tmp/outside'], ['wait', '../tmp/outside'], ['cancel', '../tmp/outside'], ['status', '../../../etc/passwd']]) {
      const r = dw(args);
      expect(r.status).toBe(64);
      expect(r.stderr).toContain(`dw: "${args[1]}" is not a valid request id`);
      expect(r.stdout).not.toContain('succeeded');
    }
    rmSync(path.join(host.spool, 'tmp', 'outside.json'));
    expectAlive();
  });

  it('exits 80 when rejected, 86 when the program cannot start', () => {
    const rejected = dw(['run', 'deploy'], readEnv);
    expect(rejected.status).toBe(80);
    expect(rejected.stderr).toContain('scope_denied');
    expect(dw(['run', 'nowhere']).status).toBe(86);
  });

  it('exits 81 when a human denies it', async () => {
    const id = dw(['submit', 'deploy']).stdout.trim();
    await host.waitResult(id, ['awaiting_approval']);
    expect(host.cli(['approvals', 'deny', id, '--reason', 'no']).status).toBe(0);
    const r = dw(['wait', id]);
    expect(r.status).toBe(81);
    expect(r.stderr).toContain('denied');
  });

  it('dw run and dw wait say once that the request waits for a human, and when it is denied if nobody decides; then its outcome once approved', async () => {
    const run = dwLive(['run', 'deploy', '--id', 'said-run']);
    const waiting = await host.waitResult('said-run', ['awaiting_approval']);
    const wait = dwLive(['wait', 'said-run']);
    await run.says("request said-run waits for a human's decision");
    await wait.says("request said-run waits for a human's decision");
    expect(host.cli(['approvals', 'approve', 'said-run']).status).toBe(0);
    expect([await run.exited, run.stdout, await wait.exited, wait.stdout]).toEqual([0, 'deployed\n', 0, 'deployed\n']);
    for (const { stderr } of [run, wait]) {
      const { said, expected } = waitingSaid(stderr, waiting);
      expect(said).toEqual([expected]);
    }
    expect(waitingSaid(run.stderr, waiting).expected).toMatch(/^dw: request said-run waits for a human's decision; unless decided, it is denied automatically at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in N min\)$/);
  });

  it('exits 82 when it expired before it could start', async () => {
    expect(host.cli(['pause']).status).toBe(0);
    const id = dw(['submit', 'fresh', '--expires-in', '1']).stdout.trim();
    await host.waitResult(id, ['queued']);
    // Until its expiry time has passed: a time on the clock, not an event.
    await clockPast(Date.parse(host.service((svc) => svc.requests.get(id)!.expires_at!)));
    expect(host.cli(['resume']).status).toBe(0);
    expect(dw(['wait', id]).status).toBe(82);
  });

  it('exits 85 when dw wait --timeout passes first, and 83 once cancelled; a killed client can reattach with dw wait', async () => {
    // A client that dies right after submitting: the request lives on, and a new client finds it.
    const child = track(spawn(process.execPath, [path.join(bin, 'dw.cjs'), 'run', 'slow'], { env: { PATH: process.env.PATH!, ...env } }));
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const id = await eventually('the id on stderr', () => (err.includes('\n') ? err.split('\n')[0] : undefined));
    await host.waitResult(id, ['running']);
    child.kill('SIGKILL');
    const pending = dw(['wait', id, '--timeout', '0.5']);
    expect(pending.status).toBe(85);
    expect(pending.stderr).toContain(`dw wait ${id}`);
    const cancel = dw(['cancel', id]);
    expect(cancel.status).toBe(0);
    expect(cancel.stdout).toContain(id);
    expect(dw(['wait', id]).status).toBe(83);
    expect(JSON.parse(dw(['status', id, '--json']).stdout).state).toBe('cancelled');
  });

  it('shows the inbox: a conflict on a reused id', async () => {
    expect(dw(['run', 'echo', 'msg=one', '--id', 'reused-1']).status).toBe(0);
    expect(dw(['submit', 'echo', 'msg=two', '--id', 'reused-1']).status).toBe(0);
    await eventually('the conflict message', () => host.inbox().find((m) => m.ref === 'reused-1'));
    const r = dw(['inbox']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/conflict \(reused-1\)/);
    // What the host signed for this key, as the host wrote it (without the signature's prefix).
    expect(JSON.parse(dw(['inbox', '--json']).stdout)).toEqual(host.inbox().map(({ auth: _auth, ...m }) => m));
  });

  it("doctor passes with the host up, and shows the host's probe of the spool's mount", async () => {
    await eventually("the host's probe in host.json", () => ('probe' in (JSON.parse(readFileSync(path.join(host.spool, 'host.json'), 'utf8')) as object) ? true : undefined));
    const r = dw(['doctor']);
    expect(r.stdout).toMatch(/^ok {4}mount, as the host probed it: (ok|degraded): [\w.]+: /m);
    expect(r.stdout).toContain('ok    key accepted');
    expect(r.stdout).toContain('ok    results signed');
    expect(r.stdout).toContain('ok    clocks');
    expect(r.stdout).not.toContain('FAIL');
    expect(r.status).toBe(0);
  });

  it('exits 84 for a run left uncertain by a host crash', async () => {
    const id = dw(['submit', 'slow']).stdout.trim();
    await host.waitResult(id, ['running']);
    const pid = await host.runPid(id); // recorded just after the start: without it, the orphan below would live on
    await daemon.kill9();
    // Its processes end with the host (a run found alive at the start would be watched as an orphan).
    process.kill(-pid, 'SIGKILL');
    await host.runGone(id);
    daemon = await host.startDaemon();
    const r = dw(['wait', id]);
    expect(r.status).toBe(84);
    expect(r.stderr).toContain(`dw: ${id} uncertain: `);
  });

  it('doctor with the host stopped still sends the ping, with a shorter wait, exits 69 and takes the unanswered ping back out of queue/', async () => {
    await daemon.stop();
    const queued = readdirSync(path.join(host.spool, 'queue'));
    const r = dw(['doctor']);
    expect(r.status).toBe(69);
    expect(r.stdout).toContain('FAIL  the host is not running (since');
    expect(r.stdout).toContain('FAIL  key not accepted: no answer within 5 s (unclaimed)');
    expect(readdirSync(path.join(host.spool, 'queue'))).toEqual(queued); // a host back later finds no ping
    daemon = await host.startDaemon();
  });

  it('doctor believes the host\'s signed answer to its ping over a host.json that says the host is not running', async () => {
    // A folder where host.json was: the host cannot write it again meanwhile, and it says nothing a client can read.
    const hostJson = path.join(host.spool, 'host.json');
    // A heartbeat can put the file back between the two steps: then again.
    await eventually('a folder in host.json\'s place', () => {
      rmSync(hostJson, { force: true });
      try {
        mkdirSync(hostJson);
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
        throw e;
      }
    });
    try {
      const r = dw(['doctor']);
      expect(r.stdout).toContain('ok    the host is running: it answered the ping, signed for this key (host.json says otherwise: the host is not running (host.json has no heartbeat))');
      expect(r.stdout).toContain('ok    key accepted');
      expect(r.stdout).not.toContain('FAIL');
      expect(r.status).toBe(0);
    } finally {
      rmSync(hostJson, { recursive: true, force: true });
    }
    // Until the next heartbeat writes host.json again, clients rightly say the host has never run.
    await eventually('host.json written again', () => (statSync(hostJson, { throwIfNoEntry: false })?.isFile() ? true : undefined));
    expectAlive();
  });
});

/** dw in the background, its output as it comes. */
function dwLive(args: string[], e: Record<string, string> = env) {
  const child = track(spawn(process.execPath, [path.join(bin, 'dw.cjs'), ...args], { cwd: bin, env: { PATH: process.env.PATH!, HOME: bin, ...e } }));
  const live = { stdout: '', stderr: '', code: undefined as number | null | undefined };
  child.stdout.on('data', (c: Buffer) => (live.stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (live.stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve((live.code = code))));
  return Object.assign(live, { exited, says: (text: string) => eventually(`dw ${args[0]} to say "${text}"`, () => (live.stderr.includes(text) || live.stdout.includes(text) ? true : undefined)) });
}

/** dw in the background whose stdout is counted, not kept (it may be a huge log), but for its first and last bytes. */
function dwCounted(args: string[]) {
  const child = track(spawn(process.execPath, [path.join(bin, 'dw.cjs'), ...args], { cwd: bin, env: { PATH: process.env.PATH!, HOME: bin, ...env } }));
  const live = { bytes: 0, head: '', tail: Buffer.alloc(0), stderr: '' };
  child.stdout.on('data', (c: Buffer) => {
    live.bytes += c.length;
    if (live.head.length < 64) live.head += c.subarray(0, 64).toString();
    live.tail = Buffer.concat([live.tail, c.subarray(-256)]).subarray(-256);
  });
  child.stderr.on('data', (c: Buffer) => (live.stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return Object.assign(live, { exited, says: (text: string) => eventually(`dw ${args[0]} to say "${text}"`, () => (live.stderr.includes(text) ? true : undefined)) });
}

/** After each attack: the host still answers a valid request, and the client believes it. */
function expectAlive(): void {
  const r = dw(['run', 'echo', `msg=alive-${randomBytes(3).toString('hex')}`]);
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^alive-/);
}

/** A result document as a forger would write it, for `key` (signed with its secret) or unsigned. */
function forgedResult(id: string, key: KeyFile | null, over: Partial<ResultDoc> = {}): string {
  const doc: ResultDoc = {
    v: 1, id, op: 'echo', state: 'succeeded', updated_at: new Date().toISOString(), exit_code: 0, signal: null, stdout: 'FORGED\n', stderr: '',
    stdout_truncated: false, stderr_truncated: false, started_at: null, finished_at: null, duration_ms: 1, error: null, ...over,
  };
  const text = JSON.stringify(doc, null, 2) + '\n';
  return key ? signHostDoc('result', { keyId: key.key_id, secret: decodeSecret(key.secret) }, text) : text;
}

function plant(rel: string, content: string): void {
  const tmp = path.join(host.spool, 'tmp', `plant-${randomBytes(4).toString('hex')}`);
  writeFileSync(tmp, content);
  renameSync(tmp, path.join(host.spool, rel));
}

const count = (text: string, part: string) => text.split(part).length - 1;

describe('dw believes only what the host signed for its key', () => {
  it('a reused id with other arguments exits 87 with the host\'s conflict message and never shows the old run; the same request again is a replay (exit 0)', () => {
    const first = dw(['run', 'echo', 'msg=first', '--id', 'rep-1']);
    expect(first.status).toBe(0);
    expect(first.stdout).toBe('first\n');
    const second = dw(['run', 'echo', 'msg=second', '--id', 'rep-1']);
    expect(second.status).toBe(87);
    expect(second.stdout).toBe('');
    expect(second.stderr).not.toContain('first');
    expect(second.stderr).toContain('Request id "rep-1" is already bound to your earlier request (operation echo); nothing was run');
    const replay = dw(['run', 'echo', 'msg=first', '--id', 'rep-1']);
    expect(replay.status).toBe(0);
    expect(replay.stdout).toBe('first\n');
    // A new process that did not send it reports the key's own signed result as it is.
    expect(dw(['wait', 'rep-1']).status).toBe(0);
    expectAlive();
  });

  it('an id bound by another key exits 87, and its result (signed for that key) is ignored', () => {
    expect(dw(['run', 'echo', 'msg=mine', '--id', 'other-key-1']).status).toBe(0);
    const theirs = dw(['run', 'echo', 'msg=theirs', '--id', 'other-key-1'], readEnv);
    expect(theirs.status).toBe(87);
    expect(theirs.stdout).toBe('');
    expect(theirs.stderr).toContain('is already bound to a request of another key; nothing was run');
    expect(count(theirs.stderr, `ignored results/other-key-1.json: the host did not sign it for this key (signed for key ${JSON.parse(readFileSync(env.DUMBWAITER_KEY_FILE!, 'utf8')).key_id})`)).toBe(1);
    // Later, from a process that never sent it: the host's conflict message for this key.
    expect(dw(['wait', 'other-key-1'], readEnv).status).toBe(87);
    expectAlive();
  });

  it('a forged result planted before the request (unsigned, or signed with a read key of the same host) is never reported: the real outcome is, and the client says once it ignored it', async () => {
    await daemon.stop(); // so that nothing the host does can take the forgeries away before the client meets them
    plant('results/fb-unsigned.json', forgedResult('fb-unsigned', null));
    plant('results/fb-read-key.json', forgedResult('fb-read-key', readKeyFile));
    const unsigned = dwLive(['run', 'echo', 'msg=real-1', '--id', 'fb-unsigned']);
    const readSigned = dwLive(['run', 'echo', 'msg=real-2', '--id', 'fb-read-key']);
    await unsigned.says('ignored results/fb-unsigned.json: the host did not sign it for this key (unsigned)');
    await readSigned.says(`ignored results/fb-read-key.json: the host did not sign it for this key (signed for key ${readKeyFile.key_id})`);
    expect(unsigned.code).toBeUndefined(); // still waiting: the forgery is no answer
    expect(readSigned.code).toBeUndefined();
    daemon = await host.startDaemon();
    expect(await unsigned.exited).toBe(0);
    expect(await readSigned.exited).toBe(0);
    expect(unsigned.stdout).toBe('real-1\n');
    expect(readSigned.stdout).toBe('real-2\n');
    expect(count(unsigned.stderr, 'ignored results/fb-unsigned.json')).toBe(1);
    expect(count(readSigned.stderr, 'ignored results/fb-read-key.json')).toBe(1);
    expectAlive();
  });

  it('a forged result planted while the request awaits approval (signed with a read key, or unsigned) is not its outcome: the approval or the denial (81) is', async () => {
    const approved = dw(['submit', 'deploy', '--id', 'fa-approved']).stdout.trim();
    const denied = dw(['submit', 'deploy', '--id', 'fa-denied']).stdout.trim();
    await host.waitResult(approved, ['awaiting_approval']);
    await host.waitResult(denied, ['awaiting_approval']);
    await daemon.stop(); // the host would soon write its own result again over a forgery
    const w1 = dwLive(['wait', approved]);
    const w2 = dwLive(['wait', denied]);
    plant(`results/${approved}.json`, forgedResult(approved, readKeyFile, { op: 'deploy' }));
    plant(`results/${denied}.json`, forgedResult(denied, null, { op: 'deploy' }));
    await w1.says(`ignored results/${approved}.json: the host did not sign it for this key (signed for key ${readKeyFile.key_id})`);
    await w2.says(`ignored results/${denied}.json: the host did not sign it for this key (unsigned)`);
    expect(w1.code).toBeUndefined();
    expect(w2.code).toBeUndefined();
    daemon = await host.startDaemon();
    expect(host.cli(['approvals', 'approve', approved]).status).toBe(0);
    expect(host.cli(['approvals', 'deny', denied, '--reason', 'no']).status).toBe(0);
    expect(await w1.exited).toBe(0);
    expect(w1.stdout).toBe('deployed\n');
    expect(await w2.exited).toBe(81);
    expect(w2.stdout).toBe('');
    expectAlive();
  });

  it.skipIf(process.platform === 'win32')('a FIFO or a symlink at results/<id>.json neither blocks nor crashes the client', async () => {
    await daemon.stop();
    expect(spawnSync('mkfifo', [path.join(host.spool, 'results', 'fifo-json.json')]).status).toBe(0);
    writeFileSync(path.join(bin, 'elsewhere.json'), forgedResult('link-json', JSON.parse(readFileSync(env.DUMBWAITER_KEY_FILE!, 'utf8')) as KeyFile));
    symlinkSync(path.join(bin, 'elsewhere.json'), path.join(host.spool, 'results', 'link-json.json'));
    const fifo = dwLive(['run', 'echo', 'msg=past-the-fifo', '--id', 'fifo-json']);
    const link = dwLive(['run', 'echo', 'msg=past-the-link', '--id', 'link-json']);
    await fifo.says('ignored results/fifo-json.json: it is not a regular file');
    await link.says('ignored results/link-json.json: it is not a regular file'); // though it leads to a file signed for this key
    expect(dw(['status', 'fifo-json']).stdout).toContain('unclaimed');
    daemon = await host.startDaemon();
    expect(await fifo.exited).toBe(0);
    expect(await link.exited).toBe(0);
    expect(fifo.stdout).toBe('past-the-fifo\n');
    expect(link.stdout).toBe('past-the-link\n');
    expectAlive();
  });

  it.skipIf(process.platform === 'win32')('a FIFO or a symlink at results/<id>.log is never opened as the log: the signed output is shown', async () => {
    const secret = path.join(bin, 'secret.txt');
    writeFileSync(secret, 'SECRET of the sandbox\n');
    for (const [id, swap] of [
      ['fifo-log', (f: string) => expect(spawnSync('mkfifo', [f]).status).toBe(0)],
      ['link-log', (f: string) => symlinkSync(secret, f)],
    ] as const) {
      const go = path.join(host.work, `go-${id}`);
      expect(dw(['submit', 'gated', `go=${go}`, '--id', id]).status).toBe(0);
      await host.waitResult(id, ['running']);
      const log = path.join(host.spool, 'results', `${id}.log`);
      // The result says running just before the run opens its log.
      await eventually('the host\'s log', () => (existsSync(log) && readFileSync(log).includes('started') ? true : undefined));
      rmSync(log);
      swap(log);
      // The same request again (a replay) follows the run that is going: through what is now at the log's name.
      const follower = dwLive(['run', 'gated', `go=${go}`, '--id', id]);
      await follower.says(id);
      writeFileSync(go, '');
      expect(await follower.exited).toBe(0);
      expect(follower.stdout).toBe('started\ndone\n'); // the host's signed output, nothing of the planted file
    }
    expectAlive();
  });

  it('a log planted before the run starts is not streamed', async () => {
    const id = dw(['submit', 'deploy', '--id', 'planted-log']).stdout.trim();
    await host.waitResult(id, ['awaiting_approval']);
    await daemon.stop();
    writeFileSync(path.join(host.spool, 'results', `${id}.log`), 'PLANTED\n');
    const run = dwLive(['run', 'deploy', '--id', id]); // a replay: follows the request that waits
    await run.says('the host is not running'); // it has looked at the result and the log at least once
    expect(run.stdout).toBe('');
    daemon = await host.startDaemon();
    expect(host.cli(['approvals', 'approve', id]).status).toBe(0);
    expect(await run.exited).toBe(0);
    expect(run.stdout).toBe('deployed\n');
    expectAlive();
  });

  it('a log changed during the run is detected at the end, and the host\'s signed output follows', async () => {
    const go = path.join(host.work, 'go-changed-log');
    const run = dwLive(['run', 'gated', `go=${go}`, '--id', 'changed-log']);
    await eventually('the live output', () => (run.stdout.includes('started\n') ? true : undefined));
    appendFileSync(path.join(host.spool, 'results', 'changed-log.log'), 'FORGED\n');
    await eventually('the forged line streamed', () => (run.stdout.includes('FORGED') ? true : undefined));
    writeFileSync(go, '');
    expect(await run.exited).toBe(0);
    const result = host.result('changed-log')!;
    if ('log_sha256' in result) {
      expect(run.stderr).toContain('dw: the live output above is not what the host logged (results/changed-log.log was changed by someone else); the host\'s signed output follows:');
      expect(run.stdout.endsWith(`FORGED\n${result.stdout}`)).toBe(true);
    } else {
      // A host without log_sha256 in its results: the client says it could not check, and adds nothing.
      expect(run.stderr).toContain('could not be checked');
    }
    expectAlive();
  });

  it.skipIf(AS_USER === null)('a live log the sandbox forged (a folder at its name, made again once the host made its log, then its own text) is followed by a note and the host\'s signed output', async () => {
    const go = path.join(host.work, 'go-forged-log');
    const forger = logForger(AS_USER!, host.spool, 'forged-log', go);
    track(forger.proc);
    await forger.said('folder');
    const run = dwLive(['run', 'suite', `go=${go}`, '--id', 'forged-log']);
    await host.waitResult('forged-log', ['running']);
    // The host moved the folder to quarantine and made its own log, which the forger then took away:
    // the run's output goes to the host's file, which no name leads to any more.
    const log = path.join(host.spool, 'results', 'forged-log.log');
    await eventually("the host's own log, then the forger's folder again", () => (host.audit('', 'log_quarantined').some((e) => e.request_id === 'forged-log') && lstatSync(log, { throwIfNoEntry: false })?.isDirectory() ? true : undefined));
    writeFileSync(go, '');
    await forger.said('forged');
    await eventually('the forged text streamed', () => (run.stdout.includes(FORGED_LOG) ? true : undefined));
    writeFileSync(`${go}.end`, '');
    expect(await run.exited).toBe(0);
    expect(run.stdout).toBe(`${FORGED_LOG}3 of 128 tests FAILED\n`);
    expect(run.stderr).toContain("dw: the live output above is not what the host logged (results/forged-log.log was changed by someone else); the host's signed output follows:");
    expectAlive();
  });

  it('a sparse 100 GiB log planted once the run started neither hangs dw run nor fills its memory: --timeout ends it (85), nothing past MAX_LIVE_LOG_BYTES (65 MiB) is shown, and at the end the signed output follows', async () => {
    const go = path.join(host.work, 'go-huge-log');
    const log = path.join(host.spool, 'results', 'huge-log.log');
    const first = dwCounted(['run', 'gated', `go=${go}`, '--id', 'huge-log', '--timeout', '10']);
    await eventually('the live output', () => (first.head.startsWith('started\n') ? true : undefined));
    truncateSync(log, 100 * 1024 ** 3); // the host writes on at the end of the file, after the hole
    expect(await first.exited).toBe(85);
    expect(first.bytes).toBeLessThanOrEqual(MAX_LIVE_LOG_BYTES);
    expect(first.stderr).toContain('huge-log is still running');
    // The same request again follows the run to its end: up to the cap, then the host's signed output.
    const follower = dwCounted(['run', 'gated', `go=${go}`, '--id', 'huge-log']);
    await follower.says(`results/huge-log.log is larger than ${MAX_LIVE_LOG_BYTES} bytes: the live output is not shown further`);
    writeFileSync(go, '');
    expect(await follower.exited).toBe(0);
    const result = host.result('huge-log')!;
    expect(result.stdout).toBe('started\ndone\n');
    expect(follower.bytes).toBe(MAX_LIVE_LOG_BYTES + result.stdout.length);
    expect(follower.tail.toString().endsWith(`\0${result.stdout}`)).toBe(true);
    expect(follower.stderr).toContain('log_sha256' in result ? 'is not what the host logged' : `stopped at ${MAX_LIVE_LOG_BYTES} bytes`);
    expect(count(follower.stderr, 'is larger than')).toBe(1);
    rmSync(log);
    expectAlive();
  });

  it('an unsigned refusal put over the host\'s signed result of a running request is not believed (never exit 80): the real outcome is', async () => {
    const id = 'refusal-over';
    const go = path.join(host.work, `go-${id}`);
    expect(dw(['submit', 'gated', `go=${go}`, '--id', id]).status).toBe(0);
    await host.waitResult(id, ['running']);
    const run = dwLive(['run', 'gated', `go=${go}`, '--id', id]); // a replay: it follows the run
    await eventually('the live output', () => (run.stdout.includes('started\n') ? true : undefined)); // it has seen the signed result
    daemon.proc.kill('SIGSTOP'); // the host would soon put its own result back over the forgery
    try {
      plant(`results/${id}.json`, JSON.stringify({ v: 1, id, op: null, state: 'rejected', updated_at: new Date().toISOString(), error: { code: 'unknown_key', message: 'no key k_forged' } }));
      await run.says(`ignored results/${id}.json: the host did not sign it for this key (unsigned)`);
      // Longer than an unsigned refusal must stand, its request gone from queue/, before it is reported.
      await clockPast(Date.now() + SETTLE_GRACE_MS + 2000);
      expect(run.code).toBeUndefined();
    } finally {
      daemon.proc.kill('SIGCONT');
    }
    writeFileSync(go, '');
    expect(await run.exited).toBe(0);
    expect(run.stdout).toBe('started\ndone\n');
    expect(run.stderr).not.toContain('rejected');
    expectAlive();
  });

  it('a request signed with a key the host does not know exits 80, saying the refusal is not signed', () => {
    const unknown = path.join(bin, 'unknown-key.json');
    writeFileSync(unknown, JSON.stringify({ v: 1, key_id: 'k_nottheirs1', secret: randomBytes(32).toString('base64url') }));
    const r = dw(['run', 'echo', 'msg=x'], { ...env, DUMBWAITER_KEY_FILE: unknown });
    expect(r.status).toBe(80);
    expect(r.stderr).toContain('rejected (not signed by the host, so it may not be the host\'s): unknown_key:');
    expect(r.stderr).toContain('check the key with dw doctor');
    const doctor = dw(['doctor'], { ...env, DUMBWAITER_KEY_FILE: unknown });
    expect(doctor.status).toBe(69);
    expect(doctor.stdout).toContain('FAIL  key not accepted: the host does not know this key / the key file is not the host\'s');
    expect(doctor.stdout).toContain('FAIL  results signed');
    expectAlive();
  });

  it('with the host stopped, dw run says so at once and exits 85 on --timeout, saying so again', async () => {
    await daemon.stop();
    const r = dw(['run', 'echo', 'msg=later', '--id', 'host-down-1', '--timeout', '3']);
    expect(r.status).toBe(85);
    expect(r.stderr).toMatch(/dw: the host is not running \(since \d\d:\d\d:\d\d, per host\.json\); the request waits in queue\/ until it is back/);
    expect(r.stderr).toMatch(/host-down-1 is still unclaimed: the host is not running/);
    daemon = await host.startDaemon();
    const later = dw(['wait', 'host-down-1']);
    expect(later.status).toBe(0);
    expect(later.stdout).toBe('later\n');
    expectAlive();
  });
});

// An ordinary user that does not own the spool: as root, AS_USER drops the powers to override file
// permissions but stays uid 0 (the spool's owner), so setpriv also takes nobody's uid.
const AS_OTHER_UID = AS_USER !== null && process.getuid?.() === 0 ? [...AS_USER, 'setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : null;
const NO_OTHER_UID = AS_USER === null ? NO_UNPRIVILEGED_USER : 'not root here: no other uid to run the client as';

if (AS_OTHER_UID === null) console.warn(`nodeClient: the permission-denied test is skipped: ${NO_OTHER_UID}`);

describe('dw as another uid than the spool\'s owner', () => {
  it.skipIf(AS_OTHER_UID === null)('exits 77 naming the spool, its owner and this uid, and doctor says the same', async () => {
    const other = new TestHost();
    const tmpdir = path.dirname(other.root);
    const modes = [tmpdir, other.root].map((d) => [d, statSync(d).mode & 0o7777] as const);
    const sandbox = mkdtempSync(path.join(tmpdir, 'dw-other-uid-'));
    try {
      // Every folder on the way can be passed through; the spool itself is the owner's alone (0700).
      for (const d of [tmpdir, other.root, sandbox]) chmodSync(d, 0o711);
      chmodSync(other.spool, 0o700);
      copyFileSync(path.join(bin, 'dw.cjs'), path.join(sandbox, 'dw.cjs'));
      writeFileSync(path.join(sandbox, 'key.json'), JSON.stringify(other.createKey('other-uid')), { mode: 0o644 });
      chmodSync(path.join(sandbox, 'dw.cjs'), 0o755);
      const run = (args: string[]) => {
        const [program, ...rest] = [...AS_OTHER_UID!, process.execPath, path.join(sandbox, 'dw.cjs'), ...args];
        return spawnSync(program!, rest, { encoding: 'utf8', cwd: '/', env: { PATH: process.env.PATH!, DUMBWAITER_SPOOL: other.spool, DUMBWAITER_KEY_FILE: path.join(sandbox, 'key.json') }, timeout: 30_000 });
      };
      const message = `permission denied: ${other.spool} is owned by uid 0 (mode 0700) and this runs as uid 65534: run the sandbox as uid 0 (docker run --user 0:`;
      for (const args of [['run', 'echo', 'msg=x'], ['wait', 'some-id'], ['ops']]) {
        const r = run(args);
        expect(r.stderr).toContain(message);
        expect(r.stderr).toContain('see docs/SANDBOX.md, "Permission denied"');
        expect(r.stderr).not.toContain('not a Dumbwaiter spool');
        expect(r.status).toBe(77);
      }
      const doctor = run(['doctor']);
      expect(doctor.stdout).toContain(`FAIL  ${message}`);
      expect(doctor.status).toBe(77);
    } finally {
      for (const [d, mode] of modes) chmodSync(d, mode);
      rmSync(sandbox, { recursive: true, force: true });
      await other.cleanup();
    }
    expectAlive();
  });
});
