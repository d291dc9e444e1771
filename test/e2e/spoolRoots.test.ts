// A spool inside an operation's root, against the real daemon and command line: the sandbox of spool
// default, with an operation that reads files below a project folder, must never read the results of
// spool cee put in that folder. `spools add` (and `init` moving a spool) refuses such a folder, naming
// the operation; a spool put there by editing settings.json by hand makes the running daemon offer
// nothing (as a restart would), not keep the allowlist whose root now holds cee; and a root declared
// shared with the sandbox of default that holds cee's folder does not load.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { NO_OPERATIONS } from '../helpers/allowlists';
import { createSpool } from '../../main/core/spool/layout';
import type { CatalogDoc, KeyFile, ResultDoc } from '../../shared/protocol/types';
import type { SpoolInfo } from '../../shared/ipc/views';

let host: TestHost;
/** The project folder that `read-file` reads below; spool cee is put inside it. */
let proj: string;
let cee: string;
/** Key a works through spool default. */
let a: KeyFile;
let daemon: DaemonProcess;
let ids = 0;

/** `greet` touches no folder; `read-file` reads below `root` (shared with the sandbox when `shared`). */
const allowlist = (root: string, shared = false) => `version: 1
operations:
  - name: greet
    command: [echo, hi]
    scope: read
    approval: never
  - name: read-file
    command: [cat, "{file}"]
    scope: read
    approval: never
${shared ? '    spools: [default]\n' : ''}    args:
      file: {type: path, within: [${JSON.stringify(root)}]${shared ? ', shared_with_sandbox: true' : ''}}
`;

beforeEach(() => {
  host = new TestHost(NO_OPERATIONS, { rescan_interval_ms: 50 });
  proj = path.join(realpathSync(host.root), 'proj');
  cee = path.join(proj, 'cee');
  mkdirSync(path.join(proj, 'src'), { recursive: true });
  writeFileSync(path.join(proj, 'src', 'notes.txt'), 'project notes\n');
  a = host.createKey('a', 'read', null, 'default');
});

afterEach(async () => {
  await host.cleanup();
});

const spoolNames = () => (JSON.parse(host.cli(['spools', 'list', '--json'], { spool: null }).stdout) as SpoolInfo[]).map((s) => s.name);
const catalogOps = (dir: string) => (JSON.parse(readFileSync(path.join(dir, 'catalog.json'), 'utf8')) as CatalogDoc).operations.map((o) => o.name);

/** A request of key a through spool default, answered. */
async function byA(op: string, args: Record<string, unknown> = {}): Promise<ResultDoc> {
  const id = `a-${++ids}`;
  host.submit(a, id, op, args);
  return host.waitResult(id);
}

/** The daemon answers a valid request: greet runs for a. */
async function stillServes(): Promise<void> {
  const r = await byA('greet');
  expect(r.state, JSON.stringify(r.error)).toBe('succeeded');
  expect(r.stdout).toBe('hi\n');
}

/** A signed result of spool cee's sandbox in cee/results: what a sandbox of another spool must not read. */
async function ceeResult(): Promise<string> {
  const c = host.createKeyWithCli('c', 'cee');
  const r = await host.sentinel(c, 'dumbwaiter.ping', {}, cee);
  expect(r.state).toBe('succeeded');
  return path.join(cee, 'results', `${r.id}.json`);
}

/** a's read of cee's result: no operation of that name is offered, and nothing ran. */
async function readOfCeeRefused(file: string): Promise<void> {
  const r = await byA('read-file', { file });
  expect(r.state).toBe('rejected');
  expect(r.error?.code).toBe('unknown_op');
  expect(r.stdout ?? '').toBe('');
  expect(JSON.stringify(r)).not.toContain(readFileSync(file, 'utf8').slice(0, 40));
  expect(host.service((s) => s.requests.get(r.id)?.pid ?? null)).toBeNull();
}

