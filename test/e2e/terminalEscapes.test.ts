// Issue 12, item 8: the sandbox writes escape sequences, bidi overrides and line feeds into what a
// human reads (an intent, arguments, an operation's name, a queue file's name), against the real
// daemon and the real command line. Nothing reaches the terminal or the log raw: the human sees the
// escaped form and the real argv, and no line the sandbox forged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, eventually, runningHost, type DaemonProcess, type TestHost } from '../helpers/host';
import { allowlistYaml, type OpSpec } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

/** What a terminal acts on or what hides or reorders text: C0 (but line feeds), DEL, C1, bidi and other
 *  invisible format characters, line and paragraph separators. */
// eslint-disable-next-line no-control-regex -- raw controls are what this looks for
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2069\ufeff]/u;

/** Redraws the two lines above, clears them, writes a harmless argv, and reverses what follows. */
const FORGED = '\x1b[2A\x1b[2K    argv: ["/bin/true"]\x1b[2K\n    intent: all fine\u202e';
const INTENT = `tidy up${FORGED}`;
const TARGET = `staging\x1b]0;pwned\x07\u009b2J\u2067`;
/** Ends with a line feed and what would pass for the next entry of the log. */
const EVIL_OP = 'evil\x1b[31m\u202e\u2028op\n[2026-01-01 00:00:00.000] [info] (intake) all requests fine';
const EVIL_FILE = 'bad\x1b[2K\u202e\u0085.json';

let host: TestHost;
let daemon: DaemonProcess;
let key: KeyFile;

beforeAll(async () => {
  const deploy: OpSpec = { name: 'deploy', description: 'Deploy (asks a human)', command: ['/bin/echo', 'deployed', '{target}'], args: { target: { type: 'string', max_length: 200 } }, scope: 'write', approval: 'always' };
  ({ host, key, daemon } = await runningHost(allowlistYaml(deploy), { name: 'agent-one', scope: 'write' }));
  host.submit(key, 'esc-1', 'deploy', { target: TARGET }, { intent: INTENT });
  await host.waitResult('esc-1', ['awaiting_approval']);
  host.submit(key, 'esc-2', EVIL_OP);
  expect((await host.waitResult('esc-2')).error?.code).toBe('unknown_op');
  host.writeQueueFile(EVIL_FILE, 'not a request');
  await eventually('the odd queue entry in the audit log', () => (host.audit('bad_envelope', 'rejected').some((r) => r.message.includes('bad\\u001b')) ? true : undefined));
});

afterAll(async () => {
  await host?.cleanup();
});

function cli(args: string[]): string {
  const r = host.cli(args);
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).not.toMatch(RAW);
  return r.stdout;
}

describe('what the sandbox wrote, shown to a human', () => {
  it('approvals list shows the escaped intent and arguments and the real argv, and no line the sandbox forged', () => {
    const out = cli(['approvals', 'list']);
    expect(out).not.toMatch(RAW);
    const lines = out.split('\n');
    expect(lines.filter((l) => /^ +(program|argument \d+):/.test(l))).toEqual(['      program: "/bin/echo"', '      argument 1: "deployed"', String.raw`      argument 2: "staging\u001b]0;pwned\u0007\u009b2J\u2067"`]);
    expect(lines.filter((l) => l.startsWith('  Why:'))).toEqual([String.raw`  Why:      "tidy up\x1b[2A\x1b[2K    argv: ["/bin/true"]\x1b[2K\n    intent: all fine\u202e" (the agent's words)`]);
    expect(lines.filter((l) => /^\s*(argv|intent):/.test(l))).toEqual([]); // the lines the intent tried to forge
  });

  it('approvals list --json gives a program the very same values, with nothing a terminal acts on', () => {
    const out = cli(['approvals', 'list', '--json']);
    expect(out.replaceAll('\n', '')).not.toMatch(RAW);
    const [p] = JSON.parse(out) as { id: string; approval: { argv: string[]; intent: string } }[];
    expect(p).toMatchObject({ id: 'esc-1', approval: { argv: ['/bin/echo', 'deployed', TARGET], intent: INTENT } });
  });

  it('audit shows an unknown operation named with escapes, and a queue file named with them, escaped', () => {
    const out = cli(['audit', '--limit', '1000']);
    expect(out).not.toMatch(RAW);
    expect(out).toContain(String.raw`no operation "evil\x1b[31m\u202e\u2028op\n[2026-01-01 00:00:00.000] [info] (intake) all requests fine"`);
    expect(out).toContain(String.raw`queue entry "bad\u001b[2K\u202e\x85.json"`);
    expect(out.split('\n').filter((l) => l.includes('esc-2')).every((l) => /^\d{4}-/.test(l))).toBe(true);
  });

  it('status, as text and as JSON (which holds the waiting intent), shows nothing raw', () => {
    const out = cli(['status']);
    expect(out).not.toMatch(RAW);
    expect(out).toContain('Approvals: 1 waiting');
    const json = cli(['status', '--json']);
    expect(json.replaceAll('\n', '')).not.toMatch(RAW);
    expect((JSON.parse(json) as { approvals: { approval: { intent: string } }[] }).approvals[0]?.approval.intent).toBe(INTENT);
  });

  it('the log file and the daemon console hold the escaped names, nothing raw, and no entry the sandbox forged', async () => {
    const logFile = path.join(host.home, 'logs', 'dumbwaiter.log');
    for (const read of [() => readFileSync(logFile, 'utf8'), () => daemon.stderr]) {
      // The audit log is written first; the log line follows it.
      const text = await eventually('the queue entry in the log', () => (read().includes('quarantine/') ? read() : undefined));
      expect(text).not.toMatch(RAW);
      expect(text).toContain(String.raw`evil\x1b[31m\u202e\u2028op`);
      expect(text).toContain(String.raw`bad\u001b[2K\u202e\x85.json`);
      // A line feed of a message is kept, but what follows it is indented: never a line of its own.
      const forged = text.split('\n').filter((l) => l.includes('all requests fine'));
      expect(forged.length).toBeGreaterThan(0);
      for (const l of forged) expect(l).toMatch(/^ {4}/);
    }
  });

  it('the daemon is alive after all of it and answers a valid request', async () => {
    expect((await host.sentinel(key)).state).toBe('succeeded');
    expect(cli(['approvals', 'approve', 'esc-1'])).toContain('Approved esc-1.');
    const done = await host.waitResult('esc-1', ['succeeded']);
    expect(done.stdout).toBe(`deployed ${TARGET}\n`);
  });
});

