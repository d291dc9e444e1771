// The host's view of its requests, through the real command line against a real daemon: `requests`
// with each filter, `show` of a succeeded, a denied and an uncertain request, `logs` of a finished run
// and `--follow` of a running one, and `approvals watch` answered through stdin (main/cli/commands/).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, GATED_OP, TestHost, eventually } from '../helpers/host';
import { allowlistYaml } from '../helpers/allowlists';
import { GatedRuns } from '../helpers/gatedRuns';
import { stopGroups } from '../helpers/processes';
import { openLedger } from '../../main/core/ledger/db';
import type { KeyFile } from '../../shared/protocol/types';

const ESC = '\x1b';

const allowlist = (work: string) =>
  allowlistYaml(
    { name: 'say', command: ['/bin/echo', '{msg}'], args: { msg: { type: 'string', max_length: 200 } }, concurrency: 4 },
    GATED_OP,
    { name: 'deploy', command: ['/bin/echo', 'deployed', '{target}'], cwd: work, env: { DEPLOY_REGION: 'eu-1' }, args: { target: { type: 'string', max_length: 100 } }, scope: 'write', approval: 'always' },
  );

/** A command line process left running (logs --follow, approvals watch), its output as it comes. */
class Running {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  constructor(readonly proc: ChildProcess) {
    proc.stdout!.on('data', (c: Buffer) => (this.stdout += c.toString()));
    proc.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  }

  /** Waits until stdout holds `text` after `from` (an offset into it); returns where it ends. */
  async saw(text: string, from = 0): Promise<number> {
    const at = await eventually(`"${text}" in the output:\n${this.stdout}\n${this.stderr}`, () => {
      const i = this.stdout.indexOf(text, from);
      return i >= 0 ? i + text.length : undefined;
    });
    return at;
  }

  answer(line: string): void {
    this.proc.stdin!.write(`${line}\n`);
  }
}

function cliProcess(host: TestHost, args: string[]): Running {
  return new Running(spawn(process.execPath, [CLI, ...args, '--home', host.home], { stdio: ['pipe', 'pipe', 'pipe'] }));
}

let host: TestHost;
let alpha: KeyFile;
let beta: KeyFile;
let other: KeyFile;
let otherSpool: string;
const started: Running[] = [];

