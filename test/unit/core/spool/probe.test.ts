// The probe of a spool's mount, run for real: on the disk and on tmpfs, through plain and pinned paths;
// on spools that are unsafe (mode 0777, tmp/ a symlink to the user's files), missing, crowded with a
// FIFO, on a filesystem too small, or with another filesystem mounted inside (in a mount namespace of
// its own, where the machine allows one). It never throws, never writes through a link, never blocks,
// and leaves nothing behind.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { probeSpool, type ProbeTarget } from '../../../../main/core/spool/probe';
import { PinnedSpool } from '../../../../main/core/spool/pinned';
import { createSpool, spoolPaths } from '../../../../main/core/spool/layout';
import type { ProbeCheckName, ProbeReport } from '../../../../shared/protocol/probe';
import { outputOf, projectFile, spawnTsx } from '../../../helpers/processes';

/** What findmnt (libmount, not our parser) says the folder's filesystem is. */
const findmnt = (dir: string) => execFileSync('findmnt', ['-n', '-o', 'FSTYPE', '--target', dir], { encoding: 'utf8' }).trim().split('\n').at(-1);
const HAS_FINDMNT = spawnSync('findmnt', ['--version']).status === 0;

/** A folder on the disk: the temporary folder, unless that is tmpfs (then one in the repo's test/artifacts). */
function diskBase(): string {
  const tmp = os.tmpdir();
  if (!HAS_FINDMNT || findmnt(tmp) !== 'tmpfs') return tmp;
  const base = fileURLToPath(projectFile('test/artifacts'));
  mkdirSync(base, { recursive: true });
  return base;
}

const SHM_IS_TMPFS = process.platform === 'linux' && existsSync('/dev/shm') && HAS_FINDMNT && findmnt('/dev/shm') === 'tmpfs';
/** A test's name, saying why it is skipped when it is. */
const unless = (can: boolean, why: string, name: string) => (can ? name : `${name} (skipped: ${why})`);

const made: string[] = [];
const pinned: PinnedSpool[] = [];
afterEach(() => {
  for (const s of pinned.splice(0)) s.close();
  for (const d of made.splice(0).reverse()) {
    if (existsSync(d)) chmodSync(d, 0o700);
    rmSync(d, { recursive: true, force: true });
  }
});

function newSpool(base: string): ProbeTarget {
  const dir = mkdtempSync(path.join(base, 'dw-probe-'));
  made.push(dir);
  const root = path.join(dir, 'spool');
  return { name: 'test', root, paths: createSpool(root) };
}

function pinnedTarget(t: ProbeTarget): ProbeTarget {
  const s = new PinnedSpool(t.paths);
  pinned.push(s);
  return { ...t, paths: s.paths };
}

/** Every name under `dir`, recursively, with its kind. */
function tree(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .map((e) => `${path.relative(dir, path.join(e.parentPath, e.name))}${e.isFIFO() ? ' (fifo)' : e.isDirectory() ? '/' : ''}`)
    .sort();
}

const check = (r: ProbeReport, name: ProbeCheckName) => r.checks.find((c) => c.name === name)!;

function expectAllOk(r: ProbeReport) {
  expect(r.checks.filter((c) => !c.ok)).toEqual([]);
  expect(r.verdict).toBe('ok');
  expect(r.events.delivered).toBe(true);
  expect(r.events.latency_ms).toBeGreaterThanOrEqual(0);
  expect(r.case_insensitive).toBe(false);
  expect(r.free_bytes).toBeGreaterThan(0);
  expect(r.summary).toMatch(new RegExp(`^${r.fs_type}: ok; file events in [0-9.]+ ms$`));
}

describe('the probe on a sound spool', () => {
  it('on the disk: every check passes, the filesystem is the one findmnt names, and nothing is left behind', async () => {
    const t = newSpool(diskBase());
    const before = tree(t.root);
    const r = await probeSpool(t);
    expectAllOk(r);
    if (HAS_FINDMNT) expect(r.fs_type).toBe(findmnt(t.root));
    expect(r).toMatchObject({ spool: 'test', dir: t.root });
    expect(Date.parse(r.at)).not.toBeNaN();
    expect(check(r, 'owner_mode').detail).toContain('mode 700');
    expect(tree(t.root)).toEqual(before);
  });

  it.skipIf(!SHM_IS_TMPFS)(unless(SHM_IS_TMPFS, 'no tmpfs at /dev/shm on this machine', 'on tmpfs (/dev/shm): every check passes and the filesystem is tmpfs'), async () => {
    const t = newSpool('/dev/shm');
    const before = tree(t.root);
    const r = await probeSpool(t);
    expectAllOk(r);
    expect(r.fs_type).toBe('tmpfs');
    expect(tree(t.root)).toEqual(before);
  });

  it('through the pinned paths the daemon uses, the same: every check passes, nothing left behind', async () => {
    const t = newSpool(diskBase());
    const before = tree(t.root);
    const r = await probeSpool(pinnedTarget(t));
    expectAllOk(r);
    if (HAS_FINDMNT) expect(r.fs_type).toBe(findmnt(t.root));
    expect(tree(t.root)).toEqual(before);
  });
});

