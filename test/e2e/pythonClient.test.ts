// The Python sandbox client (spool/bin/dw.py, from shared/client/dw.py) against the real daemon. It is copied into a
// temporary folder and run from there with python3, as a sandbox would run it: only the spool and a
// key file (DUMBWAITER_SPOOL, DUMBWAITER_KEY_FILE). Every command and exit code of docs/SANDBOX.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, closeSync, copyFileSync, cpSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { GATED_OP, TestHost, clockPast, eventually, type DaemonProcess } from '../helpers/host';
import { AS_USER, NO_UNPRIVILEGED_USER, track } from '../helpers/processes';
import { FORGED_LOG, SUITE_OP, logForger, waitingSaid } from '../helpers/clientCases';
import { stableId } from '../../shared/client/requestIds';
import { MAX_LIVE_LOG_BYTES } from '../../shared/client/spoolFiles';
import { computeMac, decodeSecret } from '../../shared/protocol/sign';
import { signHostDoc } from '../../shared/protocol/hostAuth';
import type { CatalogDoc, Envelope, KeyFile } from '../../shared/protocol/types';

const SOURCE = path.resolve(import.meta.dirname, '../../shared/client/dw.py');
const VECTORS = path.resolve(import.meta.dirname, '../fixtures/vectors-v1.json');
const HOST_VECTORS = path.resolve(import.meta.dirname, '../../docs/vectors-host-v1.json');
const FRESH_ID = /^r-[0-9a-z]+-[0-9a-f]+$/;

const TOOL = `
const [mode, ...rest] = process.argv.slice(2);
if (mode === 'argv') console.log(JSON.stringify(rest));
if (mode === 'exit') { console.log('about to fail'); console.error('failing on purpose'); process.exit(Number(rest[0])); }
if (mode === 'lines') { let i = 0; const t = setInterval(() => { console.log('line ' + i); i += 1; if (i >= Number(rest[0])) clearInterval(t); }, 400); }
if (mode === 'nap') setTimeout(() => console.log('awake after ' + rest[0] + ' s'), Number(rest[0]) * 1000);
if (mode === 'sleep') setTimeout(() => {}, 60000);
`;

let host: TestHost;
let key: KeyFile;
let daemon: DaemonProcess;
let clientDir: string;
let DW: string;
let keyFile: string;

interface DwResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function dwEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, DUMBWAITER_SPOOL: host.spool, DUMBWAITER_KEY_FILE: keyFile, ...extra };
}

/** Runs the copied dw.py to completion. */
function dw(args: string[], env: Record<string, string> = {}, input?: string): DwResult {
  const started = Date.now();
  const r = spawnSync('python3', [DW, ...args], { encoding: 'utf8', env: dwEnv(env), timeout: 60_000, input });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started };
}

/** Starts the copied dw.py in the background; `done` resolves when it has exited. */
class DwProcess {
  stdout = '';
  stderr = '';
  /** When each piece of stdout arrived (ms since the start). */
  chunks: { at: number; text: string }[] = [];
  readonly proc: ChildProcess;
  readonly done: Promise<DwResult>;
  private readonly started = Date.now();