/** A hyperlink (OSC 8), a clipboard write (OSC 52), cursor movement and a bidi override. */
const SANDBOX_TEXT = 'see \x1b]8;;https://evil.example\x07docs\x1b]8;;\x07 \x1b]52;c;cm0gLXJmIH4=\x07\x1b[2A\x1b[2K\u202egpj.exe\u009b2J';

describe('what the spool holds, shown by the sandbox clients (dw.cjs and dw.py)', () => {
  const keyPath = () => path.join(host.root, 'client.key.json');
  const clients: [string, string][] = [
    ['dw.cjs', process.execPath],
    ['dw.py', 'python3'],
  ];
  const run = (client: string, args: string[]) => {
    const program = client === 'python3' ? 'dw.py' : 'dw.cjs';
    const r = spawnSync(client, [path.join(host.spool, 'bin', program), ...args], { encoding: 'utf8', env: { PATH: process.env.PATH!, DUMBWAITER_SPOOL: host.spool, DUMBWAITER_KEY_FILE: keyPath() }, timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    return r;
  };

  beforeAll(() => {
    writeFileSync(keyPath(), JSON.stringify(key));
    host.service((svc) => svc.inbox.send(`build note: ${SANDBOX_TEXT}`, 'test'));
  });

  it.each(clients)('%s ops escapes a description catalog.json was given, and leaves out a malformed entry with a note', (_name, cmd) => {
    const file = path.join(host.spool, 'catalog.json');
    const real = readFileSync(file, 'utf8');
    const doc = JSON.parse(real) as { operations: Record<string, unknown>[] };
    const forged = [{ ...doc.operations[0]!, description: `Deploy. ${SANDBOX_TEXT}` }, { name: 'broken\x1b[2J', scope: 'write' }];
    writeFileSync(file, JSON.stringify({ ...doc, operations: forged }));
    try {
      const text = run(cmd, ['ops']);
      expect(text.stdout).not.toMatch(RAW);
      expect(text.stdout).toContain(String.raw`see \x1b]8;;https://evil.example\x07docs\x1b]8;;\x07 \x1b]52;c;cm0gLXJmIH4=\x07\x1b[2A\x1b[2K\u202egpj.exe\x9b2J`);
      expect(text.stderr).not.toMatch(RAW);
      expect(text.stderr).toContain(String.raw`catalog.json: operation 2 "broken\x1b[2J" is left out: its name is not an operation name`);
      const json = run(cmd, ['ops', '--json']).stdout;
      expect(json.replaceAll('\n', '')).not.toMatch(RAW);
      expect((JSON.parse(json) as { description: string }[])[0]?.description).toBe(`Deploy. ${SANDBOX_TEXT}`);
    } finally {
      writeFileSync(file, real);
    }
  });

  it.each(clients)('%s inbox escapes a message, its time in UTC', (_name, cmd) => {
    const text = run(cmd, ['inbox']).stdout;
    expect(text).not.toMatch(RAW);
    expect(text).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC {2}notice/m);
    expect(text).toContain(String.raw`build note: see \x1b]8;;https://evil.example\x07docs`);
    const json = run(cmd, ['inbox', '--json']).stdout;
    expect(json.replaceAll('\n', '')).not.toMatch(RAW);
    expect((JSON.parse(json) as { text: string }[]).map((m) => m.text)).toContain(`build note: ${SANDBOX_TEXT}`);
  });
});

describe('the command line and a reader that went away', () => {
  it('audit into a pipe nobody reads ends quietly (it died of an unhandled EPIPE), and keys create still writes the key', () => {
    const audit = intoClosedPipe(['audit', '--limit', '1000']);
    expect(audit.stderr).toBe('');
    expect(audit.status).toBe(0);
    const out = path.join(host.root, 'piped.key.json');
    const create = intoClosedPipe(['keys', 'create', 'piped', '--out', out]);
    expect(create.stderr).toBe('');
    expect(create.status).toBe(0);
    const written = JSON.parse(readFileSync(out, 'utf8')) as KeyFile;
    expect(host.service((svc) => svc.keys.list()).find((k) => k.key_id === written.key_id)?.name).toBe('piped');
  });
});

/** Runs the command line with its stdout on a pipe whose reading end is already closed: its first
 *  write fails with EPIPE, as under `| head -1` once head has exited, but without a race. */
function intoClosedPipe(args: string[]): { status: number | null; stderr: string } {
  const code = 'import os, subprocess, sys\nr, w = os.pipe()\nos.close(r)\np = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)\nsys.stdout.write(str(p.returncode) + "\\n" + p.stderr.decode())';
  const r = spawnSync('python3', ['-c', code, process.execPath, CLI, ...args, '--home', host.home, '--spool', host.spool], { encoding: 'utf8', timeout: 60_000 });
  const [status, ...stderr] = r.stdout.split('\n');
  return { status: Number(status), stderr: stderr.join('\n') };
}
