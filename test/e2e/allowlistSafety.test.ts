// One operation's problem is that operation's (issue 31): sandbox A, whose spool is `default`, can write
// the folder that holds an operation's path root; it replaces the root with a link to spool `bee`. The
// real daemon disables that operation alone, says why (status, the refusal, the audit log), leaves it
// out of the catalog, applies the person's later edits, serves everything else across a restart, and
// offers the operation again once its folder is safe.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { NO_OPERATIONS } from '../helpers/allowlists';
import { AS_USER } from '../helpers/processes';
import type { CatalogDoc, KeyFile, ResultDoc } from '../../shared/protocol/types';
import type { StatusReport } from '../../main/core/host/status';

/** The sandbox's own uid when the tests run as root (CI): nobody, without the powers to override file
 *  permissions; else the test's own user, which is an ordinary one already. */
const AS_SANDBOX = process.getuid?.() === 0 && AS_USER !== null ? [...AS_USER, 'setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];

let host: TestHost;
let daemon: DaemonProcess;
/** The folder sandbox A can write, the root below it that read-file reads, and spool bee's folder. */
let shared: string;
let data: string;
let bee: string;
let a: KeyFile;
let b: KeyFile;
let ids = 0;

const op = (name: string, extra = '') => `
  - name: ${name}
    command: [echo, ${name}]
    scope: read
    approval: never${extra}
`;
const allowlist = (more = '') => `version: 1
operations:${op('greet')}
  - name: read-file
    command: [cat, "{file}"]
    scope: read
    approval: never
    args:
      file: {type: path, within: [${JSON.stringify(data)}]}
${more}`;

const catalogOps = (dir: string) => (JSON.parse(readFileSync(path.join(dir, 'catalog.json'), 'utf8')) as CatalogDoc).operations.map((o) => o.name);
const status = () => JSON.parse(host.cli(['status', '--json']).stdout) as StatusReport;

async function ask(key: KeyFile, op: string, args: Record<string, unknown> = {}, spool = host.spool): Promise<ResultDoc> {
  const id = `s-${++ids}`;
  host.submit(key, id, op, args, {}, spool);
  return host.waitResult(id, undefined, undefined, spool);
}

/** What sandbox A does, as its own user: its folder's entry `data` becomes a link to spool bee. */
function plantLink(): void {
  const r = spawnSync(AS_SANDBOX[0] ?? 'sh', [...AS_SANDBOX.slice(1), ...(AS_SANDBOX.length ? ['sh'] : []), '-c', 'rm -r "$1" && ln -s "$2" "$1"', 'sh', data, bee], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

/** The read of a file below the root is refused as disabled, naming the link into spool bee; nothing ran. */
async function readRefused(key = a, spool = host.spool): Promise<void> {
  const r = await ask(key, 'read-file', { file: path.join(data, 'notes.txt') }, spool);
  expect(r.state).toBe('rejected');
  expect(r.error?.code).toBe('unknown_op');
  expect(r.error?.message).toMatch(/^operation "read-file" is disabled until the host's person makes its folders safe again: .*leads to .*which (contains|lies inside) the spool "bee"/s);
  expect(r.stdout ?? '').toBe('');
}

beforeAll(async () => {
  host = new TestHost(NO_OPERATIONS, { rescan_interval_ms: 50 });
  shared = path.join(realpathSync(host.root), 'shared');
  data = path.join(shared, 'data');
  mkdirSync(data, { recursive: true });
  writeFileSync(path.join(data, 'notes.txt'), 'project notes\n');
  if (AS_SANDBOX.length) {
    // The sandbox's user owns its folder, and may pass through the test's folders to reach it.
    for (const d of [path.dirname(host.root), host.root]) chmodSync(d, statSync(d).mode | 0o001);
    for (const d of [shared, data, path.join(data, 'notes.txt')]) chownSync(d, 65534, 65534);
  }
  bee = realpathSync(host.addSpool('bee'));
  a = host.createKey('a', 'read', null, 'default');
  b = host.createKey('b', 'read', null, 'bee');
  host.writeAllowlist(allowlist());
  daemon = await host.startDaemon({}, { spool: null });
});

afterAll(async () => {
  await host.cleanup();
});

describe("a link planted under an operation's root", () => {
  it('disables that operation alone at once: refused with the reason, out of the catalog, status says it; the rest serves', async () => {
    expect((await ask(a, 'read-file', { file: path.join(data, 'notes.txt') })).stdout).toBe('project notes\n');
    plantLink();
    await readRefused();
    await eventually('read-file out of the catalog', () => (catalogOps(host.spool).includes('read-file') ? undefined : true));
    expect(catalogOps(host.spool)).toEqual(['greet']);
    const st = status();
    expect(st.allowlist).toMatchObject({ ok: true, operations: ['greet'], error: null });
    expect(st.allowlist.disabled).toEqual([{ name: 'read-file', reason: expect.stringMatching(/^line 13: operations\[1\]\.args\.file\.within: .*data leads to .*which (contains|lies inside) the spool "bee"/s) }]);
    expect((await ask(a, 'greet')).stdout).toBe('greet\n');
    expect((await ask(b, 'greet', {}, bee)).stdout).toBe('greet\n');
  });

  it("applies the person's later edit", async () => {
    host.writeAllowlist(allowlist(op('wave')));
    await eventually('wave in the catalog', () => (catalogOps(host.spool).includes('wave') ? true : undefined));
    expect(catalogOps(host.spool)).toEqual(['greet', 'wave']);
    await eventually("wave in bee's catalog", () => (catalogOps(bee).includes('wave') ? true : undefined));
    expect(catalogOps(bee)).toEqual(['greet', 'wave']);
    expect((await ask(a, 'wave')).stdout).toBe('wave\n');
    await readRefused();
    const loaded = host.audit('', 'allowlist_loaded').find((e) => e.message.includes('1 disabled (read-file)'));
    expect(loaded?.message).toContain('read-file is disabled: line 13');
  });

  it('after a restart: every other operation serves, bee\'s included, and read-file is still refused with its reason', async () => {
    await daemon.stop();
    daemon = await host.startDaemon({}, { spool: null });
    expect(daemon.stderr).not.toContain('using the last good allowlist');
    expect((await ask(b, 'greet', {}, bee)).stdout).toBe('greet\n');
    expect((await ask(a, 'wave')).stdout).toBe('wave\n');
    await readRefused();
    await readRefused(b, bee);
    expect(catalogOps(bee)).toEqual(['greet', 'wave']);
    expect(status().allowlist.disabled.map((d) => d.name)).toEqual(['read-file']);
    expect(host.cli(['status']).stdout).toMatch(/DISABLED read-file: line 13: .*(contains|lies inside) the spool "bee"/);
  });

  it('offers it again once the folder is safe, without an edit', async () => {
    rmSync(data); // the link
    mkdirSync(data);
    writeFileSync(path.join(data, 'notes.txt'), 'project notes\n');
    await eventually('read-file back in the catalog', () => (catalogOps(host.spool).includes('read-file') ? true : undefined));
    expect((await ask(a, 'read-file', { file: path.join(data, 'notes.txt') })).stdout).toBe('project notes\n');
    expect(status().allowlist.disabled).toEqual([]);
  });

  it("spools add refuses a folder that a link puts inside an operation's root, naming the operation it would disable", () => {
    const viaLink = path.join(path.dirname(shared), 'data-link');
    symlinkSync(data, viaLink);
    const added = host.cli(['spools', 'add', 'cee', path.join(viaLink, 'cee')], { spool: null });
    expect(added.status).toBe(1);
    expect(added.stderr).toContain(`spool cee at ${path.join(viaLink, 'cee')} would be within reach of the allowlist's operation "read-file" through a link, which would then be disabled`);
    expect(added.stderr).toMatch(/line 13: operations\[1\]\.args\.file\.within: .*data leads to .*data, which contains the spool "cee"/);
    expect(existsSync(path.join(data, 'cee'))).toBe(false);
  });
});