  constructor(args: string[], env: Record<string, string> = {}) {
    this.proc = track(spawn('python3', [DW, ...args], { env: dwEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
    this.proc.stdout!.on('data', (c: Buffer) => {
      this.stdout += c.toString();
      this.chunks.push({ at: Date.now() - this.started, text: c.toString() });
    });
    this.proc.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.done = new Promise((resolve) =>
      this.proc.on('close', (status, signal) => resolve({ status, signal, stdout: this.stdout, stderr: this.stderr, ms: Date.now() - this.started })),
    );
  }

  /** The request id `dw run` prints on stderr at once. */
  id(): Promise<string> {
    return eventually('the request id on stderr', () => {
      const first = this.stderr.split('\n')[0];
      return this.stderr.includes('\n') && first ? first : undefined;
    });
  }
}

/** Puts a file at a name in the spool the way any writer of it can: written aside, renamed over it. */
function plant(rel: string, text: string): void {
  const tmp = path.join(host.spool, 'tmp', `planted-${path.basename(rel)}`);
  writeFileSync(tmp, text);
  renameSync(tmp, path.join(host.spool, rel));
}

/** A final result as the host would write it, saying what the forger wants. */
function forgedResult(id: string, stdout = 'FORGED\n'): string {
  const doc = { v: 1, id, op: 'echo', state: 'succeeded', updated_at: new Date().toISOString(), exit_code: 0, signal: null, stdout, stderr: '', error: null };
  return JSON.stringify(doc, null, 2) + '\n';
}

function listing(dir: string): string[] {
  return readdirSync(path.join(host.spool, dir)).sort();
}

beforeAll(async () => {
  host = new TestHost();
  const script = path.join(host.root, 'tool.cjs');
  writeFileSync(script, TOOL);
  const node = JSON.stringify(process.execPath);
  const op = (name: string, cmd: string, extra = '') => `
  - name: ${name}
    command: [${node}, ${JSON.stringify(script)}, ${cmd}]
    cwd: ${JSON.stringify(host.work)}
    scope: read
    approval: never
    concurrency: 4
${extra}`;
  host.writeAllowlist(`version: 1
operations:
${op('echo', 'argv, "{msg}"', '    description: Prints its message\n    args:\n      msg: {type: string, max_length: 200}')}
${op('typed', 'argv, "{workers}", "{verbose}", "{files}", "--label={label}"', `    description: Shows how typed arguments arrive
    args:
      workers: {type: integer, min: 1, max: 16}
      verbose: {type: boolean, flag: "--verbose"}
      files: {type: array, items: {type: string, pattern: "[a-z]+[.][a-z]+"}, max_items: 3, required: false}
      label: {type: string, enum: [alpha, beta], default: alpha}`)}
${op('fail', 'exit, "{code}"', '    args:\n      code: {type: integer, min: 0, max: 255}')}
${op('lines', 'lines, "{n}"', '    args:\n      n: {type: integer, min: 1, max: 20}')}
${op('nap', 'nap, "{seconds}"', '    args:\n      seconds: {type: integer, min: 0, max: 10}')}
${op('slow', 'sleep', '    timeout_s: 60')}
${GATED_OP}${SUITE_OP}  - name: deploy
    description: A write operation that asks a human
    command: [${node}, ${JSON.stringify(script)}, argv, "{target}"]
    cwd: ${JSON.stringify(host.work)}
    args:
      target: {type: string, enum: [staging, production]}
    scope: write
  - name: missing-program
    command: [/nonexistent/program]
    scope: read
    approval: never
`);
  key = host.createKey('python-client', 'write');
  clientDir = mkdtempSync(path.join(os.tmpdir(), 'dw-py-'));
  DW = path.join(clientDir, 'dw.py');
  keyFile = path.join(clientDir, 'agent.key.json');
  writeFileSync(keyFile, JSON.stringify(key), { mode: 0o600 });
  daemon = await host.startDaemon();
  // The copy the host placed in the spool's bin/, as a sandbox would find it.
  const placed = path.join(host.spool, 'bin', 'dw.py');
  expect(readFileSync(placed)).toEqual(readFileSync(SOURCE));
  copyFileSync(placed, DW);
});

afterAll(async () => {
  await host.cleanup();
  rmSync(clientDir, { recursive: true, force: true });
});

describe('signing and ids', () => {
  it('passes every signing vector: the same mac for valid ones, no verification for invalid ones', () => {
    const vectors = JSON.parse(readFileSync(VECTORS, 'utf8')) as { valid: { envelope: Envelope }[]; invalid: { why: string }[] };
    const r = dw(['selftest-vectors', VECTORS]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as { ok: boolean; valid: { mac: string; verified: boolean }[]; invalid: { why: string; verified: boolean }[] };
    expect(report.valid.map((v) => v.mac)).toEqual(vectors.valid.map((v) => v.envelope.mac));
    expect(report.valid.every((v) => v.verified)).toBe(true);
    expect(report.invalid.map((v) => v.why)).toEqual(vectors.invalid.map((v) => v.why));
    expect(report.invalid.every((v) => !v.verified)).toBe(true);
    expect(report.ok).toBe(true);
  });

  it('signs exactly what the host signs, non-ASCII text included (the module imported with python3 -c)', () => {
    const payload = JSON.stringify({ id: 'x-1', op: 'echo', args: { msg: 'héllo ✓ 😀 "q" \\ \n' }, created_at: '2026-11-29T08:00:00Z' });
    const code = 'import json, sys; sys.path.insert(0, sys.argv[1]); import dw; k = json.loads(sys.stdin.read()); print(dw.compute_mac(dw.decode_secret(k["secret"]), k["key_id"], k["payload"]))';
    const r = spawnSync('python3', ['-c', code, clientDir], { input: JSON.stringify({ ...key, payload }), encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(computeMac(decodeSecret(key.secret), key.key_id, payload));
  });

  it("stable_id gives the TypeScript client's stableId, the key in it, and the vectors' ids", () => {
    const cases: [string, string, Record<string, unknown>, string | null][] = [
      ['k_a', 'echo', { msg: 'hello' }, null],
      ['k_a', 'echo', { msg: 'hello' }, 'why not'],
      ['k_b', 'echo', { msg: 'hello' }, 'why not'],
      ['k_a', 'typed', { workers: 4, verbose: true, files: ['a.ts', 'b.ts'], label: 'beta' }, 'ordering'],
      ['k_a', 'typed', { z: 1, a: { y: [1, 2, { b: null, a: false }], x: 'é' } }, 'nested, keys out of order'],
      ['k_a', 'echo', { msg: 'héllo ✓ "quoted" \\ back\n\ttab \u0001 \u007f \u2028' }, 'unicode ✓ and escapes'],
      ['k_a', 'echo', { '\ue000': 1, '😀': 2, é: 3, Z: 4, a: 5 }, 'keys sorted by UTF-16 code units, as JavaScript sorts'],
      ['k_a', 'num', { a: 1.5, b: -0.25, c: 1e21, d: 1e-7, e: 123456789012, f: 2.5e-5, g: 0 }, 'numbers'],
    ];
    const vectors = (JSON.parse(readFileSync(HOST_VECTORS, 'utf8')) as { stable_id: { key_id: string; op: string; args_json: string; intent: string; stable_id: string }[] }).stable_id;
    const all: [string, string, Record<string, unknown>, string | null][] = [
      ...cases,
      ...vectors.map((v): [string, string, Record<string, unknown>, string] => [v.key_id, v.op, JSON.parse(v.args_json) as Record<string, unknown>, v.intent]),
    ];
    const code = 'import json, sys; sys.path.insert(0, sys.argv[1]); import dw\nfor line in sys.stdin:\n    k, op, args, intent = json.loads(line)\n    print(dw.stable_id(k, op, args, intent))';
    const input = all.map((c) => JSON.stringify(c)).join('\n') + '\n';
    const r = spawnSync('python3', ['-c', code, clientDir], { input, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const got = r.stdout.trim().split('\n');
    // No intent is the empty one, in both clients.
    expect(got).toEqual(all.map(([k, op, args, intent]) => stableId(k, op, args, intent ?? '')));
    expect(got.slice(cases.length)).toEqual(vectors.map((v) => v.stable_id));
    for (const id of got) expect(id).toMatch(/^s-[0-9a-f]{32}$/);
    expect(new Set(got.slice(0, cases.length)).size).toBe(cases.length);
    // A call in the old form (no key) fails loudly instead of giving an id another sandbox can foresee.
    const old = spawnSync('python3', ['-c', 'import sys; sys.path.insert(0, sys.argv[1]); import dw; dw.stable_id("echo", {"msg": "hello"}, "why")', clientDir], { encoding: 'utf8' });
    expect(old.status).not.toBe(0);
    expect(old.stderr).toContain('ValueError');
  });

  it("is_settled says what the vectors say: an uncertain result whose reconcile check is still to come is waited for", () => {
    const vectors = (JSON.parse(readFileSync(HOST_VECTORS, 'utf8')) as { settled: { doc: unknown; settled: boolean }[] }).settled;
    const code = 'import json, sys; sys.path.insert(0, sys.argv[1]); import dw\nfor line in sys.stdin:\n    print(json.dumps(dw.is_settled(json.loads(line))))';
    const r = spawnSync('python3', ['-c', code, clientDir], { input: vectors.map((v) => JSON.stringify(v.doc)).join('\n') + '\n', encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n').map((l) => JSON.parse(l) as boolean)).toEqual(vectors.map((v) => v.settled));
  });
});

describe('the host vectors (docs/vectors-host-v1.json)', () => {
  it('computes every request hash and canonical form, verifies every signed document and refuses every refused one for its reason', () => {
    const vectors = JSON.parse(readFileSync(HOST_VECTORS, 'utf8')) as {
      request_hash: { canonical: string; request_hash: string }[];
      signed: { text: string }[];
      refused: { why: string }[];
    };
    const r = dw(['selftest-vectors', HOST_VECTORS]);
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout) as { ok: boolean; request_hash: unknown[]; signed: { verdict: string; doc: unknown }[]; refused: { why: string }[] };
    expect(report.request_hash).toEqual(vectors.request_hash.map((v) => ({ canonical: v.canonical, request_hash: v.request_hash })));
    expect(report.signed).toEqual(vectors.signed.map((v) => ({ verdict: 'ok', doc: JSON.parse(v.text) })));
    expect(report.refused.map((v) => v.why)).toEqual(vectors.refused.map((v) => v.why));
    expect(report.ok).toBe(true);
    expect(r.status).toBe(0);
  });
});

describe('without a host: what dw writes, and its usage errors', () => {
  let spool: string;
  const offline = (args: string[], extra: Record<string, string> = {}) => dw(args, { DUMBWAITER_SPOOL: spool, ...extra });

  beforeAll(() => {
    // A spool nobody serves, with the host's catalog: requests stay in queue/ where they can be read.
    spool = path.join(clientDir, 'offline-spool');
    for (const d of ['tmp', 'queue', 'results', 'inbox']) mkdirSync(path.join(spool, d), { recursive: true, mode: 0o700 });
    cpSync(path.join(host.spool, 'catalog.json'), path.join(spool, 'catalog.json'));
  });

  it('submit writes one signed, compact envelope into queue/ (through tmp/) with typed arguments', () => {
    const before = Date.now();
    const r = offline(['submit', 'typed', 'workers=4', 'verbose=true', 'files=a.ts', 'files=["b.ts"]', '--intent', 'why ✓', '--expires-in', '60', '--id', 'sub-1']);
    // No host has ever served this spool, and submit says so at once.
    expect(r.stderr).toBe('dw: the host has never run on this spool (no host.json); the request waits in queue/ until it runs\n');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('sub-1\n');
    expect(readdirSync(path.join(spool, 'queue'))).toEqual(['sub-1.json']);
    expect(readdirSync(path.join(spool, 'tmp'))).toEqual([]);
    const env = JSON.parse(readFileSync(path.join(spool, 'queue', 'sub-1.json'), 'utf8')) as Envelope;
    expect(Object.keys(env).sort()).toEqual(['key_id', 'mac', 'payload', 'v']);
    expect(env).toMatchObject({ v: 1, key_id: key.key_id });
    expect(env.mac).toBe(computeMac(decodeSecret(key.secret), key.key_id, env.payload));
    const p = JSON.parse(env.payload) as Record<string, unknown>;
    expect(env.payload).toBe(JSON.stringify(p)); // compact, and non-ASCII kept as is
    expect(p).toMatchObject({ id: 'sub-1', op: 'typed', args: { workers: 4, verbose: true, files: ['a.ts', 'b.ts'] }, intent: 'why ✓' });
    expect(p.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const created = Date.parse(p.created_at as string);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(created).toBeLessThanOrEqual(Date.now() + 1000);
    expect(Date.parse(p.expires_at as string) - created).toBe(60_000);
  });

  it('gives fresh, time-sortable ids by default', async () => {
    const a = offline(['submit', 'echo', 'msg=one']).stdout.trim();
    await clockPast(Date.now()); // the next id is made in a later millisecond
    const b = offline(['submit', 'echo', 'msg=two']).stdout.trim();
    expect(a).toMatch(FRESH_ID);
    expect(b).toMatch(FRESH_ID);
    expect(b > a).toBe(true);
  });

  it('status says unclaimed for a request still in queue/ and unknown without a trace; wait times out with 85', () => {
    expect(offline(['status', 'sub-1']).stdout).toBe('sub-1 unclaimed\n');
    expect(JSON.parse(offline(['status', 'sub-1', '--json']).stdout)).toEqual({ id: 'sub-1', state: 'unclaimed' });
    const unknown = offline(['status', 'no-such-id', '--json']);
    expect(unknown.status).toBe(0);
    expect(JSON.parse(unknown.stdout)).toEqual({ id: 'no-such-id', state: 'unknown' });
    const w = offline(['wait', 'sub-1', '--timeout', '0.5']);
    expect(w.status).toBe(85);
    expect(w.stderr).toContain('dw wait sub-1');
  });

  it('says clearly what is missing: no spool 69, no or bad key file 66, usage 64, an empty inbox', () => {
    const noSpool = dw(['submit', 'echo', 'msg=x'], { DUMBWAITER_SPOOL: path.join(clientDir, 'nowhere') });
    expect(noSpool.status).toBe(69);
    expect(noSpool.stderr).toContain('nowhere');
    const noKey = offline(['submit', 'echo', 'msg=x'], { DUMBWAITER_KEY_FILE: path.join(clientDir, 'missing.key.json') });
    expect(noKey.status).toBe(66);
    expect(noKey.stderr).toContain('missing.key.json');
    const bad = path.join(clientDir, 'bad.key.json');
    writeFileSync(bad, JSON.stringify({ ...key, secret: 'too-short' }));
    const badKey = offline(['submit', 'echo', 'msg=x'], { DUMBWAITER_KEY_FILE: bad });
    expect(badKey.status).toBe(66);
    expect(badKey.stderr).toMatch(/secret/);
    expect(offline(['frobnicate']).status).toBe(64);
    expect(offline(['run']).status).toBe(64);
    expect(offline(['wait', 'sub-1', '--timeout', 'soon']).status).toBe(64);
    expect(offline(['ops', '--bogus']).status).toBe(64);
    const help = offline(['--help']);
    expect(help.status).toBe(0);
    for (const cmd of ['ops', 'submit', 'status', 'wait', 'run', 'cancel', 'inbox', 'doctor']) expect(help.stdout).toContain(`dw ${cmd}`);
    expect(offline(['inbox']).stdout).toBe('No messages.\n');
    expect(JSON.parse(offline(['inbox', '--json']).stdout)).toEqual([]);
    // Nothing of the above wrote anything.
    expect(readdirSync(path.join(spool, 'queue')).length).toBe(3);
  });
});

describe('only what the host signed for this key is reported', () => {
  it('a reused id with other arguments exits 87 with the host message, never the old output; the exact replay exits 0', async () => {
    const first = dw(['run', 'echo', 'msg=first', '--id', 'py-reuse-1']);
    expect(first.status).toBe(0);
    const other = dw(['run', 'echo', 'msg=second', '--id', 'py-reuse-1']);
    expect(other.status).toBe(87);
    expect(other.stdout).toBe('');
    expect(other.stderr).toMatch(/^py-reuse-1\ndw: py-reuse-1 conflict: Request id "py-reuse-1" is already bound to your earlier request \(operation echo\); nothing was run/);
    expect(other.stderr).not.toContain('first');
    const replay = dw(['run', 'echo', 'msg=first', '--id', 'py-reuse-1']);
    expect(replay.status).toBe(0);
    expect(JSON.parse(replay.stdout)).toEqual(['first']);
    // From a new process, which does not know what was sent: the id's own result, as it is.
    expect(dw(['wait', 'py-reuse-1']).status).toBe(0);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('an id bound by another key exits 87 (its result, signed for that key, is ignored)', async () => {
    const theirs = host.createKey('another sandbox', 'write');
    host.submit(theirs, 'py-theirs-1', 'echo', { msg: 'theirs' });
    expect((await host.waitResult('py-theirs-1')).state).toBe('succeeded');
    const r = dw(['run', 'echo', 'msg=mine', '--id', 'py-theirs-1']);
    expect(r.status).toBe(87);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('is already bound to a request of another key; nothing was run');
    expect(r.stderr).toContain(`dw: ignored results/py-theirs-1.json: the host did not sign it for this key (signed for key ${theirs.key_id})\n`);
    expect(r.stderr).not.toContain('theirs"');
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('a forged result planted before the request (unsigned, or signed with a read key of the host) is never its outcome', async () => {
    const reader = host.createKey('a reader', 'read');
    plant('results/py-forged-1.json', forgedResult('py-forged-1'));
    const a = dw(['run', 'echo', 'msg=real one', '--id', 'py-forged-1']);
    expect(a.status).toBe(0);
    expect(JSON.parse(a.stdout)).toEqual(['real one']);
    plant('results/py-forged-2.json', signHostDoc('result', { keyId: reader.key_id, secret: decodeSecret(reader.secret) }, forgedResult('py-forged-2')));
    const b = dw(['run', 'echo', 'msg=real two', '--id', 'py-forged-2']);
    expect(b.status).toBe(0);
    expect(JSON.parse(b.stdout)).toEqual(['real two']);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('a forged final result planted over the host one while the request waits is never its outcome', async () => {
    expect(host.cli(['pause']).status).toBe(0);
    const p = new DwProcess(['run', 'echo', 'msg=real', '--id', 'py-forged-3']);
    try {
      await host.waitResult('py-forged-3', ['queued']);
      plant('results/py-forged-3.json', forgedResult('py-forged-3'));
      // Also signed for this key, but for another id: the host's own words, moved.
      const moved = readFileSync(path.join(host.spool, 'results', 'py-forged-1.json'), 'utf8');
      plant('results/py-forged-3.json', moved);
    } finally {
      expect(host.cli(['resume']).status).toBe(0);
    }
    const r = await p.done;
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('["real"]\n');
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('a FIFO at results/<id>.json neither blocks nor crashes dw; it is said once and treated as absent', async () => {
    expect(spawnSync('mkfifo', [path.join(host.spool, 'results', 'py-fifo-1.json')]).status).toBe(0);
    const s = dw(['status', 'py-fifo-1']);
    expect(s.status).toBe(0);
    expect(s.stdout).toBe('py-fifo-1 unknown\n');
    expect(s.stderr).toBe('dw: ignored results/py-fifo-1.json: it is not a regular file\n');
    const r = dw(['run', 'echo', 'msg=past a fifo', '--id', 'py-fifo-1']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(['past a fifo']);
    expect(r.stderr.split('\n').filter((l) => l.includes('ignored')).length).toBeLessThanOrEqual(1);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('a log planted while the request waits for a human is never shown', async () => {
    const p = new DwProcess(['run', 'deploy', 'target=staging', '--id', 'py-planted-log']);
    await host.waitResult('py-planted-log', ['awaiting_approval']);
    await eventually('the note about the approval', () => (p.stderr.includes("request py-planted-log waits for a human's decision") ? true : undefined));
    plant('results/py-planted-log.log', 'PLANTED: all tests pass\n');
    expect(host.cli(['approvals', 'deny', 'py-planted-log', '--reason', 'no']).status).toBe(0);
    const r = await p.done;
    expect(r.status).toBe(81);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toContain('PLANTED');
  });

  it('a live log replaced during the run is detected, and the host signed output follows', async () => {
    const p = new DwProcess(['run', 'lines', 'n=5', '--id', 'py-swapped-log']);
    await eventually('the first line streamed', () => (p.stdout.includes('line 0\n') ? true : undefined));
    plant('results/py-swapped-log.log', 'line 0\nFAKE: the build is green, nothing to see here\n');
    const r = await p.done;
    const final = host.result('py-swapped-log')!;
    expect(final.state).toBe('succeeded');
    // The host has said since commit 974d25a what it logged; without that no check is possible.
    expect(final.log_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('dw: the live output above is not what the host logged (results/py-swapped-log.log was changed by someone else); the host\'s signed output follows:');
    expect(r.stdout.endsWith('line 0\nline 1\nline 2\nline 3\nline 4\n')).toBe(true);
  });

  it.skipIf(AS_USER === null)('a live log the sandbox forged (a folder at its name, made again once the host made its log, then its own text) is followed by a note and the host\'s signed output', async () => {
    const go = path.join(host.work, 'go-py-forged-log');
    const forger = logForger(AS_USER!, host.spool, 'py-forged-log', go);
    track(forger.proc);
    await forger.said('folder');
    const p = new DwProcess(['run', 'suite', `go=${go}`, '--id', 'py-forged-log']);
    await host.waitResult('py-forged-log', ['running']);
    // The host moved the folder to quarantine and made its own log, which the forger then took away:
    // the run's output goes to the host's file, which no name leads to any more.
    const log = path.join(host.spool, 'results', 'py-forged-log.log');
    await eventually("the host's own log, then the forger's folder again", () => (host.audit('', 'log_quarantined').some((e) => e.request_id === 'py-forged-log') && lstatSync(log, { throwIfNoEntry: false })?.isDirectory() ? true : undefined));
    writeFileSync(go, '');
    await forger.said('forged');
    await eventually('the forged text streamed', () => (p.stdout.includes(FORGED_LOG) ? true : undefined));
    writeFileSync(`${go}.end`, '');
    const r = await p.done;
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${FORGED_LOG}3 of 128 tests FAILED\n`);
    expect(r.stderr).toContain("dw: the live output above is not what the host logged (results/py-forged-log.log was changed by someone else); the host's signed output follows:");
  });

  it('an unsigned refusal (a key the host does not know) exits 80 saying it is not signed; doctor names the failing checks', async () => {
    const stranger = path.join(clientDir, 'stranger.key.json');
    writeFileSync(stranger, JSON.stringify({ v: 1, key_id: 'k_stranger', secret: randomBytes(32).toString('base64url') }));
    const r = dw(['run', 'echo', 'msg=hello', '--id', 'py-stranger-1'], { DUMBWAITER_KEY_FILE: stranger });
    expect(r.status).toBe(80);
    expect(r.stderr).toContain("dw: py-stranger-1 rejected (not signed by the host, so it may not be the host's): unknown_key: ");
    expect(r.stderr).toContain('the host signs every answer to a request it could authenticate: check the key with dw doctor');
    expect(r.stderr.split('dw: ignored results/py-stranger-1.json: the host did not sign it for this key (unsigned)\n').length).toBe(2);
    const d = dw(['doctor'], { DUMBWAITER_KEY_FILE: stranger });
    expect(d.status).toBe(69);
    expect(d.stdout).toMatch(/^ok +spool/m);
    expect(d.stdout).toMatch(/^ok {4}the host is running/m);
    expect(d.stdout).toMatch(/^FAIL {2}key not accepted: the host does not know this key \/ the key file is not the host's \(an unsigned refusal: unknown_key: .*\)$/m);
    expect(d.stdout).toMatch(/^FAIL {2}results signed: no answer to the ping signed for this key/m);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });
});

// As an ordinary user (file permissions not overridden): a spool owned by another uid, mode 0700.
describe.skipIf(AS_USER === null || process.getuid?.() !== 0)('permission denied', () => {
  it('exits 77 naming both uids, never "missing (was it made with dumbwaiter init?)"; doctor too', async () => {
    const spool = path.join(clientDir, 'someone-elses-spool');
    for (const d of ['tmp', 'queue', 'results', 'inbox']) mkdirSync(path.join(spool, d), { recursive: true, mode: 0o700 });
    for (const d of ['tmp', 'queue', 'results', 'inbox', '']) chownSync(path.join(spool, d), 4242, 4243);
    chmodSync(spool, 0o700);
    const asUser = (args: string[]) =>
      spawnSync(AS_USER![0]!, [...AS_USER!.slice(1), 'python3', DW, ...args], { encoding: 'utf8', env: dwEnv({ DUMBWAITER_SPOOL: spool }), timeout: 60_000 });
    const want = `dw: permission denied: ${spool} is owned by uid 4242 (mode 0700) and this runs as uid 0: run the sandbox as uid 4242 (docker run --user 4242:4243 ...); see docs/SANDBOX.md, "Permission denied"\n`;
    for (const args of [['submit', 'dumbwaiter.ping'], ['wait', 'x-1'], ['status', 'x-1'], ['inbox']]) {
      const r = asUser(args);
      expect(r.status, args.join(' ')).toBe(77);
      expect(r.stderr).toBe(want);
    }
    const d = asUser(['doctor']);
    expect(d.status).toBe(77);
    expect(d.stdout).toContain(`FAIL  ${want.slice('dw: '.length, -1)}`);
    expect(d.stdout).not.toMatch(/missing|not a Dumbwaiter spool/);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });
});
if (AS_USER === null || process.getuid?.() !== 0) console.warn(`pythonClient: the permission-denied case is skipped: ${AS_USER === null ? NO_UNPRIVILEGED_USER : 'not root: cannot give a spool to another uid'}`);

describe('against the running host', () => {
  it('ops lists the operations with their typed arguments; --json gives the catalog operations', () => {
    const r = dw(['ops']);
    expect(r.status).toBe(0);
    // In dw.cjs's words (catalogEntries.ts's opsLines, held equal by its test).
    expect(r.stdout).toContain('typed  [read, timeout 600 s]  Shows how typed arguments arrive');
    expect(r.stdout).toContain('workers: integer (>= 1, <= 16, required)');
    expect(r.stdout).toContain('verbose: boolean (optional)');
    expect(r.stdout).toMatch(/files: list of string \(at most 3 items, optional\)/);
    expect(r.stdout).toMatch(/label: string \(one of "alpha"\|"beta", at most \d+ chars, default "alpha"\)/);
    expect(r.stdout).toMatch(/deploy {2}\[write, asks a human/);
    const catalog = JSON.parse(readFileSync(path.join(host.spool, 'catalog.json'), 'utf8')) as CatalogDoc;
    const j = dw(['ops', '--json']);
    expect(j.status).toBe(0);
    expect(JSON.parse(j.stdout)).toEqual(catalog.operations);
  });

  it("doctor passes every check with the host up, the host's probe of the mount among them", async () => {
    await eventually("the host's probe in host.json", () => ('probe' in (JSON.parse(readFileSync(path.join(host.spool, 'host.json'), 'utf8')) as object) ? true : undefined));
    const r = dw(['doctor']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(7);
    expect(r.stdout).toMatch(/^ok {4}mount, as the host probed it: (ok|degraded): [\w.]+: /m);
    for (const l of lines) expect(l).toMatch(/^ok /);
    expect(r.stdout).toContain(`ok    key file: key ${key.key_id}\n`);
    expect(r.stdout).toContain('ok    key accepted (scope write)\n');
    expect(r.stdout).toContain('ok    results signed: the answer to the ping is signed for this key\n');
  });

  it('run prints the id on stderr at once and streams the output while it runs; exit 0', async () => {
    const p = new DwProcess(['run', 'lines', 'n=4', '--intent', 'streaming check']);
    const id = await p.id();
    expect(id).toMatch(FRESH_ID);
    const r = await p.done;
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('line 0\nline 1\nline 2\nline 3\n');
    // The first line came while the operation still ran (it prints one line every 400 ms).
    const first = p.chunks.find((c) => c.text.includes('line 0'))!;
    expect(first.at).toBeLessThan(r.ms - 600);
    expect(p.chunks.length).toBeGreaterThan(1);
    expect(r.stderr).toBe(`${id}\n`);
    expect(host.result(id)).toMatchObject({ state: 'succeeded', exit_code: 0, op: 'lines' });
    expect(host.exists(`queue/${id}.json`)).toBe(false);
  });

  it('types name=value pairs by the catalog, repeated or as a JSON array, and takes --args-json', () => {
    const r = dw(['run', 'typed', 'workers=4', 'verbose=true', 'files=a.ts', 'files=b.ts', 'label=beta']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(['4', '--verbose', 'a.ts', 'b.ts', '--label=beta']);
    const arr = dw(['run', 'typed', 'workers=2', 'verbose=false', 'files=["c.py","d.py"]']);
    expect(arr.status).toBe(0);
    expect(JSON.parse(arr.stdout)).toEqual(['2', 'c.py', 'd.py', '--label=alpha']);
    const json = dw(['run', 'typed', '--args-json', '{"workers": 16, "files": ["e.rs"]}']);
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(['16', 'e.rs', '--label=alpha']);
  });

  it('passes a failing operation exit code through, for run and for wait', () => {
    const r = dw(['run', 'fail', 'code=3', '--id', 'py-fail-3']);
    expect(r.status).toBe(3);
    expect(r.stdout).toContain('about to fail'); // the live log interleaves both streams
    expect(r.stdout).toContain('failing on purpose');
    const w = dw(['wait', 'py-fail-3']);
    expect(w.status).toBe(3);
    expect(w.stdout).toBe('about to fail\n');
    expect(w.stderr).toContain('failing on purpose');
    const j = dw(['wait', 'py-fail-3', '--json']);
    expect(j.status).toBe(3);
    expect(JSON.parse(j.stdout)).toMatchObject({ id: 'py-fail-3', state: 'failed', exit_code: 3 });
    expect(dw(['status', 'py-fail-3']).stdout).toBe('py-fail-3 failed: the operation exited with 3\n');
    expect(dw(['run', 'fail', 'code=0']).status).toBe(0);
  });

  it('refuses arguments that do not fit with 65, naming the argument, before anything is written', () => {
    const queue = listing('queue');
    const tmp = listing('tmp');
    const results = listing('results');
    const cases: [string[], RegExp][] = [
      [['typed', 'workers=four'], /argument "workers" must be an integer, got "four"/],
      [['typed', 'workers=4', 'colour=red'], /unknown argument "colour"/],
      [['typed'], /missing required argument "workers"/],
      [['typed', 'verbose=true'], /missing required argument "workers"/],
      [['typed', 'workers=17'], /argument "workers" must be at most 16/],
      [['typed', 'workers=0'], /argument "workers" must be at least 1/],
      [['typed', 'workers=2', 'verbose=maybe'], /argument "verbose" must be true or false/],
      [['typed', 'workers=2', 'files=UPPER.TS'], /argument "files".* pattern/],
      [['typed', 'workers=2', 'files=a.b', 'files=c.d', 'files=e.f', 'files=g.h'], /argument "files" has 4 items, more than 3/],
      [['typed', 'workers=2', 'label=gamma'], /argument "label" must be one of "alpha", "beta"/],
      [['typed', 'workers=2', 'workers=3'], /argument "workers" is given more than once/],
      [['typed', '--args-json', '{"workers": "4"}'], /argument "workers" must be an integer/],
      [['typed', '--args-json', '[1]'], /--args-json must be a JSON object/],
      [['typed', '--args-json', '{nope'], /--args-json is not valid JSON/],
      [['echo', `msg=${'x'.repeat(201)}`], /argument "msg" is longer than 200 characters/],
      [['echo', 'msg'], /expected name=value/],
      [['no-such-op'], /unknown operation "no-such-op"/],
      // A Python dict has no prototype: the name reaches the check as given (never silently dropped).
      [['typed', 'workers=4', '__proto__=x'], /unknown argument "__proto__"/],
    ];
    for (const [args, message] of cases) {
      for (const cmd of ['run', 'submit']) {
        const r = dw([cmd, ...args]);
        expect(r.status, `${cmd} ${args.join(' ')}: ${r.stderr}`).toBe(65);
        expect(r.stderr).toMatch(message);
        expect(r.stdout).toBe('');
      }
    }
    expect(dw(['submit', 'echo', 'msg=x', '--id', '../escape']).status).toBe(65);
    expect(dw(['submit', 'echo', 'msg=x', '--intent', 'y'.repeat(2001)]).status).toBe(65);
    expect(listing('queue')).toEqual(queue);
    expect(listing('tmp')).toEqual(tmp);
    expect(listing('results')).toEqual(results);
  });

  it('exits 80 for a request the host rejects, with the reason', () => {
    // The client cannot know this rule: a value that would start an argv element may not start with "-".
    const r = dw(['run', 'echo', 'msg=-rf']);
    expect(r.status).toBe(80);
    expect(r.stderr).toMatch(/rejected: bad_args: .*must not start with "-"/);
  });

  it('exits 86 for an operation that could not start', () => {
    const r = dw(['run', 'missing-program']);
    expect(r.status).toBe(86);
    expect(r.stderr).toMatch(/spawn_failed.*\/nonexistent\/program/);
  });

  it('exits 81 when the human denies the request', async () => {
    const p = new DwProcess(['run', 'deploy', 'target=production', '--id', 'py-deny-1', '--intent', 'ship it']);
    expect(await p.id()).toBe('py-deny-1');
    const waiting = await host.waitResult('py-deny-1', ['awaiting_approval']);
    expect(waiting.approval?.intent).toBe('ship it');
    await eventually('the note about the approval', () => (p.stderr.includes("request py-deny-1 waits for a human's decision") ? true : undefined));
    expect(host.cli(['approvals', 'deny', 'py-deny-1', '--reason', 'not on a Friday']).status).toBe(0);
    const r = await p.done;
    expect(r.status).toBe(81);
    expect(r.stderr).toMatch(/dw: py-deny-1 denied by \S+: not on a Friday\n/);
    expect(r.stdout).toBe('');
  });

  it('exits 0 once the human approves; dw run and dw wait said once that it waited for a human, and when it would be denied if nobody decided', async () => {
    const p = new DwProcess(['run', 'deploy', 'target=staging', '--id', 'py-approve-1']);
    const waiting = await host.waitResult('py-approve-1', ['awaiting_approval']);
    const w = new DwProcess(['wait', 'py-approve-1']);
    for (const c of [p, w]) await eventually('the note about the approval', () => (c.stderr.includes("request py-approve-1 waits for a human's decision") ? true : undefined));
    expect(host.cli(['approvals', 'approve', 'py-approve-1']).status).toBe(0);
    const [r, rw] = [await p.done, await w.done];
    expect([r.status, rw.status]).toEqual([0, 0]);
    expect(JSON.parse(r.stdout)).toEqual(['staging']);
    for (const { stderr } of [r, rw]) {
      const { said, expected } = waitingSaid(stderr, waiting);
      expect(said).toEqual([expected]);
    }
    expect(waitingSaid(r.stderr, waiting).expected).toMatch(/^dw: request py-approve-1 waits for a human's decision; unless decided, it is denied automatically at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in N min\)$/);
  });

  it('exits 82 for a request that expired before it could start (--expires-in, host paused)', async () => {
    expect(host.cli(['pause']).status).toBe(0);
    try {
      const s = dw(['submit', 'echo', 'msg=too late', '--expires-in', '1', '--id', 'py-expire-1']);
      expect(s.status).toBe(0);
      await host.waitResult('py-expire-1', ['queued']);
      expect(dw(['status', 'py-expire-1']).stdout).toBe('py-expire-1 queued\n');
      // Until its expiry time has passed: a time on the clock, not an event.
      await clockPast(Date.parse(host.service((svc) => svc.requests.get('py-expire-1')!.expires_at!)));
    } finally {
      expect(host.cli(['resume']).status).toBe(0);
    }
    const w = dw(['wait', 'py-expire-1']);
    expect(w.status).toBe(82);
    expect(w.stderr).toMatch(/py-expire-1 expired: /);
    expect(host.result('py-expire-1')?.started_at).toBeNull();
  });

  it('dw cancel cancels a running request: run exits 83; cancel answers what happened', async () => {
    const p = new DwProcess(['run', 'slow', '--id', 'py-cancel-1']);
    await host.waitResult('py-cancel-1', ['running']);
    const c = dw(['cancel', 'py-cancel-1']);
    expect(c.stderr).toBe('');
    expect(c.status).toBe(0);
    expect(c.stdout).toContain('being terminated');
    const r = await p.done;
    expect(r.status).toBe(83);
    expect(r.stderr).toMatch(/py-cancel-1 cancelled by key /);
    expect(host.result('py-cancel-1')).toMatchObject({ state: 'cancelled', cancelled_by: expect.stringContaining(key.key_id) });
    // A finished request: nothing changes, and it says so; an unknown one is refused by the host (80).
    const again = dw(['cancel', 'py-cancel-1']);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('nothing changed');
    const unknown = dw(['cancel', 'no-such-request']);
    expect(unknown.status).toBe(80);
    expect(unknown.stderr).toContain('bad_args');
    expect(dw(['cancel', 'bad/id']).status).toBe(64);
  });

  it('exits 85 when --timeout passes first (run and wait); the request goes on', async () => {
    const s = dw(['submit', 'slow', '--id', 'py-timeout-1']);
    expect(s.status).toBe(0);
    await host.waitResult('py-timeout-1', ['running']);
    const w = dw(['wait', 'py-timeout-1', '--timeout', '1']);
    expect(w.status).toBe(85);
    expect(w.ms).toBeGreaterThanOrEqual(900); // it waited its --timeout (an upper bound would time the machine)
    expect(w.stderr).toMatch(/py-timeout-1 is still running after 1 s.*dw wait py-timeout-1/);
    const wj = dw(['wait', 'py-timeout-1', '--timeout', '0.2', '--json']);
    expect(wj.status).toBe(85);
    expect(JSON.parse(wj.stdout)).toMatchObject({ id: 'py-timeout-1', state: 'running' });
    const r = dw(['run', 'slow', '--timeout', '1', '--id', 'py-timeout-2']);
    expect(r.status).toBe(85);
    expect(r.stderr.split('\n')[0]).toBe('py-timeout-2');
    expect(host.result('py-timeout-1')?.state).toBe('running');
    for (const id of ['py-timeout-1', 'py-timeout-2']) expect(dw(['cancel', id]).status).toBe(0);
  });

  it('a client killed after submitting loses nothing: dw wait from a new process gets the result', async () => {
    const p = new DwProcess(['run', 'nap', 'seconds=2']);
    const id = await p.id();
    await host.waitResult(id, ['running']);
    p.proc.kill('SIGKILL');
    const killed = await p.done;
    expect(killed.signal).toBe('SIGKILL');
    expect(host.result(id)?.state).toBe('running');
    const w = dw(['wait', id]);
    expect(w.status).toBe(0);
    expect(w.stdout).toBe('awake after 2 s\n');
    // A retry of the same id and arguments never runs twice: it gets the same result.
    const again = dw(['run', 'nap', 'seconds=2', '--id', id]);
    expect(again.status).toBe(0);
    expect(again.ms).toBeLessThan(2000);
    expect(host.audit(id).filter((a) => a.message.startsWith('claimed')).length).toBe(1);
  });

  it('inbox lists the host messages (a conflict here), sorted by id; --json as an array', async () => {
    expect(dw(['run', 'echo', 'msg=first', '--id', 'py-conflict-1']).status).toBe(0);
    expect(dw(['submit', 'echo', 'msg=second', '--id', 'py-conflict-1']).status).toBe(0);
    await eventually('the conflict message', () => (host.inbox().some((m) => m.kind === 'conflict' && m.ref === 'py-conflict-1') ? true : undefined));
    const r = dw(['inbox']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/conflict \[py-conflict-1\] .*py-conflict-1/);
    const j = dw(['inbox', '--json']);
    expect(j.status).toBe(0);
    const msgs = JSON.parse(j.stdout) as { id: string }[];
    // The messages signed for this key, as the host wrote them (the document behind the auth prefix).
    const mine = host.inbox().filter((m) => (m.auth as { key_id: string }).key_id === key.key_id);
    expect(msgs).toEqual(mine.map(({ auth: _auth, ...m }) => m));
    expect(msgs.map((m) => m.id)).toEqual(msgs.map((m) => m.id).sort());
    // The first result stands.
    expect(JSON.parse(dw(['wait', 'py-conflict-1']).stdout)).toEqual(['first']);
  });

  it('exits 84 when the host dies during the run (uncertain), for run and for wait', async () => {
    const p = new DwProcess(['run', 'nap', 'seconds=3', '--id', 'py-uncertain-1']);
    await host.waitResult('py-uncertain-1', ['running']);
    await host.runPid('py-uncertain-1'); // recorded, so that its orphan can be waited for below
    await daemon.kill9();
    daemon = await host.startDaemon();
    const r = await p.done;
    expect(r.status).toBe(84);
    expect(r.stderr).toMatch(/py-uncertain-1 uncertain: .*; ask the person who runs the host to settle it\n/);
    const w = dw(['wait', 'py-uncertain-1']);
    expect(w.status).toBe(84);
    expect(dw(['status', 'py-uncertain-1']).stdout).toMatch(/^py-uncertain-1 uncertain: .*; ask the person who runs the host to settle it\n$/);
    await host.runGone('py-uncertain-1'); // the orphaned run of the killed daemon ends on its own
  });

  it('doctor with the host stopped exits 69 saying it is not running; its unanswered ping is taken back out of queue/', async () => {
    await daemon.stop();
    const queue = listing('queue');
    const r = dw(['doctor']);
    expect(r.status).toBe(69);
    expect(r.stdout).toMatch(/^ok +spool/m);
    expect(r.stdout).toMatch(/^ok +key file/m);
    expect(r.stdout).toMatch(/^FAIL {2}the host is not running \(since [\d: -]+, per host.json\)$/m);
    expect(r.stdout).toContain('FAIL  key not accepted: no answer within 5 s (unclaimed)\n');
    expect(listing('queue')).toEqual(queue);
  });

  it('a stopped host is said at once, and again when it is back; the request then runs', async () => {
    // The host was stopped by the test above.
    const p = new DwProcess(['run', 'echo', 'msg=back again', '--id', 'py-down-1']);
    const notice = /dw: the host is not running \(since [\d: -]+, per host.json\); the request waits in queue\/ until it is back\n/;
    await eventually('the note that the host is not running', () => (notice.test(p.stderr) ? true : undefined));
    daemon = await host.startDaemon();
    const r = await p.done;
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('dw: the host is running again (per host.json)\n');
    expect(JSON.parse(r.stdout)).toEqual(['back again']);
  });

  it('--timeout with the host stopped exits 85 saying the host is not running', async () => {
    await daemon.stop();
    const r = dw(['run', 'echo', 'msg=later', '--id', 'py-down-2', '--timeout', '1']);
    expect(r.status).toBe(85);
    expect(r.stderr).toMatch(/py-down-2 is still unclaimed after 1 s: the host is not running \(since [\d: -]+, per host.json\); the request waits in queue\/ until it is back; check again with: dw wait py-down-2/);
    daemon = await host.startDaemon();
    expect((await host.waitResult('py-down-2')).state).toBe('succeeded');
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });
});

// Attacks by a writer of the spool on what dw.py reads and says (review 13-1 of the Node client; the same here).
describe('what a writer of the spool can no longer make dw.py do', () => {
  const MIB = 1024 * 1024;

  /** A file of `bytes` that holds nothing (sparse), renamed to `rel` as any writer of the spool can. */
  function plantSparse(rel: string, bytes: number): void {
    const tmp = path.join(host.spool, 'tmp', `sparse-${path.basename(rel)}`);
    writeFileSync(tmp, '');
    truncateSync(tmp, bytes);
    renameSync(tmp, path.join(host.spool, rel));
  }

  /** dw.py in the background with its stdout in a file (it may be 64 MiB): the exit status and stderr. */
  function dwToFile(args: string[], outFile: string): { stderr: () => string; done: Promise<number | null> } {
    const fd = openSync(outFile, 'w');
    const proc = track(spawn('python3', [DW, ...args], { env: dwEnv(), stdio: ['ignore', fd, 'pipe'] }));
    closeSync(fd);
    let stderr = '';
    proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    return { stderr: () => stderr, done: new Promise((resolve) => proc.on('close', (status) => resolve(status))) };
  }

  it('a huge sparse log planted once the run started is streamed at most 65 MiB (MAX_LIVE_LOG_BYTES, as dw.cjs), said once, and dw run still ends; the signed output follows', async () => {
    const outFile = path.join(clientDir, 'huge-log.out');
    const p = dwToFile(['run', 'slow', '--id', 'py-huge-log'], outFile);
    await host.waitResult('py-huge-log', ['running']);
    plantSparse('results/py-huge-log.log', 100 * 1024 * MIB);
    const capNote = `dw: results/py-huge-log.log is larger than ${MAX_LIVE_LOG_BYTES} bytes: the live output is not shown further; the host's signed output is given at the end\n`;
    await eventually('the note that the live output passed its cap', () => (p.stderr().includes(capNote) ? true : undefined), 120_000);
    expect(dw(['cancel', 'py-huge-log']).status).toBe(0);
    expect(await p.done).toBe(83);
    expect(statSync(outFile).size).toBe(MAX_LIVE_LOG_BYTES);
    expect(p.stderr().split(capNote).length).toBe(2);
    expect(p.stderr()).toContain(`dw: the live output above stopped at ${MAX_LIVE_LOG_BYTES} bytes of results/py-huge-log.log; the host's signed result holds none of its output\n`);
    expect(p.stderr()).toMatch(/py-huge-log cancelled by key /);
    rmSync(outFile);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  }, 180_000); // 65 MiB through a pipe on a loaded machine

  it('--timeout still ends dw run while a huge sparse log is planted (85), having streamed no more than MAX_LIVE_LOG_BYTES of it', async () => {
    // The run waits for its go file and the log is planted before dw run (a replay that follows the
    // run) starts, so its --timeout can only fire with the huge log there.
    const id = 'py-huge-log-2';
    const go = path.join(host.work, `go-${id}`);
    expect(dw(['submit', 'gated', `go=${go}`, '--id', id]).status).toBe(0);
    await host.waitResult(id, ['running']);
    plantSparse(`results/${id}.log`, 100 * 1024 * MIB);
    const outFile = path.join(clientDir, 'huge-log-2.out');
    const p = dwToFile(['run', 'gated', `go=${go}`, '--id', id, '--timeout', '8'], outFile);
    expect(await p.done).toBe(85);
    expect(p.stderr()).toMatch(/py-huge-log-2 is still running after 8 s; check again with: dw wait py-huge-log-2/);
    const streamed = statSync(outFile).size;
    expect(streamed).toBeGreaterThan(0);
    expect(streamed).toBeLessThanOrEqual(MAX_LIVE_LOG_BYTES);
    rmSync(outFile);
    writeFileSync(go, '');
    expect(await host.waitResult(id)).toMatchObject({ state: 'succeeded', stdout: 'started\ndone\n' });
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('an unsigned refusal re-planted over the host results once it signed one (during the run and after its success) never turns the success into 80', async () => {
    const id = 'py-unsigned-late';
    const p = new DwProcess(['run', 'lines', 'n=10', '--id', id]);
    await eventually('the first line streamed', () => (p.stdout.includes('line 0\n') ? true : undefined));
    const refusal = JSON.stringify({ v: 1, id, state: 'rejected', updated_at: new Date().toISOString(), error: { code: 'unknown_key', message: 'forged: no such key' } }, null, 2) + '\n';
    // Planted again and again (the host repairs it each time) until the host has recorded the success,
    // and once more after its signed final result.
    await eventually(
      'the run to succeed in the ledger',
      () => {
        plant(`results/${id}.json`, refusal);
        return host.service((svc) => svc.requests.get(id)?.state) === 'succeeded' ? true : undefined;
      },
      60_000,
    );
    plant(`results/${id}.json`, refusal);
    const r = await p.done;
    expect(r.status).toBe(0);
    expect(r.stdout.endsWith('line 8\nline 9\n')).toBe(true);
    expect(r.stderr).toContain(`dw: ignored an unsigned refusal at results/${id}.json (unknown_key): the host has already signed a result for ${id}; waiting for its signed answer\n`);
    expect(r.stderr).not.toContain('rejected (not signed');
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('an inbox flood (huge files in the host names, other names, a FIFO) is read once per file, at most the newest 256, and the conflict is still found (87)', async () => {
    const inbox = path.join(host.spool, 'inbox');
    expect(dw(['run', 'echo', 'msg=first', '--id', 'py-flood-1']).status).toBe(0);
    expect(dw(['submit', 'echo', 'msg=second', '--id', 'py-flood-1']).status).toBe(0);
    await eventually('the conflict message', () => (host.inbox().some((m) => m.kind === 'conflict' && m.ref === 'py-flood-1') ? true : undefined));
    const flood: string[] = [];
    for (let i = 0; i < 300; i++) {
      const name = `20200101T000000${String(i).padStart(3, '0')}Z-${i.toString(16).padStart(8, '0')}.json`;
      plantSparse(`inbox/${name}`, 8 * MIB);
      flood.push(name);
    }
    for (let i = 0; i < 20; i++) plantSparse(`inbox/evil-${i}.json`, 8 * MIB);
    const fifo = '20200101T000001000Z-ffffffff.json';
    expect(spawnSync('mkfifo', [path.join(inbox, fifo)]).status).toBe(0);
    try {
      // The real dw.py module, every file it opens recorded (Python's audit hook): five looks, one more
      // name and five looks (only it is read), every file touched (a new mtime, no new name) and five more.
      const code = `
import json, os, sys
sys.path.insert(0, sys.argv[1])
import dw
opened = []
sys.addaudithook(lambda ev, a: opened.append(a[0]) if ev == "open" and isinstance(a[0], str) and "/inbox/" in a[0] else None)
spool, key = dw.Spool(sys.argv[2]), dw.load_key(sys.argv[3])
answers = dw.Answers(spool, key, notes=False)
answers.sent("py-flood-1", "echo", {"msg": "second"})
states = [answers.status("py-flood-1")["state"] for _ in range(5)]
first = len(opened)
inbox = os.path.join(sys.argv[2], "inbox")
aside = os.path.join(sys.argv[2], "tmp", "new-name")
open(aside, "w").close()
os.rename(aside, os.path.join(inbox, "20200101T000002000Z-00000abc.json"))
states += [answers.status("py-flood-1")["state"] for _ in range(5)]
added = [os.path.basename(p) for p in opened[first:]]
for n in os.listdir(inbox):
    os.utime(os.path.join(inbox, n))
before = len(opened)
states += [answers.status("py-flood-1")["state"] for _ in range(5)]
print(json.dumps({"states": states, "opened": [os.path.basename(p) for p in opened], "first": first, "added": added, "touched": len(opened) - before}))
`;
      const r = spawnSync('python3', ['-c', code, clientDir, host.spool, keyFile], { encoding: 'utf8', timeout: 120_000 });
      expect(r.stderr).toBe('');
      const got = JSON.parse(r.stdout) as { states: string[]; opened: string[]; first: number; added: string[]; touched: number };
      expect(got.states).toEqual(Array(15).fill('conflict'));
      expect(got.added).toEqual(['20200101T000002000Z-00000abc.json']);
      expect(got.touched).toBe(0);
      expect(new Set(got.opened).size).toBe(got.opened.length); // no file opened twice
      expect(got.first).toBeLessThanOrEqual(256);
      expect(got.opened.some((n) => n.startsWith('evil-'))).toBe(false);
      expect(got.opened).not.toContain(fifo);
      expect(got.opened).not.toContain(flood[0]); // older than the newest 256
      // The command itself, through the flood: the host's message, each huge file said once.
      const cmd = dw(['run', 'echo', 'msg=second', '--id', 'py-flood-1']);
      expect(cmd.status).toBe(87);
      expect(cmd.stderr).toContain('is already bound to your earlier request');
      expect(cmd.stderr).not.toContain('evil-');
      const big = cmd.stderr.split('\n').filter((l) => / it is larger than 65536 bytes$/.test(l));
      expect(big.length).toBe(new Set(big).size);
    } finally {
      for (const n of readdirSync(inbox)) if (n.startsWith('2020') || n.startsWith('evil-')) rmSync(path.join(inbox, n));
    }
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  /** Runs `run` right after a heartbeat with `doc` planted at host.json, until `saw` says the run read it
   *  (the daemon rewrites host.json every 5 s, so a run may read the daemon's instead). */
  async function withHostJson(doc: Record<string, unknown> | string, run: () => DwResult, saw: (r: DwResult) => boolean): Promise<DwResult> {
    const hostJson = path.join(host.spool, 'host.json');
    for (let attempt = 1; ; attempt++) {
      const before = readFileSync(hostJson, 'utf8');
      await eventually('a heartbeat', () => (readFileSync(hostJson, 'utf8') !== before ? true : undefined));
      plant('host.json', typeof doc === 'string' ? doc : JSON.stringify(doc, null, 2));
      const r = run();
      if (saw(r) || attempt === 5) return r;
    }
  }

  it('a forged host.json: up false is overridden by a signed ping (doctor exits 0), a heartbeat far ahead is not "running", app_version never reaches the terminal raw', async () => {
    const stopped = await withHostJson(
      { v: 1, host_id: 'h1', app_version: '1.0.0', up: false, heartbeat_at: new Date(Date.now() - 3_600_000).toISOString() },
      () => dw(['doctor']),
      (r) => r.stdout.includes('host.json says otherwise'),
    );
    expect(stopped.stdout).toMatch(/^ok {4}the host is running: it answered the ping, signed for this key \(host.json says otherwise: the host is not running \(since [\d: -]+, per host.json\)\)$/m);
    expect(stopped.stdout).toMatch(/^ok {4}key accepted \(scope /m);
    expect(stopped.status).toBe(0);

    const ahead = { v: 1, host_id: 'h1', app_version: '1.0.0', up: true, heartbeat_at: new Date(Date.now() + 86_400_000).toISOString() };
    const future = 'the host is not running as far as host.json tells: its heartbeat is in the future, so its clock or the file is wrong';
    const submitted = await withHostJson(ahead, () => dw(['submit', 'echo', 'msg=ahead']), (r) => r.stderr.includes(future));
    expect(submitted.status).toBe(0);
    expect(submitted.stderr).toBe(`dw: ${future}; the request waits in queue/ until it runs\n`);
    const doctor = await withHostJson(ahead, () => dw(['doctor']), (r) => r.stdout.includes(future));
    expect(doctor.stdout).toMatch(/^ok {4}the host is running: it answered the ping, signed for this key \(host.json says otherwise: the host is not running as far as host.json tells: its heartbeat is in the future/m);

    const escapes = { v: 1, host_id: 'h\u001b]0;owned\u0007', app_version: '9.9\u001b[2J\nok   key accepted  FAKE', up: true, heartbeat_at: new Date().toISOString() };
    const shown = await withHostJson(escapes, () => dw(['doctor']), (r) => r.stdout.includes('Dumbwaiter ?'));
    expect(shown.stdout).toMatch(/^ok {4}the host is running \(Dumbwaiter \?, per host.json\)$/m);
    expect(shown.stdout).not.toContain('\u001b');
    expect(shown.stdout).not.toContain('FAKE');
    expect(shown.stdout.trim().split('\n')).toHaveLength(6);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it("an operation's own exit code 87 (or any other) is said to be the operation's, for run and for wait", () => {
    const r = dw(['run', 'fail', 'code=87', '--id', 'py-own-87']);
    expect(r.status).toBe(87);
    expect(r.stderr).toContain('dw: py-own-87 failed: the operation exited with 87\n');
    expect(r.stderr).not.toContain('bound to another request');
    const w = dw(['wait', 'py-own-87']);
    expect(w.status).toBe(87);
    expect(w.stderr).toContain('dw: py-own-87 failed: the operation exited with 87\n');
  });

  it('status, wait and cancel refuse an id that is not one (usage, 64) before they look at the spool', () => {
    for (const args of [['status', '../../x'], ['wait', '../../etc/passwd'], ['cancel', '../x'], ['status', 'a/b']]) {
      const r = dw(args, { DUMBWAITER_SPOOL: path.join(clientDir, 'nowhere') });
      expect(r.status, args.join(' ')).toBe(64);
      expect(r.stderr).toMatch(/^dw: request id ".*" is not a valid request id/);
    }
  });

  it('the request hash is of what was sent (a library caller with a non-text key): the host answer, never a false conflict or a crash', async () => {
    const code = `
import json, sys
sys.path.insert(0, sys.argv[1])
import dw
spool, key = dw.Spool(sys.argv[2]), dw.load_key(sys.argv[3])
answers = dw.Answers(spool, key, notes=False)
rid = dw.submit_request(answers, "echo", {"msg": "hi", 7: "seven"}, "py-hash-sent")
res = dw.Waiter(answers, rid, 30, fresh=True, notes=False).run()
print(json.dumps({"state": res["state"], "error": res.get("error")}))
`;
    const r = spawnSync('python3', ['-c', code, clientDir, host.spool, keyFile], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    // The host saw the argument "7" (JSON keys are text) and refused it: its own signed answer.
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'rejected', error: { code: 'bad_args' } });
    expect(host.result('py-hash-sent')).toMatchObject({ state: 'rejected' });
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('a deep nest ("[" x 100000) at results/<id>.json or as host.json, and a heartbeat in zone +99:00, never crash dw (no traceback, never exit 1); the requests get their answers', async () => {
    const deep = '['.repeat(100_000);
    plant('results/py-deep-1.json', deep);
    const status = dw(['status', 'py-deep-1']);
    expect(status.stderr).not.toContain('Traceback');
    expect(status.status).toBe(0);
    expect(status.stdout).toBe('py-deep-1 unknown\n');
    const run = dw(['run', 'echo', 'msg=deep', '--id', 'py-deep-1']);
    expect(run.stderr).not.toContain('Traceback');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('["deep"]\n');

    const unreadable = 'the host is not running (host.json is not a JSON file as the host writes it)';
    const submitted = await withHostJson(deep, () => dw(['submit', 'echo', 'msg=deep host.json']), (r) => r.stderr.includes(unreadable));
    expect(submitted.stderr).toBe(`dw: ${unreadable}; the request waits in queue/ until it runs\n`);
    expect(submitted.status).toBe(0);
    const id = submitted.stdout.trim();
    expect(id).toMatch(FRESH_ID);
    expect(await host.waitResult(id)).toMatchObject({ state: 'succeeded' });

    const zone = { v: 1, host_id: 'h1', app_version: '1.0.0', up: true, heartbeat_at: '2024-01-01T00:00:00+99:00' };
    const ran = await withHostJson(zone, () => dw(['run', 'echo', 'msg=zone']), (r) => r.stderr.includes('host.json has no heartbeat'));
    // Said before or after the daemon took the request in, whichever came first: the daemon runs meanwhile.
    expect(ran.stderr).toMatch(/dw: the host is not running \(host\.json has no heartbeat\); (the request waits in queue\/ until it runs|\S+ is (queued|running) and stays so until it (runs|is back))\n/);
    expect(ran.stderr).not.toContain('Traceback');
    expect(ran.status).toBe(0);
    expect(ran.stdout).toBe('["zone"]\n');
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('a catalog.json entry without the host\'s shape (a required name that is an object) is left out: dw refuses the operation as unknown (65), never a traceback; nothing is written', async () => {
    const file = path.join(host.spool, 'catalog.json');
    const original = readFileSync(file, 'utf8');
    const catalog = JSON.parse(original) as { operations: { name: string; args_schema: { required?: unknown[] } }[] };
    catalog.operations.find((o) => o.name === 'echo')!.args_schema.required = [{}];
    const queued = listing('queue');
    plant('catalog.json', JSON.stringify(catalog, null, 2));
    try {
      const r = dw(['submit', 'echo', 'msg=x']);
      expect(r.status).toBe(65);
      expect(r.stderr).toMatch(/^dw: unknown operation "echo" \(this host offers: .*\n$/);
      expect(r.stderr).not.toContain('Traceback');
      expect(r.stdout).toBe('');
      expect(listing('queue')).toEqual(queued);
    } finally {
      plant('catalog.json', original);
    }
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('a request file planted in claimed/ under its id does not make a succeeded request look pending: run exits 0 with the host answer, and so does wait', async () => {
    const planted = path.join(host.spool, 'claimed', 'zz');
    mkdirSync(planted, { recursive: true });
    writeFileSync(path.join(planted, 'py-claimed-1.json'), '{}');
    try {
      // --timeout only bounds the failure: dw.py before the fix said 85 ("still unclaimed") here.
      const r = dw(['run', 'echo', 'msg=hi', '--id', 'py-claimed-1', '--timeout', '30']);
      expect(r.stderr).not.toContain('still');
      expect(r.status).toBe(0);
      expect(r.stdout).toBe('["hi"]\n');
      const w = dw(['wait', 'py-claimed-1', '--timeout', '30']);
      expect(w.status).toBe(0);
      expect(w.stdout).toBe('["hi"]\n');
    } finally {
      rmSync(planted, { recursive: true, force: true });
    }
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('a number that is not finite where the host reads it (1e400, -1e999, 1 and 400 zeros) is refused with 65 saying so; nothing is written', async () => {
    const queued = listing('queue');
    const cases = [
      ['submit', 'echo', '--args-json', '{"msg":1e400}'],
      ['submit', 'dumbwaiter.ping', '--args-json', '{"n":-1e999}'],
      ['run', 'dumbwaiter.ping', '--args-json', `{"n":1${'0'.repeat(400)}}`],
      ['submit', 'typed', 'workers=2', 'files=[1e400]'],
    ];
    for (const args of cases) {
      const r = dw(args);
      expect(r.status, args.join(' ')).toBe(65);
      expect(r.stderr).toMatch(/^dw: (--args-json|argument "files") holds the number -?1[0-9e]*, which is not finite where the host reads it \(a double\): nothing was written\n$/);
    }
    expect(listing('queue')).toEqual(queued);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('inbox/ is not listed again while it is unchanged (a flood of names costs one listing), and is listed once more when a message comes in', async () => {
    const inbox = path.join(host.spool, 'inbox');
    const junk: string[] = [];
    for (let i = 0; i < 5000; i++) {
      junk.push(`junk-${i}.json`);
      writeFileSync(path.join(inbox, `junk-${i}.json`), '');
    }
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(inbox, hourAgo, hourAgo); // the flood came in a while ago
    const name = '20991231T235959999Z-0000beef.json';
    const doc = { v: 1, id: name.slice(0, -'.json'.length), kind: 'notice', created_at: new Date().toISOString(), ref: null, text: 'listed again' };
    const message = signHostDoc('inbox', { keyId: key.key_id, secret: decodeSecret(key.secret) }, JSON.stringify(doc, null, 2) + '\n');
    // The real dw.py module, every listing of inbox/ recorded (Python's audit hook).
    const code = `
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import dw
root, name, text = sys.argv[2], sys.argv[4], sys.argv[5]
inbox = os.path.join(root, "inbox")
listed = []
sys.addaudithook(lambda ev, a: listed.append(1) if ev in ("os.listdir", "os.scandir") and a and os.path.basename(str(a[0]).rstrip("/")) == "inbox" else None)
answers = dw.Answers(dw.Spool(root), dw.load_key(sys.argv[3]), notes=False)
for _ in range(20):
    answers.messages()
first = len(listed)
aside = os.path.join(root, "tmp", "message-aside")
with open(aside, "w") as f:
    f.write(text)
os.rename(aside, os.path.join(inbox, name))
past = time.time() - 1800
os.utime(inbox, (past, past))
found = [m.get("text") for m in answers.messages()]
for _ in range(20):
    answers.messages()
print(json.dumps({"first": first, "after": len(listed) - first, "found": found}))
`;
    try {
      const r = spawnSync('python3', ['-c', code, clientDir, host.spool, keyFile, name, message], { encoding: 'utf8', timeout: 60_000 });
      expect(r.stderr).toBe('');
      const got = JSON.parse(r.stdout) as { first: number; after: number; found: string[] };
      expect(got.first).toBe(1);
      expect(got.after).toBe(1);
      expect(got.found).toContain('listed again');
    } finally {
      for (const n of [...junk, name]) rmSync(path.join(inbox, n), { force: true });
    }
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });
});
