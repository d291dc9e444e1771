// What the sandbox plants where the host reads inside the spool (host.json, catalog.json,
// results/<id>.log) or writes (results/<id>.json, inbox/): FIFOs, symlinks to FIFOs and to host files,
// folders, huge files. A FIFO at host.json used to freeze `dumbwaiter status` and the app's main
// process (the daemon inside it too). Now every reader answers at once and says what is wrong, and the
// real daemon keeps serving. Calls the app makes in its own process (the service, the IPC handlers)
// run in a child here, killed after a while: a read that blocked would hang it, not this test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { PLAIN_ECHO, allowlistYaml } from '../helpers/allowlists';
import { AS_USER, NO_UNPRIVILEGED_USER, outputOf, projectFile, spawnTsx } from '../helpers/processes';
import { CATALOG_JSON_MAX_BYTES } from '../../main/core/spool/hostFiles';
import { MAX_HOST_JSON_BYTES } from '../../shared/protocol/types';
import { LIVE_LOG_CHUNK } from '../../main/core/spool/liveLog';
import type { KeyFile } from '../../shared/protocol/types';

const ALLOWLIST = allowlistYaml(PLAIN_ECHO);

const HUGE = 10 * 1024 ** 3; // sparse: takes no room on disk

let host: TestHost;
let key: KeyFile;
/** Outside the spool: the FIFO and the host file that planted symlinks point to. */
let outside: string;
let outsideFifo: string;
let hostFile: string;
const HOST_FILE_TEXT = 'the host user\'s own file\n';

function mkfifo(p: string): void {
  const r = spawnSync('mkfifo', [p]);
  if (r.status !== 0) throw new Error(`mkfifo ${p}: ${r.stderr}`);
}

/** What the sandbox can put at a name, and the reason a reader gives for it (null: not read at all). */
const PLANTS = {
  'a FIFO': { make: (p: string) => mkfifo(p), reason: 'is a FIFO' },
  'a symlink to a FIFO': { make: (p: string) => symlinkSync(outsideFifo, p), reason: 'is a symbolic link' },
  'a symlink to a host file': { make: (p: string) => symlinkSync(hostFile, p), reason: 'is a symbolic link' },
  'a folder': { make: (p: string) => mkdirSync(p), reason: 'is a folder' },
  'a huge file': {
    make: (p: string) => {
      writeFileSync(p, '');
      truncateSync(p, HUGE);
    },
    reason: null,
  },
} as const;
type Plant = keyof typeof PLANTS;
const KINDS = Object.keys(PLANTS) as Plant[];

function plant(p: string, kind: Plant): void {
  // A running daemon may write its own file there between the removal and the plant: plant again.
  for (let attempt = 0; ; attempt++) {
    rmSync(p, { recursive: true, force: true });
    try {
      return PLANTS[kind].make(p);
    } catch (e) {
      if (attempt >= 5 || !lstatSync(p, { throwIfNoEntry: false })) throw e;
    }
  }
}

const spoolFile = (...parts: string[]) => path.join(host.spool, ...parts);

/** The real command line, killed if it does not answer: a hang fails the test instead of stalling it. */
function status(json = false): { text: string; report: Record<string, unknown> | null } {
  const r = spawnSync(process.execPath, [CLI, 'status', ...(json ? ['--json'] : []), '--home', host.home, '--spool', host.spool], { encoding: 'utf8', timeout: 20_000 });
  if (r.signal) throw new Error(`dumbwaiter status did not answer (killed by ${r.signal})`);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return { text: r.stdout, report: json ? (JSON.parse(r.stdout) as Record<string, unknown>) : null };
}

/** Runs `body` (an async function body that sees `svc` and `handlers`, the app's own objects) in a
 *  child process on this home and spool, and returns what it returns. */
async function inAppProcess(body: string): Promise<unknown> {
  const child = spawnTsx(`
    import { Host } from ${JSON.stringify(projectFile('main/core/host/host.ts'))};
    import { createIpcHandlers } from ${JSON.stringify(projectFile('main/core/ipc/handlers.ts'))};
    const svc = new Host(${JSON.stringify(host.home)}, ${JSON.stringify(host.spool)});
    const handlers = createIpcHandlers(svc);
    const out = await (async () => { ${body} })();
    svc.close();
    process.stdout.write(JSON.stringify(out ?? null));
  `);
  child.stdin!.end();
  const done = outputOf(child);
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const r = await done.finally(() => clearTimeout(killer));
  if (r.signal) throw new Error(`the app's process did not answer (killed by ${r.signal}): a read blocked`);
  if (r.code !== 0) throw new Error(`the app's process failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Waits until the daemon has put its own file where something else was planted: a regular file of a
 *  sane size (reading before would block this test on a FIFO, or read gigabytes). */
function replacedByHostFile(p: string) {
  return eventually(`${p} to be the host's file again`, () => {
    const st = lstatSync(p, { throwIfNoEntry: false });
    return st?.isFile() && st.size < MAX_HOST_JSON_BYTES ? true : undefined;
  });
}