describe('a spool the daemon cannot serve safely', () => {
  it('mode 0777 is unusable, says the mode, and the probe writes nothing into it', async () => {
    const t = newSpool(diskBase());
    chmodSync(t.root, 0o777);
    const before = tree(t.root);
    const r = await probeSpool(t);
    expect(r.verdict).toBe('unusable');
    expect(check(r, 'owner_mode')).toMatchObject({ ok: false });
    expect(check(r, 'owner_mode').detail).toContain('mode 777');
    expect(r.summary).toContain('mode 777');
    expect(check(r, 'rename').detail).toMatch(/^not run/);
    expect(tree(t.root)).toEqual(before);
  });

  it('tmp/ swapped for a symlink to the user\'s files is unusable, and nothing is created through the link', async () => {
    const t = newSpool(diskBase());
    const victim = path.join(path.dirname(t.root), 'victim');
    mkdirSync(victim);
    writeFileSync(path.join(victim, 'precious.txt'), 'mine\n');
    renameSync(t.paths.tmp, `${t.paths.tmp}-old`);
    symlinkSync(victim, t.paths.tmp);
    const r = await probeSpool(t);
    expect(r.verdict).toBe('unusable');
    expect(check(r, 'owner_mode').detail).toContain('is a symbolic link');
    expect(readdirSync(victim)).toEqual(['precious.txt']);
  });

  it('tmp/ swapped for a symlink after the daemon pinned it is unusable, and nothing is created through the link nor in the pinned tmp/', async () => {
    const t = newSpool(diskBase());
    const target = pinnedTarget(t);
    const victim = path.join(path.dirname(t.root), 'victim');
    mkdirSync(victim);
    renameSync(t.paths.tmp, `${t.paths.tmp}-old`);
    symlinkSync(victim, t.paths.tmp);
    const r = await probeSpool(target);
    expect(r.verdict).toBe('unusable'); // the names are unsafe now: the daemon waits for them to be fixed
    expect(readdirSync(victim)).toEqual([]);
    expect(readdirSync(`${t.paths.tmp}-old`)).toEqual([]);
  });

  it('a missing spool is unusable, saying it is missing, and the probe does not throw', async () => {
    const root = path.join(mkdtempSync(path.join(diskBase(), 'dw-probe-')), 'nothing');
    made.push(path.dirname(root));
    const r = await probeSpool({ name: 'gone', root, paths: spoolPaths(root) });
    expect(r.verdict).toBe('unusable');
    expect(check(r, 'owner_mode').detail).toContain('is missing');
    expect(r).toMatchObject({ fs_type: 'unknown', free_bytes: null, events: { delivered: false, latency_ms: null } });
    expect(check(r, 'free_space').ok).toBe(false);
    expect(existsSync(root)).toBe(false);
  });
});

describe('the probe among what the sandbox put in the spool', () => {
  it('finishes beside FIFOs planted in tmp/ (one with a probe-like name), and removes only its own files', async () => {
    const t = newSpool(diskBase());
    for (const name of [`.dw-probe-${process.pid}-000000000000`, '.dw-probe-fifo', 'x.json.tmp']) {
      expect(spawnSync('mkfifo', [path.join(t.paths.tmp, name)]).status).toBe(0);
    }
    writeFileSync(path.join(t.paths.tmp, '.agent-write.tmp'), 'half a request');
    const before = tree(t.root);
    const r = await probeSpool(t);
    expectAllOk(r);
    expect(tree(t.root)).toEqual(before);
    expect(before.filter((n) => n.endsWith('(fifo)'))).toHaveLength(3);
  });
});

describe('degraded', () => {
  it('without file events (not waited for) is degraded, and says rescan only with the interval', async () => {
    const t = newSpool(diskBase());
    const r = await probeSpool(t, { eventTimeoutMs: 0, rescanMs: 250 });
    expect(r.verdict).toBe('degraded');
    expect(r.events).toEqual({ delivered: false, latency_ms: null });
    expect(check(r, 'events').detail).toContain('rescan only (every 250 ms)');
    expect(r.summary).toBe(`${r.fs_type}: no file events: rescan only (every 250 ms)`);
    expect(r.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['events']);
    expect(readdirSync(t.paths.tmp)).toEqual([]);
  });
});

// Mounts are made in a mount namespace of the child's own (unshare -m): they end with it, whatever happens.
const CAN_MOUNT =
  process.platform === 'linux' &&
  spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d" && rmdir "$d"']).status === 0;