const cli = (args: string[]) => host.cli(args, { spool: null });
function cliJson<T>(args: string[]): T {
  const r = cli([...args, '--json']);
  if (r.status !== 0) throw new Error(`dumbwaiter ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
const ids = (args: string[]) => cliJson<{ id: string }[]>(['requests', ...args]).map((r) => r.id);

beforeAll(async () => {
  host = new TestHost();
  host.writeAllowlist(allowlist(host.work));
  otherSpool = host.addSpool('other');
  alpha = host.createKey('alpha', 'write');
  beta = host.createKey('beta', 'write');
  other = host.createKey('elsewhere', 'write', null, 'other');
  await host.startDaemon({}, { spool: null });
  host.submit(alpha, 'r-1', 'say', { msg: 'hello' });
  await host.waitResult('r-1');
  host.submit(beta, 'r-2', 'say', { msg: `bold ${ESC}[1mtext` });
  await host.waitResult('r-2');
  host.submit(other, 'r-3', 'say', { msg: 'over there' }, {}, otherSpool);
  await host.waitResult('r-3', undefined, undefined, otherSpool);
  host.submit(alpha, 'r-4', 'deploy', { target: 'staging' }, { intent: 'ship it' });
  await host.waitResult('r-4', ['awaiting_approval']);
}, 60_000);

afterAll(async () => {
  for (const r of started) r.proc.kill('SIGKILL');
  await host.cleanup();
});

describe('dumbwaiter requests', () => {
  it('lists recent requests newest first, filtered by state, spool, key and age, as a table or JSON', () => {
    expect(ids([])).toEqual(['r-4', 'r-3@other', 'r-2', 'r-1']);
    expect(ids(['--state', 'succeeded'])).toEqual(['r-3@other', 'r-2', 'r-1']);
    expect(ids(['--state', 'awaiting_approval,failed'])).toEqual(['r-4']);
    expect(ids(['--key', 'alpha'])).toEqual(['r-4', 'r-1']);
    expect(ids(['--key', beta.key_id])).toEqual(['r-2']);
    expect(ids(['--spool', 'other'])).toEqual(['r-3@other']);
    expect(ids(['--limit', '2'])).toEqual(['r-4', 'r-3@other']);
    const [first] = cliJson<{ id: string; key_name: string; state: string; op: string }[]>(['requests', '--key', 'alpha']);
    expect(first).toMatchObject({ id: 'r-4', key_name: 'alpha', state: 'awaiting_approval', op: 'deploy' });

    // An older request (claimed two days ago) is left out by --since 1d.
    const db = openLedger(path.join(host.home, 'ledger.sqlite'));
    try {
      db.prepare('UPDATE requests SET claimed_at = ? WHERE id = ?').run(new Date(Date.now() - 2 * 86400_000).toISOString(), 'r-1');
    } finally {
      db.close();
    }
    expect(ids(['--since', '1d'])).toEqual(['r-4', 'r-3@other', 'r-2']);
    expect(ids(['--since', '3d'])).toEqual(['r-4', 'r-3@other', 'r-2', 'r-1']);

    const table = cli(['requests', '--key', 'beta']);
    expect(table.status).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+STATE\s+OPERATION\s+KEY\s+SPOOL\s+CLAIMED\s+OUTCOME$/);
    expect(table.stdout).toMatch(/r-2\s+succeeded\s+say\s+beta\s+default\s+\S+ ago\s+exit 0/);
  });
});

describe('dumbwaiter show', () => {
  it('shows a succeeded run: its argv, folder, environment, outcome and history', () => {
    const r = cli(['show', 'r-1']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Operation: say');
    expect(r.stdout).toContain('Key:       alpha');
    expect(r.stdout).toContain('State:     succeeded');
    expect(r.stdout).toContain('program: "/bin/echo"\n    argument 1: "hello"');
    expect(r.stdout).toContain('Outcome:   exit code 0');
    expect(r.stdout).toMatch(/History:\n.*claimed/);
    const doc = cliJson<{ args: unknown; plan: { argv: string[] }; history: unknown[] }>(['show', 'r-1']);
    expect(doc.args).toEqual({ msg: 'hello' });
    expect(doc.plan.argv).toEqual(['/bin/echo', 'hello']);
    expect(doc.history.length).toBeGreaterThan(0);
  });

  it('shows who denied a request, when, and why', async () => {
    host.submit(alpha, 'r-deny', 'deploy', { target: 'prod' });
    await host.waitResult('r-deny', ['awaiting_approval']);
    expect(cli(['approvals', 'deny', 'r-deny', '--reason', 'not on a Friday']).status).toBe(0);
    const r = cli(['show', 'r-deny']);
    expect(r.stdout).toMatch(/Decided: {3}denied by cli:\S+ at \d{4}-\d\d-\d\dT[\d:.]+Z: .*not on a Friday/);
    expect(r.stdout).toMatch(/denied\s+cli:\S+: /);
    const doc = cliJson<{ decided_by: string; decided_at: string; state: string }>(['show', 'r-deny']);
    expect(doc).toMatchObject({ state: 'denied', decided_by: expect.stringMatching(/^cli:/), decided_at: expect.any(String) });
  });

  it('refuses an unknown request in one line', () => {
    const r = cli(['show', 'no-such']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('dumbwaiter show: no request "no-such" (dumbwaiter requests lists them)\n');
  });
});

describe('dumbwaiter logs', () => {
  it('prints a finished run\'s output, its control characters escaped unless --raw, and says when a request has not run yet', () => {
    expect(cli(['logs', 'r-1'])).toMatchObject({ status: 0, stdout: 'hello\n' });
    expect(cli(['logs', 'r-2']).stdout).toBe('bold \\x1b[1mtext\n');
    expect(cli(['logs', 'r-2', '--raw']).stdout).toBe(`bold ${ESC}[1mtext\n`);
    expect(cli(['logs', 'r-4'])).toMatchObject({ status: 0, stdout: '', stderr: '(r-4 has not run yet: it is awaiting_approval; --follow waits for it and prints its output)\n' });
  });

  it('follows a running run as it prints, and ends when it ends', async () => {
    const go = path.join(host.root, 'go-follow');
    host.submit(alpha, 'r-gated', 'gated', { go });
    await host.waitResult('r-gated', ['running']);
    const follow = cliProcess(host, ['logs', 'r-gated', '--follow']);
    started.push(follow);
    await follow.saw('started\n');
    expect(follow.stdout).not.toContain('done');
    writeFileSync(go, '');
    expect(await follow.exited).toBe(0);
    expect(follow.stdout).toBe('started\ndone\n');
    expect(follow.stderr).toContain('(r-gated ended: succeeded, exit code 0)');
  });
});

describe('dumbwaiter logs --follow of a request waiting for a person', () => {
  it('waits until it is decided, then prints its output and how it ended', async () => {
    host.submit(beta, 'r-wait', 'deploy', { target: 'later' });
    await host.waitResult('r-wait', ['awaiting_approval']);
    const follow = cliProcess(host, ['logs', 'r-wait', '--follow']);
    started.push(follow);
    await eventually('the note that it waits', () => (follow.stderr.includes('(r-wait has not run yet: it is awaiting_approval; its output follows once it runs)') ? true : undefined));
    expect(cli(['approvals', 'approve', 'r-wait']).status).toBe(0);
    expect(await follow.exited).toBe(0);
    expect(follow.stdout).toBe('deployed later\n');
    expect(follow.stderr).toContain('(r-wait ended: succeeded, exit code 0)');
  });
});

describe('dumbwaiter logs --follow, when the live log in the spool is replaced while it runs', () => {
  it('says that what it printed is not the host\'s record, and the record is still there', async () => {
    const go = path.join(host.root, 'go-forged');
    host.submit(alpha, 'r-forged', 'gated', { go });
    await host.waitResult('r-forged', ['running']);
    const follow = cliProcess(host, ['logs', 'r-forged', '--follow']);
    started.push(follow);
    await follow.saw('started\n');
    // What a sandbox can do: put a file of its own at the log's name in results/.
    const forged = path.join(host.spool, 'tmp', 'forged.log');
    writeFileSync(forged, 'started\nall checks passed\n');
    renameSync(forged, path.join(host.spool, 'results', 'r-forged.log'));
    await follow.saw('all checks passed\n');
    writeFileSync(go, '');
    expect(await follow.exited).toBe(0);
    expect(follow.stderr).toContain('(the output above is not all the host recorded of this run');
    expect(cli(['logs', 'r-forged']).stdout).toBe('started\ndone\n');
  });
});

describe('dumbwaiter approvals watch', () => {
  it('prints each card whole and escaped, and approves, denies with a reason, and approves for a while as answered on stdin', async () => {
    const watch = cliProcess(host, ['approvals', 'watch']);
    started.push(watch);
    // r-4 waits from the start: approved as shown.
    let at = await watch.saw('Run deploy?');
    at = await watch.saw('[d]eny, [s]kip?', at);
    const card = watch.stdout.slice(0, at);
    expect(card).toContain('Why:      "ship it"');
    expect(card).toContain('program: "/bin/echo"\n      argument 1: "deployed"\n      argument 2: "staging"');
    expect(card).toContain(`in folder: ${JSON.stringify(host.work)}`);
    expect(card).toContain('DEPLOY_REGION="eu-1"');
    expect(card).toContain('timeout: ');
    expect(card).toContain('target = "staging"');
    watch.answer('a');
    at = await watch.saw('Approved r-4.', at);
    expect((await host.waitResult('r-4')).state).toBe('succeeded');

    // A hostile intent and argument: escaped on the card, never a raw escape on the terminal.
    host.submit(alpha, 'w-deny', 'deploy', { target: `x${ESC}[2K\rproduction` }, { intent: `fine${ESC}[1A\nApproved already` });
    at = await watch.saw('[d]eny, [s]kip?', at);
    expect(watch.stdout).toContain('Why:      "fine\\x1b[1A\\nApproved already"');
    expect(watch.stdout).toContain('argument 2: "x\\u001b[2K\\rproduction"');
    expect(watch.stdout).not.toContain(ESC);
    watch.answer('d');
    at = await watch.saw('Reason for denying', at);
    watch.answer('not this one');
    at = await watch.saw('Denied w-deny.', at);
    expect(await host.waitResult('w-deny')).toMatchObject({ state: 'denied' });
    expect(cli(['show', 'w-deny']).stdout).toContain('not this one');

    // Approve for a while, with any target: a later call with another target runs without asking.
    host.submit(alpha, 'w-grant', 'deploy', { target: 'canary' });
    at = await watch.saw('approve for a [w]hile', at);
    watch.answer('w');
    at = await watch.saw('For how long? 5 min, 15 min, 30 min, 1 h, 2 h, 4 h, 8 h', at);
    watch.answer('1h');
    at = await watch.saw('Later calls may give as target: [t]his value, [a]ny value, values [m]atching a pattern', at);
    watch.answer('a');
    at = await watch.saw('Revoke it with:', at);
    expect(watch.stdout).toMatch(/Approved w-grant\.\nGrant \S+: until \S+, key \S+ may call deploy without asking when each argument is:\n {2}target: any value/);
    host.submit(alpha, 'w-later', 'deploy', { target: 'elsewhere' });
    expect(await host.waitResult('w-later')).toMatchObject({ state: 'succeeded' });
    const grants = cliJson<{ op: string; args: Record<string, unknown> }[]>(['approvals', 'grants']);
    expect(grants).toEqual([expect.objectContaining({ op: 'deploy', args: { target: { any: true } } })]);

    watch.proc.stdin!.end();
    expect(await watch.exited).toBe(0);
    expect(watch.stderr).toContain('stdin is not a terminal');
  });

  it('ignores an answer typed before the card was printed, and leaves a skipped request waiting', async () => {
    const watch = cliProcess(host, ['approvals', 'watch']);
    started.push(watch);
    let at = await watch.saw('Waiting for requests that need a person');
    watch.answer('a'); // typed ahead, before any card: not an answer
    await eventually('the line to be ignored', () => (watch.stderr.includes('(no question is open: the line "a" was ignored)') ? true : undefined));
    host.submit(beta, 'w-ahead', 'deploy', { target: 'staging' }); // beta: alpha's grant above does not cover it
    at = await watch.saw('[d]eny, [s]kip?', at);
    expect(cliJson<{ id: string }[]>(['approvals', 'list']).map((p) => p.id)).toEqual(['w-ahead']);
    watch.answer('s');
    await watch.saw('Waiting for requests that need a person', at);
    expect(cliJson<{ id: string }[]>(['approvals', 'list']).map((p) => p.id)).toEqual(['w-ahead']);
    watch.proc.kill('SIGINT');
    expect(await watch.exited).toBe(0);
    expect(watch.stderr).not.toMatch(/^\s+at /m);

    // --spool: that spool's requests only (w-ahead came through the default spool).
    const elsewhere = cliProcess(host, ['approvals', 'watch', '--spool', 'other']);
    started.push(elsewhere);
    await elsewhere.saw('Waiting for requests that need a person');
    expect(elsewhere.stdout).not.toContain('w-ahead');
    elsewhere.proc.stdin!.end();
    expect(await elsewhere.exited).toBe(0);
  });
});

describe('dumbwaiter approvals watch, when a request is decided elsewhere while its card is open', () => {
  it('approves nothing, and says what became of it', async () => {
    const watch = cliProcess(host, ['approvals', 'watch']);
    started.push(watch);
    // w-ahead still waits (skipped above): its card is open here while the app, say, denies it.
    const at = await watch.saw('[d]eny, [s]kip?');
    expect(watch.stdout).toContain('Request:  w-ahead');
    expect(cli(['approvals', 'deny', 'w-ahead', '--reason', 'decided in the app']).status).toBe(0);
    watch.answer('a');
    await eventually('the refusal', () => (watch.stderr.includes('w-ahead is no longer waiting: it is denied, decided by cli:') ? true : undefined));
    await watch.saw('Waiting for requests that need a person', at);
    expect(cliJson<{ state: string }>(['show', 'w-ahead']).state).toBe('denied');
    watch.proc.kill('SIGTERM');
    expect(await watch.exited).toBe(0);
  });
});

describe('dumbwaiter show of an uncertain run', () => {
  let h: TestHost;
  afterAll(async () => {
    await h?.cleanup();
    stopGroups();
  });

  it('shows the reconcile attempt: who ran it, when, its command, verdict and output', async () => {
    h = new TestHost();
    const gated = new GatedRuns(h);
    const answers = path.join(h.root, 'answers');
    mkdirSync(answers);
    h.writeAllowlist(`version: 1
operations:
${gated.op('deploy', `    reconcile:
      command: [/bin/sh, -c, 'echo "looked up $1"; exit 3', "${answers}", "{request_id}"]
      timeout_s: 20
`)}`);
    const key = h.createKey('rc', 'read');
    await gated.startThenKill9(key, [['rc-1', 'deploy']]);
    writeFileSync(gated.goFile('rc-1'), '');
    await h.runGone('rc-1');
    await h.startDaemon();
    await eventually('the reconcile attempt', () => (h.result('rc-1')?.reconcile ? true : undefined));
    const r = h.cli(['show', 'rc-1']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('State:     uncertain');
    expect(r.stdout).toMatch(/Reconcile: last attempt \S+ by daemon \(restart\): it could not tell \(exit code 3\)/);
    expect(r.stdout).toContain('    stdout: "looked up rc-1\\n"');
    expect(r.stdout).toMatch(/reconcile\s+daemon/);
    const doc = JSON.parse(h.cli(['show', 'rc-1', '--json']).stdout) as { reconcile: { verdict: string; exit_code: number } };
    expect(doc.reconcile).toMatchObject({ verdict: 'unknown', exit_code: 3 });
  }, 60_000);
});