beforeAll(() => {
  host = new TestHost(ALLOWLIST);
  key = host.createKey('sandbox', 'read');
  // A request whose log the sandbox replaces with what it likes (the live output reads its spool's log).
  host.ledger((l) => l.plant({ id: 'planted-log', spool: 'default', key_id: key.key_id, op: 'echo', args_json: '{}', binding_hash: 'h', mac: 'm', intent: null, created_at: new Date().toISOString(), expires_at: null, state: 'running', plan: null }));
  outside = mkdtempSync(path.join(os.tmpdir(), 'dw-spoolreads-outside-'));
  outsideFifo = path.join(outside, 'fifo');
  mkfifo(outsideFifo);
  hostFile = path.join(outside, 'secret.txt');
  writeFileSync(hostFile, HOST_FILE_TEXT);
});

afterAll(async () => {
  await host?.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

describe('with no daemon running (what status and the app read)', () => {
  it.each(KINDS)('dumbwaiter status answers when host.json is %s, and says what is wrong', (kind) => {
    plant(spoolFile('host.json'), kind);
    const reason = PLANTS[kind].reason ?? `is ${HUGE} bytes, over the limit of ${MAX_HOST_JSON_BYTES}`;
    expect(status().text).toContain(`last heartbeat unknown: host.json ${reason}\n`);
    expect(status(true).report).toMatchObject({ daemon: { running: false, heartbeat_at: null, heartbeat_problem: `host.json ${reason}` } });
  });

  it('dumbwaiter status says a forged host.json holds no heartbeat', () => {
    rmSync(spoolFile('host.json'), { recursive: true, force: true });
    writeFileSync(spoolFile('host.json'), '{"heartbeat_at": {"not": "a time"}}');
    expect(status().text).toContain('last heartbeat unknown: host.json holds no valid heartbeat_at');
  });

  it.each(KINDS)('the key form\'s catalog (service.catalog and the catalog.get handler) is null at once when catalog.json is %s', async (kind) => {
    plant(spoolFile('catalog.json'), kind);
    plant(spoolFile('host.json'), 'a FIFO');
    const [catalog, viaIpc, statusView] = (await inAppProcess(`
      return [svc.spools.catalog(), await handlers['catalog.get'](undefined), await handlers['status.get'](undefined)];
    `)) as [unknown, unknown, { daemon: { running: boolean }; allowlist: { operations: string[] } }];
    expect(catalog).toBeNull();
    expect(viaIpc).toBeNull();
    expect(statusView).toMatchObject({ daemon: { running: false }, allowlist: { operations: ['echo'] } });
  });

  it('a catalog.json of the wrong shape is none, and a huge one is refused by its size', async () => {
    expect(CATALOG_JSON_MAX_BYTES).toBeLessThan(HUGE);
    rmSync(spoolFile('catalog.json'), { recursive: true, force: true });
    writeFileSync(spoolFile('catalog.json'), JSON.stringify({ v: 1, updated_at: 'x', operations: [{ name: 'echo', description: { html: '<b>' } }] }));
    expect(await inAppProcess(`return svc.spools.catalog();`)).toBeNull();
  });

  it.each(KINDS.filter((k) => k !== 'a huge file'))('live output answers, empty, when results/<id>.log is %s', async (kind) => {
    const log = spoolFile('results', 'planted-log.log');
    plant(log, kind);
    expect(await inAppProcess(`return svc.requests.liveOutput('planted-log', 0);`)).toEqual({ text: '', next: 0, skipped: 0 });
    rmSync(log, { recursive: true, force: true });
  });

  it('live output of a huge results/<id>.log is its last chunk only', async () => {
    const log = spoolFile('results', 'planted-log.log');
    plant(log, 'a huge file');
    const live = (await inAppProcess(`return svc.requests.liveOutput('planted-log', 0);`)) as { text: string; next: number; skipped: number };
    expect({ length: live.text.length, next: live.next, skipped: live.skipped }).toEqual({ length: LIVE_LOG_CHUNK, next: HUGE, skipped: HUGE - LIVE_LOG_CHUNK });
    rmSync(log, { recursive: true, force: true });
  });

  it('dumbwaiter status shows an unsafe spool found by its own check', () => {
    rmSync(spoolFile('host.json'), { recursive: true, force: true });
    chmodSync(spoolFile('queue'), 0o777);
    try {
      const { text } = status();
      expect(text).toMatch(/^ *SPOOL PROBLEM: unsafe spool: .*queue can be written by other users/m);
      expect(status(true).report!.spool_problem).toMatch(/can be written by other users/);
    } finally {
      chmodSync(spoolFile('queue'), 0o700);
    }
    expect(status(true).report!.spool_problem).toBeNull();
    expect(status().text).not.toContain('SPOOL PROBLEM');
  });

  it('dumbwaiter status counts requests in every state, denied and cancelled included', () => {
    const line = status().text.split('\n').find((l) => l.startsWith('Requests:'))!;
    for (const state of ['queued', 'awaiting_approval', 'running', 'succeeded', 'failed', 'rejected', 'denied', 'expired', 'cancelled', 'uncertain']) {
      expect(line).toContain(`${state} `);
    }
  });
});

describe('with the daemon running', () => {
  let daemon: DaemonProcess;
  beforeAll(async () => {
    for (const f of ['host.json', 'catalog.json']) rmSync(spoolFile(f), { recursive: true, force: true });
    daemon = await host.startDaemon();
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('keeps serving with a FIFO at host.json and a symlink to a FIFO at catalog.json, and puts its own host.json back', async () => {
    plant(spoolFile('host.json'), 'a FIFO');
    plant(spoolFile('catalog.json'), 'a symlink to a FIFO');
    expect(status().text).toMatch(/^Daemon: {4}running/);
    expect(await inAppProcess(`return svc.spools.catalog();`)).toBeNull();
    expect((await host.sentinel(key)).state).toBe('succeeded');
    await replacedByHostFile(spoolFile('host.json'));
    expect(status(true).report).toMatchObject({ daemon: { running: true, heartbeat_problem: null } });
  });

  it.each(KINDS)('answers a request whose results/<id>.json was %s before it came, leaving the host file alone', async (kind) => {
    const id = `planted-result-${KINDS.indexOf(kind)}`;
    plant(spoolFile('results', `${id}.json`), kind);
    host.submit(key, id, 'echo', { msg: 'hello' });
    await replacedByHostFile(spoolFile('results', `${id}.json`));
    expect(await host.waitResult(id)).toMatchObject({ state: 'succeeded', stdout: 'hello\n' });
    expect(readFileSync(hostFile, 'utf8')).toBe(HOST_FILE_TEXT);
    expect(lstatSync(outsideFifo).isFIFO()).toBe(true);
  });

  it.each(KINDS)('runs a request whose results/<id>.log was %s, and live output reads its own log', async (kind) => {
    const id = `planted-log-${KINDS.indexOf(kind)}`;
    plant(spoolFile('results', `${id}.log`), kind);
    host.submit(key, id, 'echo', { msg: 'logged' });
    await replacedByHostFile(spoolFile('results', `${id}.json`));
    expect(await host.waitResult(id)).toMatchObject({ state: 'succeeded', stdout: 'logged\n' });
    const live = (await inAppProcess(`return svc.requests.liveOutput(${JSON.stringify(id)}, 0);`)) as { text: string };
    // The run's log took the place of what was planted (moved to quarantine), a folder too.
    expect(live.text).toBe('logged\n');
    expect(readFileSync(hostFile, 'utf8')).toBe(HOST_FILE_TEXT);
  });

  it('writes to the inbox past FIFOs, links and folders planted there', async () => {
    const inbox = spoolFile('inbox');
    plant(path.join(inbox, '20260101T000000000Z-00000000.json'), 'a FIFO');
    plant(path.join(inbox, '20260101T000000000Z-00000001.json'), 'a symlink to a FIFO');
    plant(path.join(inbox, '20260101T000000000Z-00000002.json'), 'a folder');
    const [msg] = (await inAppProcess(`return svc.inbox.send('hello sandbox', 'test');`)) as { id: string }[];
    const file = path.join(inbox, `${msg!.id}.json`);
    expect(lstatSync(file).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ kind: 'notice', text: 'hello sandbox' });
    expect(readdirSync(inbox)).toHaveLength(4);
    expect(status().text).toMatch(/^Daemon: {4}running/);
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('is alive and answers a valid request after all of it', async () => {
    expect(daemon.proc.exitCode).toBeNull();
    host.submit(key, 'after-all', 'echo', { msg: 'still here' });
    expect(await host.waitResult('after-all')).toMatchObject({ state: 'succeeded', stdout: 'still here\n' });
  });
});

// The daemon (as an ordinary user, who cannot read a folder of mode 000) stops touching the spool and
// records why in the ledger; status and the app show it while it lasts (issue 12, item 2).
describe.skipIf(AS_USER === null)('a spool the daemon stopped touching', () => {
  it('dumbwaiter status shows the problem the daemon recorded, and not once it is fixed', async () => {
    const daemon = await host.startDaemon({}, { asUser: true });
    try {
      chmodSync(spoolFile('queue'), 0o000);
      let shown: Record<string, unknown>;
      try {
        shown = await eventually('the daemon to record the spool problem', () => {
          const r = status(true).report!;
          return r.spool_problem ? r : undefined;
        });
        expect(shown.spool_problem).toMatch(/queue/);
        expect(status().text).toMatch(/^ *SPOOL PROBLEM: .*queue/m);
        expect(await inAppProcess(`return (await handlers['status.get'](undefined)).spool_problem;`)).toBe(shown.spool_problem);
      } finally {
        chmodSync(spoolFile('queue'), 0o700);
      }
      await eventually('the problem to clear', () => (status(true).report!.spool_problem === null ? true : undefined));
      expect((await host.sentinel(key)).state).toBe('succeeded');
      expect(daemon.proc.exitCode).toBeNull();
    } finally {
      await daemon.stop();
    }
  });
});

if (AS_USER === null) console.warn(`spoolReads: the stopped-spool case is skipped: ${NO_UNPRIVILEGED_USER}`);