const NO_MOUNT = 'no private mount namespace with tmpfs mounts here (needs unshare -m as root)';

/** Runs the probe in a child that first mounts a tmpfs (`options`) on `at`; `create`: makes the spool there first. */
async function probeWithMount(at: string, options: string, spoolRoot: string, create: boolean): Promise<{ report: ProbeReport; tree: string[] }> {
  const code = `
    import { probeSpool } from ${JSON.stringify(projectFile('main/core/spool/probe.ts'))};
    import { createSpool, spoolPaths } from ${JSON.stringify(projectFile('main/core/spool/layout.ts'))};
    import { readdirSync } from 'node:fs';
    const root = ${JSON.stringify(spoolRoot)};
    const paths = ${create} ? createSpool(root) : spoolPaths(root);
    const report = await probeSpool({ name: 'mounted', root, paths });
    const tree = readdirSync(root, { recursive: true }).sort();
    process.stdout.write(JSON.stringify({ report, tree }));`;
  const wrapper = ['unshare', '-m', '--propagation', 'private', '/bin/sh', '-c', `mount -t tmpfs -o ${options} tmpfs '${at}' && exec "$@"`, 'sh'];
  const out = await outputOf(spawnTsx(code, { wrapper }));
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout) as { report: ProbeReport; tree: string[] };
}

describe.skipIf(!CAN_MOUNT)(unless(CAN_MOUNT, NO_MOUNT, 'with filesystems mounted for the test'), () => {
  let base: string;
  beforeEach(() => {
    base = mkdtempSync(path.join(diskBase(), 'dw-probe-mnt-'));
    made.push(base);
  });

  it('a filesystem mounted at queue/ inside the spool is unusable: a rename from tmp/ to queue/ would not be atomic', async () => {
    const t = newSpool(base);
    const { report, tree } = await probeWithMount(t.paths.queue, 'mode=0700,size=1m', t.root, false);
    expect(report.verdict).toBe('unusable');
    expect(report.checks.find((c) => c.name === 'same_filesystem')).toMatchObject({ ok: false });
    expect(report.summary).toContain('queue/ is on another filesystem');
    expect(tree.filter((n) => n.includes('.dw-probe-'))).toEqual([]);
    expect(readdirSync(t.paths.tmp)).toEqual([]);
  });

  it('a spool on a filesystem with under 100 MiB free is degraded, saying how much is left', async () => {
    const at = path.join(base, 'small');
    mkdirSync(at, { mode: 0o700 });
    const { report, tree } = await probeWithMount(at, 'mode=0700,size=2m', path.join(at, 'spool'), true);
    expect(report.fs_type).toBe('tmpfs');
    expect(report.verdict).toBe('degraded');
    expect(report.free_bytes).toBeGreaterThan(0);
    expect(report.free_bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(report.checks.find((c) => c.name === 'free_space')!.detail).toMatch(/^only [0-9.]+ MiB free \(under 100\.0 MiB\)$/);
    expect(report.summary).toMatch(/^tmpfs: file events in [0-9.]+ ms; only [0-9.]+ MiB free/);
    expect(tree.filter((n) => n.includes('.dw-probe-'))).toEqual([]);
    expect(statSync(at).isDirectory()).toBe(true);
  });
});

describe('a spool on the filesystem of the home', () => {
  it("is warned about, in its own check and the summary, without making the mount's verdict worse", async () => {
    const t = newSpool(diskBase());
    const home = path.join(path.dirname(t.root), 'home');
    mkdirSync(home);
    const r = await probeSpool({ ...t, home }, { eventTimeoutMs: 0 });
    expect(check(r, 'apart_from_home')).toEqual({
      name: 'apart_from_home',
      ok: false,
      detail: expect.stringContaining(`on the filesystem of the host's home (${home}): a sandbox that fills it leaves the ledger no room, and the host then takes no requests from any spool until the home has 64.0 MiB free again`),
    });
    expect(r.summary).toContain("on the home's filesystem: a sandbox filling it stops the host taking requests");
    expect(r.verdict).toBe((await probeSpool(t, { eventTimeoutMs: 0 })).verdict);
  });

  it(unless(SHM_IS_TMPFS, 'no tmpfs at /dev/shm', 'is not warned about on a filesystem of its own'), async () => {
    if (!SHM_IS_TMPFS) return;
    const r = await probeSpool({ ...newSpool('/dev/shm'), home: diskBase() }, { eventTimeoutMs: 0 });
    expect(check(r, 'apart_from_home')).toEqual({ name: 'apart_from_home', ok: true, detail: "on another filesystem than the host's home" });
    expect(r.summary).not.toContain("home's filesystem");
  });

  it('is not looked at when no home is given', async () => {
    const r = await probeSpool(newSpool(diskBase()), { eventTimeoutMs: 0 });
    expect(r.checks.map((c) => c.name)).not.toContain('apart_from_home');
  });
});