describe("a spool inside an operation's root", () => {
  it('spools add (and init moving a spool) refuses the folder while the daemon runs, naming the operation, and touches nothing', async () => {
    host.writeAllowlist(allowlist(proj));
    daemon = await host.startDaemon({}, { spool: null });
    expect((await byA('read-file', { file: path.join(proj, 'src', 'notes.txt') })).stdout).toBe('project notes\n');

    const added = host.cli(['spools', 'add', 'cee', cee], { spool: null });
    expect(added.status).toBe(1);
    expect(added.stderr).toContain(`spool cee at ${cee} would be within reach of the allowlist's operation "read-file"`);
    expect(added.stderr).toMatch(/operations\[1\]\.args\.file\.within: \S+proj contains the spool "cee"/);
    expect(spoolNames()).toEqual(['default']);
    expect(existsSync(cee)).toBe(false);

    const moved = host.cli(['init', '--spool', path.join(proj, 'moved')], { spool: null });
    expect(moved.status).toBe(1);
    expect(moved.stderr).toContain(`spool default at ${path.join(proj, 'moved')} would be within reach of the allowlist's operation "read-file"`);
    expect(existsSync(path.join(proj, 'moved'))).toBe(false);

    // Nothing changed for the daemon: the operation still works, and so does the rest.
    expect((await byA('read-file', { file: path.join(proj, 'src', 'notes.txt') })).stdout).toBe('project notes\n');
    await stillServes();
    expect(daemon.stderr).not.toContain('serving spool cee');
  });

  it('put there by editing settings.json by hand, the running daemon offers nothing until the allowlist is fixed: a reads none of cee\'s results', async () => {
    host.writeAllowlist(allowlist(proj));
    daemon = await host.startDaemon({}, { spool: null });
    await stillServes();

    // The hand edit `spools add` would have refused: cee's folder made as init makes one, and named.
    createSpool(cee);
    const settingsFile = path.join(host.home, 'settings.json');
    const settings = JSON.parse(readFileSync(settingsFile, 'utf8')) as { spools: { name: string; dir: string }[] };
    writeFileSync(settingsFile, JSON.stringify({ ...settings, spools: [...settings.spools, { name: 'cee', dir: cee }] }));
    const entry = await eventually('the allowlist refused with cee inside its root', () => host.audit('', 'allowlist_invalid').find((e) => e.message.includes('contains the spool "cee"')));
    expect(entry.message).toContain('the last good allowlist does not load with the spools as they are now either, so no operation is offered');
    expect(catalogOps(host.spool)).not.toContain('read-file');

    const file = await ceeResult();
    await readOfCeeRefused(file);
    expect((await byA('greet')).error?.code).toBe('unknown_op'); // nothing at all is offered
    expect((await host.sentinel(a)).state).toBe('succeeded'); // and the daemon is alive

    // Fixed (the root narrowed to what cee is not in): offered again, and cee's results stay out of reach.
    host.writeAllowlist(allowlist(path.join(proj, 'src')));
    await eventually('read-file offered again', () => (catalogOps(host.spool).includes('read-file') ? true : undefined));
    expect((await byA('read-file', { file: path.join(proj, 'src', 'notes.txt') })).stdout).toBe('project notes\n');
    const outside = await byA('read-file', { file });
    expect(outside.state).toBe('rejected');
    expect(outside.stdout ?? '').toBe('');
    await stillServes();
  });

  it("a root declared shared with default's sandbox that holds cee's folder does not load, naming cee; the last good allowlist goes on", async () => {
    host.writeAllowlist(allowlist(host.work));
    daemon = await host.startDaemon({}, { spool: null });
    const added = host.cli(['spools', 'add', 'cee', cee], { spool: null });
    expect(added.status, added.stderr).toBe(0);
    const file = await ceeResult();

    host.writeAllowlist(allowlist(proj, true));
    const entry = await eventually('the shared root refused', () => host.audit('', 'allowlist_invalid').find((e) => e.message.includes('contains the spool "cee"')));
    expect(entry.message).toContain(`the sandbox of spool "default" would reach spool "cee"'s files through it`);
    expect(entry.message).toContain('keeping the last good allowlist (2 operations)');
    // The last good read-file reads below the work folder only: cee's result is out of reach.
    const r = await byA('read-file', { file });
    expect(r.state).toBe('rejected');
    expect(r.error?.code).not.toBe('internal');
    expect(r.stdout ?? '').toBe('');
    await stillServes();
  });
});
