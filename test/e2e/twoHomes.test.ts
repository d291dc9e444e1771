// A spool has one home. A second home of the same person (a new user's second `init`, a copy of the
// settings) used to take over a spool another home served: it claimed that sandbox's requests and
// refused them (unknown_key: it knows none of its keys), and rewrote its catalog.json. Against the real
// command line and two real daemons: the second home is refused the spool at init, spools add and
// daemon, naming the home that serves it, never writes there, and the first goes on answering; an
// explicit hand-over (`spools adopt`, with the first home's daemon stopped) moves the spool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, TestHost, type DaemonProcess } from '../helpers/host';
import { allowlistYaml } from '../helpers/allowlists';
import { SPOOL_MARKER } from '../../main/core/spool/layout';
import type { KeyFile } from '../../shared/protocol/types';
import type { SpoolInfo } from '../../shared/ipc/views';

const OPS = allowlistYaml({ name: 'hello', command: ['echo', 'hello'] });

let h1: TestHost;
let h2: TestHost;
let key1: KeyFile;
let d1: DaemonProcess;
let ids = 0;

const settingsOf = (h: TestHost) => JSON.parse(readFileSync(path.join(h.home, 'settings.json'), 'utf8')) as { host_id: string; spools: { name: string; dir: string }[] };
const markerOf = (spool: string) => JSON.parse(readFileSync(path.join(spool, SPOOL_MARKER), 'utf8')) as { home_id?: string; home?: string };
/** What a home must never change in a spool it does not serve: each entry's inode and mtime. */
function hostFiles(spool: string): Record<string, string> {
  const names = ['catalog.json', ...readdirSync(path.join(spool, 'bin')).map((n) => `bin/${n}`)];
  return Object.fromEntries(names.map((n) => [n, `${statSync(path.join(spool, n)).ino}:${statSync(path.join(spool, n)).mtimeMs}`]));
}

/** A failure of the command line: one line on stderr naming `owner`'s home, no stack, a non-zero exit. */
function refusedNaming(r: { status: number | null; stderr: string }, owner: TestHost): void {
  expect(r.status, r.stderr).not.toBe(0);
  expect(r.stderr).toContain('served by another Dumbwaiter home');
  expect(r.stderr).toContain(owner.home);
  expect(r.stderr).not.toMatch(/^\s+at /m);
}

/** `dumbwaiter daemon` of `h` for the spool `spool` only, expected to refuse to start (bounded: a
 *  daemon that starts is killed at the timeout, and the test fails on its status). */
function daemonRefused(h: TestHost, spool: string): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'daemon', '--home', h.home, '--spool', spool], { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
  return { status: r.status, stderr: r.stderr };
}

async function answeredBy(host: TestHost, key: KeyFile, spool: string): Promise<void> {
  const id = `two-homes-${++ids}`;
  host.submit(key, id, 'hello', {}, {}, spool);
  const r = await host.waitResult(id, undefined, undefined, spool);
  expect(r.state, JSON.stringify(r.error)).toBe('succeeded');
}

beforeAll(async () => {
  h1 = new TestHost(OPS);
  h2 = new TestHost(OPS);
  // h1's spool as an earlier version made it: a marker that names no home.
  writeFileSync(path.join(h1.spool, SPOOL_MARKER), 'A Dumbwaiter spool: the host created this folder and owns what is in it.\n');
  key1 = h1.createKey('agent', 'read');
  d1 = await h1.startDaemon();
});

afterAll(async () => {
  await h2?.cleanup();
  await h1?.cleanup();
});

