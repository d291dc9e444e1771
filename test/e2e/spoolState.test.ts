// Whatever state the sandbox leaves the spool in, the daemon neither dies nor refuses to start: it
// stops touching the spool, says why (log, audit log once, the ledger's flag that `status` and the app
// show), and resumes once the spool is fixed. And swapping folders under it does not leak its fds.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { allowlistYaml, echoOp } from '../helpers/allowlists';
import { AS_USER, NO_UNPRIVILEGED_USER } from '../helpers/processes';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let daemon: DaemonProcess;
let hostId: string;
let ids = 0;

const ALLOWLIST = allowlistYaml(echoOp());

beforeEach(() => {
  host = new TestHost(ALLOWLIST, { rescan_interval_ms: 50 });
  key = host.createKey('state', 'read');
  hostId = (JSON.parse(readFileSync(path.join(host.home, 'settings.json'), 'utf8')) as { host_id: string }).host_id;
});

afterEach(async () => {
  // Modes put back, so that the folders can be removed.
  for (const dir of [host.spool, ...readdirSync(host.spool).map((n) => path.join(host.spool, n))]) {
    try {
      chmodSync(dir, 0o700);
    } catch {
      /* a file, or gone */
    }
  }
  await host.cleanup();
});

const spoolProblem = () => host.service((s) => s.core.flags.spoolProblem('default'));
const unsafeEntries = () => host.audit('', 'spool_unsafe');

/** A valid request, answered: the daemon is alive and serves the spool. */
async function answered(): Promise<void> {
  const id = `ok-${++ids}`;
  host.submit(key, id, 'echo', { msg: id });
  expect((await host.waitResult(id)).stdout).toBe(`${id}\n`);
}

/** Waits until the daemon has said (once) that the spool may not be touched, for a reason naming `what`. */
async function problemSaid(what: string): Promise<string> {
  const problem = await eventually('the spool problem in the ledger', () => spoolProblem() ?? undefined);
  expect(problem).toContain(what);
  await eventually('the spool problem in the audit log', () => (unsafeEntries().some((a) => a.message.includes(what)) ? true : undefined));
  return problem;
}

describe.skipIf(AS_USER === null)(`folders the daemon may not read (as an ordinary user; ${NO_UNPRIVILEGED_USER} otherwise)`, () => {
  const cases: [string, () => string][] = [
    ['queue/', () => path.join(host.spool, 'queue')],
    ['claimed/<host_id>/', () => path.join(host.spool, 'claimed', hostId)],
    ['the spool itself', () => host.spool],
  ];

  it.each(cases)('%s made mode 000 while it runs: alive, says why, starts again while broken, resumes once fixed', async (_what, dirOf) => {
    daemon = await host.startDaemon({}, { asUser: true });
    await answered();
    const dir = dirOf();
    chmodSync(dir, 0o000);
    host.submit(key, 'held-1', 'echo', { msg: 'held' }); // written while it cannot be read
    const problem = await problemSaid(dir);
    expect(problem).toMatch(/chmod 700/);
    expect(daemon.proc.exitCode).toBeNull();

    // Restarted while broken: it starts, and says the problem no second time (the ledger has it).
    await daemon.stop();
    daemon = await host.startDaemon({}, { asUser: true });
    expect(spoolProblem()).toBe(problem);

    chmodSync(dir, 0o700);
    expect((await host.waitResult('held-1')).stdout).toBe('held\n');
    await answered();
    expect(spoolProblem()).toBeNull();
    expect(host.audit('', 'spool_ok')).toHaveLength(1);
    expect(unsafeEntries()).toHaveLength(1);
    expect(daemon.proc.exitCode).toBeNull();
  });

  it('starts with queue/ already mode 000, and serves it once fixed', async () => {
    const queue = path.join(host.spool, 'queue');
    chmodSync(queue, 0o000);
    daemon = await host.startDaemon({}, { asUser: true });
    await problemSaid(queue);
    chmodSync(queue, 0o700);
    await answered();
  });
});

describe('folders the sandbox swapped or removed', () => {
  it('tmp/ swapped for a link to a user folder before the start: the daemon starts, deletes nothing there, and resumes once it is put back', async () => {
    const victim = path.join(host.root, 'victim');
    mkdirSync(victim);
    const old = path.join(victim, 'old-notes.txt');
    writeFileSync(old, 'years old');
    const longAgo = new Date(Date.now() - 30 * 86_400_000);
    utimesSync(old, longAgo, longAgo);
    const tmp = path.join(host.spool, 'tmp');
    renameSync(tmp, `${tmp}-old`);
    symlinkSync(victim, tmp);
    daemon = await host.startDaemon();
    expect(await problemSaid(tmp)).toContain('symbolic link');
    expect(readdirSync(victim)).toEqual(['old-notes.txt']);
    rmSync(tmp);
    renameSync(`${tmp}-old`, tmp);
    await answered();
    expect(readdirSync(victim)).toEqual(['old-notes.txt']);
  });

  it('queue/ deleted while it runs: says the spool is incomplete, and resumes once it is back', async () => {
    daemon = await host.startDaemon();
    const queue = path.join(host.spool, 'queue');
    rmSync(queue, { recursive: true });
    expect(await problemSaid(queue)).toContain('missing');
    mkdirSync(queue, { mode: 0o700 });
    await answered();
  });
});

describe.skipIf(process.platform !== 'linux')('folders swapped again and again', () => {
  it('tmp/ and claimed/<host_id>/ swapped for fresh folders 300 times: its open fds stay bounded', async () => {
    daemon = await host.startDaemon();
    await answered();
    const fdDir = `/proc/${daemon.proc.pid}/fd`;
    const fds = () => readdirSync(fdDir);
    /** Whether the daemon holds an fd on this very folder (it pinned it), and has said so: another of
     *  its fds on the folder (a listing) is not yet the repin. */
    const pinned = (ino: number, swaps: number) =>
      host.audit('', 'spool_replaced').length >= swaps &&
      fds().some((fd) => {
        try {
          return statSync(path.join(fdDir, fd)).ino === ino;
        } catch {
          return false; // closed meanwhile
        }
      });
    const before = fds().length;
    for (let i = 0; i < 300; i++) {
      const dir = i % 2 === 0 ? path.join(host.spool, 'tmp') : path.join(host.spool, 'claimed', hostId);
      // A fresh folder renamed over the old (empty) one: the name is never missing, not even for a moment.
      mkdirSync(`${dir}.next`, { mode: 0o700 });
      renameSync(`${dir}.next`, dir);
      const ino = statSync(dir).ino;
      await eventually(`the daemon to pin the new ${dir} (swap ${i + 1})`, () => (pinned(ino, i + 1) ? true : undefined));
    }
    // Each swap used to leave about 9 fds open (the old pins); now each repin closes them.
    expect(fds().length).toBeLessThanOrEqual(before + 5);
    await answered();
    expect(daemon.proc.exitCode).toBeNull();
  });
});
