// One home, several spools (one folder per sandbox), against the real daemon and command line: each
// key works through its own spool only, an operation limited to one spool is no operation to the
// others, a spool made unsafe waits for its fix while the others are served, all of it across a clean
// stop and a SIGKILL, spools added and removed while the daemon runs, and the mount probe for real.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, markOp, type OpSpec } from '../helpers/allowlists';
import { AS_USER, NO_UNPRIVILEGED_USER } from '../helpers/processes';
import type { CatalogDoc, HostStatusDoc, KeyFile, ResultDoc } from '../../shared/protocol/types';
import type { ProbeReport } from '../../shared/protocol/probe';
import type { SpoolInfo } from '../../shared/ipc/views';

let host: TestHost;
/** The folder of spool `work` (spool `default` is host.spool). */
let work: string;
/** Key A works through spool default, key B through spool work. */
let a: KeyFile;
let b: KeyFile;
let daemon: DaemonProcess;
/** Every run of `mark` appends its request id here: what ran, and what did not. */
let runs: string;
/** Folders made outside the test's root (on tmpfs), removed after it. */
const extraDirs: string[] = [];
let ids = 0;

/** Operations for every spool; `work_only` (for spool work only) is added once that spool exists. */
function allowlist(withWorkOnly: boolean): string {
  const workOnly: OpSpec[] = withWorkOnly ? [{ name: 'work_only', command: ['echo', 'work only'], spools: ['work'] }] : [];
  return allowlistYaml(markOp(runs), { name: 'held', command: ['echo', 'held'], approval: 'always' }, ...workOnly);
}

beforeEach(() => {
  host = new TestHost(NO_OPERATIONS, { rescan_interval_ms: 50 });
  runs = path.join(host.root, 'runs.txt');
  host.writeAllowlist(allowlist(false));
  work = host.addSpool('work');
  host.writeAllowlist(allowlist(true)); // names spool work: loadable only once it is a spool of the home
  a = host.createKeyWithCli('a', 'default');
  b = host.createKeyWithCli('b', 'work');
});