describe('a spool has one home', () => {
  it('a spool an earlier version made is taken by the first home that serves it (daemon or init), and that is said', async () => {
    expect(markerOf(h1.spool)).toMatchObject({ home_id: settingsOf(h1).host_id, home: h1.home });
    expect(d1.stderr).toContain('named no home (an earlier version made it): this home serves it from now on');
    await answeredBy(h1, key1, h1.spool);
    // And by init, which says so too.
    writeFileSync(path.join(h2.spool, SPOOL_MARKER), 'A Dumbwaiter spool: the host created this folder and owns what is in it.\n');
    const init = h2.cli(['init']);
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toContain('The spool named no home (an earlier version made it): this home serves it from now on');
    expect(markerOf(h2.spool)).toMatchObject({ home_id: settingsOf(h2).host_id, home: h2.home });
  });

  it('a second home is refused it at init, spools add and daemon, naming the home that serves it; it writes nothing there, and the first goes on answering', async () => {
    const before = hostFiles(h1.spool);
    refusedNaming(h2.cli(['init'], { spool: h1.spool }), h1);
    refusedNaming(h2.cli(['spools', 'add', 'other', h1.spool], { spool: null }), h1);
    expect(settingsOf(h2).spools.map((s) => s.name)).toEqual(['default']);

    // The spool in the second home's list all the same (settings.json edited by hand, or a copy of the first's).
    const s2 = settingsOf(h2);
    writeFileSync(path.join(h2.home, 'settings.json'), JSON.stringify({ ...s2, spools: [...s2.spools, { name: 'other', dir: h1.spool }] }));
    refusedNaming(daemonRefused(h2, 'other'), h1); // the only spool it would serve: no start
    const d2 = await h2.startDaemon({}, { spool: null }); // its own spool is served, the other is not
    expect(d2.stderr).toContain(`spool "other": spool ${h1.spool} is served by another Dumbwaiter home: ${h1.home}`);
    const shown = (JSON.parse(h2.cli(['status', '--json'], { spool: null }).stdout) as { spools: SpoolInfo[] }).spools;
    expect(shown.find((s) => s.name === 'other')?.problem).toContain(h1.home);
    expect(shown.find((s) => s.name === 'default')?.problem).toBeNull();
    await answeredBy(h2, h2.createKey('own', 'read'), h2.spool);

    // The first home answers its sandbox meanwhile, and the second took nothing of it.
    await answeredBy(h1, key1, h1.spool);
    await answeredBy(h1, key1, h1.spool);
    expect(existsSync(path.join(h1.spool, 'claimed', settingsOf(h2).host_id))).toBe(false);
    expect(hostFiles(h1.spool)).toEqual(before);
    expect(JSON.parse(readFileSync(path.join(h1.spool, 'host.json'), 'utf8'))).toMatchObject({ host_id: settingsOf(h1).host_id });
    expect(markerOf(h1.spool).home_id).toBe(settingsOf(h1).host_id);
    await d2.stop();
    expect(h2.cli(['spools', 'remove', 'other'], { spool: null }).status).toBe(0);
  });

  it('is handed over by spools adopt --from-home --yes, only while the first home\'s daemon is stopped; the first then refuses it', async () => {
    const adopt = (yes: boolean) => h2.cli(['spools', 'adopt', 'taken', h1.spool, '--from-home', h1.home, ...(yes ? ['--yes'] : [])], { spool: null });
    const unconfirmed = adopt(false);
    expect(unconfirmed.status).toBe(1);
    expect(unconfirmed.stderr).toContain('--yes');
    const whileRunning = adopt(true);
    expect(whileRunning.status).toBe(1);
    expect(whileRunning.stderr).toMatch(/the daemon of .* runs \(pid \d+/);
    expect(whileRunning.stderr).not.toMatch(/^\s+at /m);
    expect(markerOf(h1.spool).home_id).toBe(settingsOf(h1).host_id);
    await answeredBy(h1, key1, h1.spool);

    await d1.stop();
    const handed = adopt(true);
    expect(handed.status, handed.stderr).toBe(0);
    expect(markerOf(h1.spool)).toMatchObject({ home_id: settingsOf(h2).host_id, home: h2.home });

    const d2 = await h2.startDaemon({}, { spool: null });
    await answeredBy(h2, h2.createKey('new-agent', 'read', null, 'taken'), h1.spool);
    refusedNaming(daemonRefused(h1, h1.spool), h2);
    await d2.stop();
  });
});