afterEach(async () => {
  for (const dir of [host.spool, work]) {
    try {
      chmodSync(dir, 0o700); // put back, so that the folders can be removed
    } catch {
      /* a link, or gone */
    }
  }
  await host.cleanup();
  for (const dir of extraDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const ran = (id: string) => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').includes(id) : false);
const startAll = (opts: { asUser?: boolean } = {}) => host.startDaemon({}, { ...opts, spool: null });
const spoolsJson = () => JSON.parse(host.cli(['spools', 'list', '--json'], { spool: null }).stdout) as SpoolInfo[];
const statusSpools = () => (JSON.parse(host.cli(['status', '--json'], { spool: null }).stdout) as { spools: SpoolInfo[] }).spools;
const problemOf = (name: string) => host.service((s) => s.core.flags.spoolProblem(name));

/** A run of `mark` by `key` through the spool at `dir`, answered: it ran (by its handle in that spool). */
async function answered(key: KeyFile, dir: string): Promise<ResultDoc> {
  const id = `ok-${++ids}`;
  host.submit(key, id, 'mark', {}, {}, dir);
  const r = await host.waitResult(id, undefined, undefined, dir);
  expect(r.state, JSON.stringify(r.error)).toBe('succeeded');
  expect(ran(host.handleOf(id, dir))).toBe(true);
  return r;
}

/** A request of `key` through the spool at `dir`, which `key` does not belong to: `unknown_key` there,
 *  in words that name no other spool, and nothing ran. */
async function unknownKeyThrough(key: KeyFile, dir: string): Promise<ResultDoc> {
  const id = `foreign-${++ids}`;
  host.submit(key, id, 'mark', {}, {}, dir);
  const r = await host.waitResult(id, undefined, undefined, dir);
  expect(r.state).toBe('rejected');
  expect(r.error?.code).toBe('unknown_key');
  const text = JSON.stringify(r);
  for (const other of ['default', 'work', host.spool, work]) expect(text).not.toContain(other);
  expect(ran(host.handleOf(id, dir))).toBe(false);
  return r;
}

describe('two spools, two keys', () => {
  it('each key works through its own spool only: through the other it is unknown_key there, and the audit entry names both spools', async () => {
    daemon = await startAll();
    await answered(a, host.spool);
    await answered(b, work);

    const r = await unknownKeyThrough(a, work);
    expect(host.result(r.id)).toBeUndefined(); // nothing in default/results either
    await unknownKeyThrough(b, host.spool);

    const entry = host.service((s) => s.audit.search({ text: r.id, kind: 'rejected', limit: 10 }))[0]!;
    expect(entry.spool).toBe('work');
    expect(entry.key_id).toBe(a.key_id);
    expect(entry.message).toContain(`key ${a.key_id} belongs to spool "default"; the request came through spool "work"`);
    // The ledger: each key is its spool's, each answered request is the spool's it came through.
    const keys = JSON.parse(host.cli(['keys', 'list', '--json'], { spool: 'work' }).stdout) as { key_id: string; spool: string }[];
    expect(keys.map((k) => [k.key_id, k.spool])).toEqual([[b.key_id, 'work']]);
    expect(host.service((s) => s.requests.get('ok-1')?.spool)).toBe('default');
    expect(host.service((s) => s.requests.get('ok-2@work')?.spool)).toBe('work');
  });

  it('an operation with spools: [work] is only in work/catalog.json, and unknown_op through default; one with no spools: is in both', async () => {
    daemon = await startAll();
    const catalog = (dir: string) => eventually(`${dir}/catalog.json`, () => {
      try {
        return (JSON.parse(readFileSync(path.join(dir, 'catalog.json'), 'utf8')) as CatalogDoc).operations.map((o) => o.name);
      } catch {
        return undefined;
      }
    });
    const inDefault = await catalog(host.spool);
    const inWork = await catalog(work);
    expect(inDefault).toContain('mark');
    expect(inDefault).not.toContain('work_only');
    expect(inWork).toEqual(expect.arrayContaining(['mark', 'work_only']));
    // Its guide is made from the same catalog.
    expect(readFileSync(path.join(host.spool, 'bin', 'AGENTS.md'), 'utf8')).not.toContain('work_only');

    host.submit(a, 'wo-default', 'work_only');
    const refused = await host.waitResult('wo-default');
    expect(refused.state).toBe('rejected');
    expect(refused.error?.code).toBe('unknown_op');
    // In the words a name never written gets: nothing says that another spool has it.
    expect(refused.error?.message).toBe('no operation "work_only" in this host\'s allowlist');
    host.submit(b, 'wo-work', 'work_only', {}, {}, work);
    expect((await host.waitResult('wo-work', undefined, undefined, work)).stdout).toBe('work only\n');
  });
});

describe('one spool made unsafe', () => {
  type Attack = () => { says: RegExp; fix: () => void };
  const mode = (m: number, says: RegExp): Attack => () => {
    chmodSync(host.spool, m);
    return { says, fix: () => chmodSync(host.spool, 0o700) };
  };
  const link: Attack = () => {
    const real = `${host.spool}-real`;
    renameSync(host.spool, real);
    symlinkSync(real, host.spool);
    return {
      says: /symbolic link/,
      fix: () => {
        rmSync(host.spool);
        renameSync(real, host.spool);
      },
    };
  };

  /** `default` made unsafe while the daemon runs: it says so (ledger, status, audit), serves work
   *  meanwhile, and serves default again once fixed. */
  async function unsafeWhileRunning(attack: Attack, asUser = false): Promise<void> {
    daemon = await startAll({ asUser });
    await answered(a, host.spool);
    const { says, fix } = attack();
    const problem = await eventually('the problem of spool default', () => problemOf('default') ?? undefined);
    expect(problem).toMatch(says);
    await eventually('a spool_unsafe entry of spool default', () =>
      host.service((s) => s.audit.search({ text: '', kind: 'spool_unsafe', limit: 10 })).some((e) => e.spool === 'default') ? true : undefined,
    );
    const shown = statusSpools();
    expect(shown.find((s) => s.name === 'default')?.problem).toBe(problem);
    expect(shown.find((s) => s.name === 'work')?.problem).toBeNull();

    await answered(b, work); // the other spool is served meanwhile
    expect(daemon.proc.exitCode).toBeNull();

    fix();
    await answered(a, host.spool);
    await eventually('spool default fine again', () => (problemOf('default') === null ? true : undefined));
    expect(problemOf('work')).toBeNull();
    await answered(b, work);
  }

  it('default made mode 0777 while it runs: said, work served meanwhile, default served again once fixed', () => unsafeWhileRunning(mode(0o777, /777|others/)));

  it('default replaced by a symbolic link to a real spool folder while it runs: said, work served meanwhile, default served again once put back', () => unsafeWhileRunning(link));

  it('a probe that found a spool unusable while it was unsafe is not shown once the daemon serves it again: status says it is fine', async () => {
    daemon = await startAll();
    await answered(b, work);
    chmodSync(work, 0o777);
    await eventually('the problem of spool work', () => problemOf('work') ?? undefined);
    expect(host.cli(['spools', 'check', 'work'], { spool: null }).status).toBe(1); // probed now: unusable
    expect(statusSpools().find((s) => s.name === 'work')?.probe?.verdict).toBe('unusable');

    chmodSync(work, 0o700);
    await answered(b, work);
    await eventually('spool work fine again', () => (problemOf('work') === null ? true : undefined));
    const shown = statusSpools().find((s) => s.name === 'work')!;
    expect(shown.problem).toBeNull();
    expect(shown.probe?.verdict).not.toBe('unusable');
    const text = host.cli(['status'], { spool: null });
    expect(text.stdout).not.toMatch(/unusable|PROBLEM/);
    expect(spoolsJson().find((s) => s.name === 'work')?.probe?.verdict).not.toBe('unusable');
    // The sandbox's view too: host.json's probe is made again once the spool is served.
    const hostProbe = () => (JSON.parse(readFileSync(path.join(work, 'host.json'), 'utf8')) as HostStatusDoc).probe?.verdict;
    expect(await eventually('a fresh probe in host.json', () => (hostProbe() !== 'unusable' ? hostProbe() : undefined))).toBe('ok');
  });

  it.skipIf(AS_USER === null)(`default made mode 000 while a daemon runs as an ordinary user: said, work served meanwhile (${NO_UNPRIVILEGED_USER} otherwise)`, () =>
    unsafeWhileRunning(mode(0o000, /chmod 700/), true),
  );
});

describe('restarts', () => {
  /** After a start: both spools served, each key through its own only, and work's request written
   *  while the daemon was down answered. */
  async function servesBoth(queuedWhileDown: string): Promise<void> {
    const r = await host.waitResult(queuedWhileDown, undefined, undefined, work);
    expect(r.state).toBe('succeeded');
    expect(ran(host.handleOf(queuedWhileDown, work))).toBe(true);
    await answered(a, host.spool);
    await answered(b, work);
    await unknownKeyThrough(a, work);
    await unknownKeyThrough(b, host.spool);
    // Each spool's operations, as before: work's own is refused through default.
    const catalog = (dir: string) => (JSON.parse(readFileSync(path.join(dir, 'catalog.json'), 'utf8')) as CatalogDoc).operations.map((o) => o.name);
    expect(catalog(work)).toContain('work_only');
    expect(catalog(host.spool)).not.toContain('work_only');
    const id = `after-start-${++ids}`;
    host.submit(a, id, 'work_only');
    expect((await host.waitResult(id)).error?.code).toBe('unknown_op');
  }

  it('after a clean stop and after a SIGKILL, both spools are served again, each key still only through its own, and what was queued meanwhile is answered', async () => {
    daemon = await startAll();
    await answered(a, host.spool);
    await answered(b, work);

    expect((await daemon.stop()).code).toBe(0);
    host.submit(b, 'down-1', 'mark', {}, {}, work);
    daemon = await startAll();
    await servesBoth('down-1');

    await daemon.kill9();
    host.submit(b, 'down-2', 'mark', {}, {}, work);
    daemon = await startAll();
    await servesBoth('down-2');
  });

  it('a spool replaced by a symbolic link at the start does not stop the daemon from starting and serving the other', async () => {
    const real = `${host.spool}-real`;
    renameSync(host.spool, real);
    symlinkSync(real, host.spool);
    host.submit(b, 'down-1', 'mark', {}, {}, work);
    daemon = await startAll();
    expect((await host.waitResult('down-1', undefined, undefined, work)).state).toBe('succeeded');
    expect(await eventually('the problem of spool default', () => problemOf('default') ?? undefined)).toMatch(/symbolic link/);
    rmSync(host.spool);
    renameSync(real, host.spool);
    await answered(a, host.spool);
  });

  it('a spool unsafe at the start does not stop the daemon from starting and serving the other', async () => {
    chmodSync(host.spool, 0o777);
    host.submit(b, 'down-1', 'mark', {}, {}, work);
    host.submit(a, 'held-in-default', 'mark');
    daemon = await startAll();
    expect((await host.waitResult('down-1', undefined, undefined, work)).state).toBe('succeeded');
    const problem = await eventually('the problem of spool default', () => problemOf('default') ?? undefined);
    expect(statusSpools().find((s) => s.name === 'default')?.problem).toBe(problem);
    expect(host.result('held-in-default')).toBeUndefined();
    chmodSync(host.spool, 0o700);
    expect((await host.waitResult('held-in-default')).state).toBe('succeeded');
  });
});

describe('spools added and removed while the daemon runs', () => {
  it('a spool added is served without a restart; its removal is refused while it has an open request, then allowed, and its folder is left as it is', async () => {
    daemon = await startAll();
    await answered(a, host.spool);
    const late = host.addSpool('late');
    await eventually('late/catalog.json and late/bin/', () => (existsSync(path.join(late, 'catalog.json')) && readdirSync(path.join(late, 'bin')).length > 0 ? true : undefined));
    const c = host.createKeyWithCli('c', 'late');
    await answered(c, late);
    await unknownKeyThrough(a, late);
    await unknownKeyThrough(c, host.spool);

    host.submit(c, 'waiting', 'held', {}, {}, late);
    expect((await host.waitResult('waiting', ['awaiting_approval'], undefined, late)).state).toBe('awaiting_approval');
    const refused = host.cli(['spools', 'remove', 'late'], { spool: null });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/spool late has 1 open request/);
    expect(spoolsJson().map((s) => s.name)).toEqual(['default', 'work', 'late']);

    expect(host.cli(['cancel', 'waiting@late'], { spool: null }).status).toBe(0);
    expect((await host.waitResult('waiting', ['cancelled'], undefined, late)).state).toBe('cancelled');
    const removed = host.cli(['spools', 'remove', 'late'], { spool: null });
    expect(removed.status, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('was left as it is');
    await eventually('the daemon to stop serving late', () => (daemon.stderr.includes('no longer serving spool late') ? true : undefined));
    expect(spoolsJson().map((s) => s.name)).toEqual(['default', 'work']);
    // Left as it is: its files (the cancelled result among them) are still there.
    expect(readdirSync(late).sort()).toEqual(expect.arrayContaining(['bin', 'catalog.json', 'queue', 'results']));
    expect(host.result('waiting', late)?.state).toBe('cancelled');
    // Its key is unknown everywhere now, and the others go on.
    await unknownKeyThrough(c, host.spool);
    await answered(b, work);
  });
});

describe('a probe that finds the mount cannot be served safely', () => {
  it('stops the daemon serving that spool (said as its problem, the other served), until a probe finds it sound again', async () => {
    daemon = await startAll();
    await answered(b, work);
    // What `spools check work` records for a queue/ on another filesystem (a bind mount inside the spool).
    const sound = await eventually('the probe of work at the start', () => host.service((s) => s.core.flags.probe('work')) ?? undefined);
    const broken = { ...sound, verdict: 'unusable' as const, checks: sound.checks.map((c) => (c.name === 'same_filesystem' ? { ...c, ok: false, detail: 'queue/ is on another filesystem' } : c)) };
    host.service((s) => s.core.flags.setProbe('work', broken));
    const problem = await eventually('work to be not served', () => statusSpools().find((x) => x.name === 'work')?.problem ?? undefined);
    expect(problem).toBe('its mount cannot be served safely (one filesystem: queue/ is on another filesystem). Fix it, then probe it again: dumbwaiter spools check work');
    host.submit(b, 'held-by-mount', 'mark', {}, {}, work);
    await answered(a, host.spool);
    expect(host.result('held-by-mount', work)).toBeUndefined(); // not claimed: the spool is not touched
    // The real probe, again: the mount is sound, so the spool is served and the request answered.
    expect(host.cli(['spools', 'check', 'work', '--json'], { spool: null }).status).toBe(0);
    expect((await host.waitResult('held-by-mount', undefined, undefined, work)).state).toBe('succeeded');
    expect(statusSpools().find((x) => x.name === 'work')?.problem).toBeNull();
  });
});

describe('a stop while the mounts are still being probed', () => {
  it('ends the daemon: a probe ending after the stop opens no watcher that would keep it alive', async () => {
    for (let round = 0; round < 3; round++) {
      daemon = await startAll(); // the probes begin once it runs, one spool after the other
      expect((await daemon.stop()).code).toBe(0);
    }
  });
});

describe('a spool taken out of the home with a request still open', () => {
  it('(settings.json edited by hand, or a request claimed after remove\'s check) cancels the request instead of leaving it open for ever', async () => {
    daemon = await startAll();
    host.submit(b, 'stranded', 'held', {}, {}, work);
    expect((await host.waitResult('stranded', ['awaiting_approval'], undefined, work)).state).toBe('awaiting_approval');
    const file = path.join(host.home, 'settings.json');
    const settings = JSON.parse(readFileSync(file, 'utf8')) as { spools: { name: string }[] };
    writeFileSync(file, JSON.stringify({ ...settings, spools: settings.spools.filter((s) => s.name !== 'work') }));
    await eventually('the stranded request to be cancelled', () => (host.service((s) => s.requests.get('stranded@work'))?.state === 'cancelled' ? true : undefined));
    const entry = host.audit('stranded@work', 'cancelled')[0]!;
    expect(entry.actor).toBe('daemon (spool work was removed)');
    expect(host.ledger((l) => l.requests.openInSpool('work'))).toBe(0);
    // The allowlist names spool work: without it neither the file nor its last good copy loads, so
    // nothing is offered (as after a restart) until the allowlist no longer names it.
    await eventually('the allowlist refused without spool work', () => host.audit('', 'allowlist_invalid').find((e) => e.message.includes('no operation is offered')));
    host.writeAllowlist(allowlist(false));
    await eventually('mark offered again', () => {
      try {
        return (JSON.parse(readFileSync(path.join(host.spool, 'catalog.json'), 'utf8')) as CatalogDoc).operations.some((o) => o.name === 'mark') || undefined;
      } catch {
        return undefined;
      }
    });
    await answered(a, host.spool);
  });
});

/** The filesystem type /proc/mounts gives for the mount `dir` is on (the longest mount point holding it). */
function mountTypeOf(dir: string): string {
  const real = realpathSync(dir);
  let best = { at: '', type: 'unknown' };
  for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
    const [, rawAt, type] = line.split(' ');
    if (!rawAt || !type) continue;
    const at = rawAt.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
    const rel = path.relative(at, real);
    const inside = rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
    if (inside && at.length >= best.at.length) best = { at, type };
  }
  return best.type;
}

/** The probe as it ran for real: the filesystem named, file events delivered, every check passed. */
function expectSound(report: ProbeReport, name: string, dir: string): void {
  expect(report.spool).toBe(name);
  expect(report.dir).toBe(dir);
  expect(report.fs_type).toBe(mountTypeOf(dir));
  expect(report.events.delivered).toBe(true);
  expect(report.checks.map((c) => c.name).sort()).toEqual(['apart_from_home', 'case', 'events', 'free_space', 'fsync_dir', 'fsync_file', 'owner_mode', 'rename', 'same_filesystem']);
  // apart_from_home only warns (test/e2e/diskFull.test.ts): the tests' homes and spools share a disk.
  for (const c of report.checks) if (c.name !== 'apart_from_home') expect(c, c.detail).toMatchObject({ ok: true });
  expect(report.verdict).toBe('ok');
  // The probe cleans up after itself: nothing of it is left in tmp/.
  expect(readdirSync(path.join(dir, 'tmp'))).toEqual([]);
}

const shmIsTmpfs = process.platform === 'linux' && existsSync('/dev/shm') && mountTypeOf('/dev/shm') === 'tmpfs';

describe.skipIf(process.platform !== 'linux')('the mount probe, for real (Linux: /proc/mounts says what each mount is)', () => {
  it('spools list --json shows the verdict the daemon stored at start; spools check NAME --json probes the disk again', async () => {
    const before = new Date().toISOString();
    daemon = await startAll();
    const stored = await eventually('the probes the daemon stored', () => {
      const ss = spoolsJson();
      return ss.every((s) => s.probe !== null) ? ss : undefined;
    });
    for (const s of stored) {
      expect(s.probe!.at >= before).toBe(true);
      expectSound(s.probe!, s.name, s.dir);
    }
    // Each spool's host.json names it and carries its probe's verdict, for its sandbox's client.
    for (const s of stored) {
      const hostJson = await eventually(`${s.name}/host.json with the probe`, () => {
        const doc = JSON.parse(readFileSync(path.join(s.dir, 'host.json'), 'utf8')) as { spool?: string; probe?: { verdict: string; events: boolean } };
        return doc.probe ? doc : undefined;
      });
      expect(hostJson).toMatchObject({ spool: s.name, probe: { verdict: 'ok', events: true } });
    }
    const check = host.cli(['spools', 'check', 'work', '--json'], { spool: null });
    expect(check.status, check.stderr).toBe(0);
    const report = JSON.parse(check.stdout) as ProbeReport;
    expectSound(report, 'work', work);
    expect(report.at > stored.find((s) => s.name === 'work')!.probe!.at).toBe(true);
    await answered(b, work);
  });

  it('spools check NAME of an unsafe spool: its verdict unusable, the failed check saying why, in the exit status too (text and --json)', () => {
    chmodSync(work, 0o777);
    for (const json of [false, true]) {
      const check = host.cli(['spools', 'check', 'work', ...(json ? ['--json'] : [])], { spool: null });
      expect(check.status, `--json: ${json}`).toBe(1);
      if (!json) {
        expect(check.stdout).toMatch(/FAIL owner and mode .*mode 777/);
        continue;
      }
      const report = JSON.parse(check.stdout) as ProbeReport;
      expect(report.verdict).toBe('unusable');
      expect(report.checks.find((c) => c.name === 'owner_mode')).toMatchObject({ ok: false, detail: expect.stringContaining(`chmod 700 '${work}'`) });
    }
    expect(readdirSync(path.join(work, 'tmp'))).toEqual([]); // nothing written into a spool open to others
  });

  it.skipIf(!shmIsTmpfs)(`spools check NAME --json on tmpfs (/dev/shm${shmIsTmpfs ? '' : ' is not tmpfs here'})`, () => {
    const base = mkdtempSync('/dev/shm/dw-test-');
    extraDirs.push(base);
    const dir = path.join(base, 'spool');
    expect(host.cli(['spools', 'add', 'shm', dir], { spool: null }).status).toBe(0);
    const check = host.cli(['spools', 'check', 'shm', '--json'], { spool: null });
    expect(check.status, check.stderr).toBe(0);
    const report = JSON.parse(check.stdout) as ProbeReport;
    expect(report.fs_type).toBe('tmpfs');
    expectSound(report, 'shm', dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});

describe('--spool', () => {
  it('daemon --spool work serves work only: default\'s requests stay queued and unclaimed until a daemon serves it', async () => {
    host.submit(a, 'waits-for-default', 'mark');
    daemon = await host.startDaemon({}, { spool: 'work' });
    expect(daemon.stderr).toContain(`daemon running: spool ${work},`);
    await answered(b, work);
    await host.sentinel(b, undefined, undefined, work); // a whole pass of work's queue after that one
    expect(existsSync(host.queuePath('waits-for-default.json'))).toBe(true);
    expect(host.result('waits-for-default')).toBeUndefined();
    expect(host.service((s) => s.requests.get('waits-for-default'))).toBeNull();
    expect(ran('waits-for-default')).toBe(false);

    await daemon.stop();
    daemon = await startAll();
    expect((await host.waitResult('waits-for-default')).state).toBe('succeeded');
  });

  it('--spool with a name or a folder that is no spool of the home is a clear error', () => {
    const byName = host.cli(['daemon'], { spool: 'nope' });
    expect(byName.status).toBe(1);
    expect(byName.stderr).toContain('no spool named "nope" in this home');
    expect(byName.stderr).toContain(`default (${host.spool})`);
    expect(byName.stderr).toContain(`work (${work})`);

    const elsewhere = path.join(host.root, 'elsewhere');
    const byDir = host.cli(['daemon'], { spool: elsewhere });
    expect(byDir.status).toBe(1);
    expect(byDir.stderr).toContain(`no spool at ${elsewhere} in this home`);
    expect(byDir.stderr).toContain(`dumbwaiter spools add NAME '${elsewhere}'`);

    const key = host.cli(['keys', 'create', 'x', '--out', path.join(host.root, 'x.key.json')], { spool: 'nope' });
    expect(key.status).toBe(1);
    expect(key.stderr).toContain('no spool named "nope"');
    expect(existsSync(path.join(host.root, 'x.key.json'))).toBe(false);
  });
});
