// A probe of the mount a spool lives on, at start, on `spools check` and from the app: whether the
// daemon can serve it safely (owned by us, one filesystem so a rename is atomic, rename replaces) and how
// well (file events, fsync of a file and of a folder, free space), and what kind of filesystem it is.
// The spool is hostile-writable, so the probe works only in a folder of its own, uniquely named, under
// tmp/: created with O_EXCL, reached through pinned handles (/proc/self/fd/N) so a folder swapped for
// a symlink is never followed, every file created O_EXCL|O_NOFOLLOW|O_NONBLOCK (nothing existing, a
// FIFO least of all, is ever opened), read back with the spool's safe reads, and everything it made
// removed at the end whatever failed. It never throws for a bad spool: a check that cannot run says why.
import { closeSync, constants, fsyncSync, lstatSync, mkdirSync, openSync, renameSync, rmdirSync, statSync, statfsSync, unlinkSync, watch, writeSync, type FSWatcher } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CHECK_TITLES, type ProbeCheck, type ProbeCheckName, type ProbeReport } from '../../../shared/protocol/probe';
import { checkSpool, type SpoolPaths } from './layout';
import { pinDir, unpin, type PinnedDir } from './pinned';
import { readSpoolFile } from './safeRead';
import { fsTypeOf, isSharedMount } from './mountType';
import { RESERVE_BYTES, mib } from '../ledger/room';

export interface ProbeTarget {
  name: string;
  /** The spool's folder as configured (its names are checked for owner and mode). */
  root: string;
  /** The pinned paths (spool/pinned.ts) when the daemon has them, else spoolPaths(root). */
  paths: SpoolPaths;
  /** The host's home: a spool on its filesystem is warned about (without it, that is not checked). */
  home?: string;
}

export interface ProbeOptions {
  /** How long to wait for the file event of a file the probe creates (default 2000; 0: not checked). */
  eventTimeoutMs?: number;
  /** The daemon's rescan interval, said in the summary when no events come (default 1000). */
  rescanMs?: number;
}

export const LOW_SPACE_BYTES = 100 * 1024 * 1024;
const CHECK_ORDER: ProbeCheckName[] = ['owner_mode', 'same_filesystem', 'rename', 'fsync_file', 'fsync_dir', 'events', 'case', 'free_space', 'apart_from_home'];
const UNUSABLE_IF_FAILED: ProbeCheckName[] = ['owner_mode', 'same_filesystem', 'rename'];
const DEGRADED_IF_FAILED: ProbeCheckName[] = ['events', 'fsync_dir', 'fsync_file', 'free_space'];
// apart_from_home only warns: the default layout puts both under $HOME, and the host copes (ledger/room.ts).
/** The name of the probe's own folders under tmp/: a dot name, which every reader of the spool skips. */
export const PROBE_DIR_PREFIX = '.dw-probe-';

/** A pinned path (pinned.ts) is the kernel's own link to the folder pinned: followed by design. */
const PINNED_PATH = /^\/proc\/self\/fd\/\d+$/;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW | NONBLOCK;
const UNSUPPORTED = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

const codeOf = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;
const failed = (e: unknown): string => (UNSUPPORTED.has(codeOf(e)) ? `not supported by this filesystem (${codeOf(e)})` : `failed (${codeOf(e)})`);

/** A folder as `paths` names it, opened without following a link (a pinned path excepted). */
function openFolder(p: string): number {
  return openSync(p, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | NONBLOCK | (PINNED_PATH.test(p) ? 0 : NOFOLLOW));
}

function folderDev(p: string): number {
  return (PINNED_PATH.test(p) ? statSync(p) : lstatSync(p)).dev;
}

/** The probe's folder and what it made there, all removed by `remove()` whatever happened meanwhile. */
class Scratch {
  private readonly pins: PinnedDir[] = [];
  /** Names made (or about to be), newest last: files, then folders, each inside a pinned folder. */
  private readonly made: { dir: PinnedDir; name: string; folder: boolean }[] = [];
  private tmpPin: PinnedDir | null = null;
  private readonly name = `${PROBE_DIR_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`;
  private base = '';
  readonly root: PinnedDir;

  constructor(tmp: string) {
    // Plain tmp/ is pinned here first (never followed); a pinned one already is.
    if (!PINNED_PATH.test(tmp)) this.tmpPin = pinDir(tmp);
    this.base = this.tmpPin?.path ?? tmp;
    try {
      mkdirSync(path.join(this.base, this.name), { mode: 0o700 }); // fails on anything already there
      this.root = this.pin(this.base, this.name);
    } catch (e) {
      this.remove();
      throw e;
    }
  }

  private pin(base: string, name: string): PinnedDir {
    const p = pinDir(path.join(base, name));
    this.pins.push(p);
    return p;
  }

  /** A folder of the probe's own inside `dir`. */
  folder(dir: PinnedDir, name: string): PinnedDir {
    this.made.push({ dir, name, folder: true });
    mkdirSync(path.join(dir.path, name), { mode: 0o700 });
    return this.pin(dir.path, name);
  }

  /** Notes a name the probe is about to make (a rename's target), to remove it at the end. */
  expect(dir: PinnedDir, name: string): string {
    this.made.push({ dir, name, folder: false });
    return path.join(dir.path, name);
  }

  /** A new file (never one already there, nor through a link); `sync`: fsync'd before it is closed. */
  write(dir: PinnedDir, name: string, data: string, sync = false): void {
    const fd = openSync(this.expect(dir, name), CREATE, 0o600);
    try {
      const buf = Buffer.from(data);
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Removes what the probe made, newest first; a name that holds something else by now (a folder
   *  the sandbox filled, say) is left for tmp/'s retention. Never throws. */
  remove(): void {
    for (const m of this.made.reverse()) {
      try {
        (m.folder ? rmdirSync : unlinkSync)(path.join(m.dir.path, m.name));
      } catch {}
    }
    for (const p of this.pins.splice(0)) unpin(p);
    try {
      rmdirSync(path.join(this.base, this.name));
    } catch {}
    if (this.tmpPin) unpin(this.tmpPin);
    this.tmpPin = null;
  }
}

function ownerMode(root: string): ProbeCheck {
  try {
    checkSpool(root);
    const st = lstatSync(root);
    return { name: 'owner_mode', ok: true, detail: `owned by you (uid ${st.uid}), mode ${(st.mode & 0o777).toString(8)}; its folders writable by nobody else` };
  } catch (e) {
    return { name: 'owner_mode', ok: false, detail: (e as Error).message };
  }
}

function sameFilesystem(paths: SpoolPaths): ProbeCheck {
  try {
    const root = folderDev(paths.root);
    for (const d of ['tmp', 'queue', 'claimed', 'results'] as const) {
      const dev = folderDev(paths[d]);
      if (dev !== root) {
        return { name: 'same_filesystem', ok: false, detail: `${d}/ is on another filesystem than the spool (device ${dev}, not ${root}), so a rename between them is not atomic: is something mounted inside the spool?` };
      }
    }
    return { name: 'same_filesystem', ok: true, detail: 'tmp/, queue/, claimed/ and results/ are on the spool\'s filesystem: a rename between them is atomic' };
  } catch (e) {
    return { name: 'same_filesystem', ok: false, detail: `cannot be checked (${codeOf(e)})` };
  }
}

/** Whether `file` holds exactly `want`, read without following a link or opening anything but a file. */
function holds(file: string, want: string): string | null {
  const r = readSpoolFile(file, 4096);
  if (!r.ok) return `the file ${r.reason}`;
  return r.bytes.toString() === want ? null : 'the file holds something else';
}

function isGone(file: string): boolean {
  try {
    lstatSync(file);
    return false;
  } catch (e) {
    return codeOf(e) === 'ENOENT';
  }
}

function renameCheck(s: Scratch): ProbeCheck {
  const fail = (detail: string): ProbeCheck => ({ name: 'rename', ok: false, detail });
  try {
    const a = s.folder(s.root, 'a');
    const b = s.folder(s.root, 'b');
    const fresh = `new ${randomBytes(8).toString('hex')}\n`;
    s.write(a, 'old', 'old\n');
    s.write(a, 'new', fresh);
    const [src, dst] = [path.join(a.path, 'new'), path.join(a.path, 'old')];
    renameSync(src, dst);
    const over = holds(dst, fresh);
    if (over) return fail(`after a rename over an existing file, ${over}`);
    if (!isGone(src)) return fail('after a rename over an existing file, the old name is still there');
    const moved = s.expect(b, 'moved');
    renameSync(dst, moved);
    const across = holds(moved, fresh);
    if (across) return fail(`after a rename into another folder, ${across}`);
    if (!isGone(dst)) return fail('after a rename into another folder, the old name is still there');
    return { name: 'rename', ok: true, detail: 'a rename replaces an existing file and moves one between folders' };
  } catch (e) {
    return fail(`rename ${failed(e)}`);
  }
}

function fsyncFile(s: Scratch): ProbeCheck {
  try {
    s.write(s.root, 'synced', 'synced\n', true);
    return { name: 'fsync_file', ok: true, detail: 'works' };
  } catch (e) {
    return { name: 'fsync_file', ok: false, detail: failed(e) };
  }
}

function fsyncDir(s: Scratch): ProbeCheck {
  let fd: number;
  try {
    fd = openFolder(s.root.path);
  } catch (e) {
    return { name: 'fsync_dir', ok: false, detail: `a folder cannot be opened here (${codeOf(e)})` };
  }
  try {
    fsyncSync(fd);
    return { name: 'fsync_dir', ok: true, detail: 'works' };
  } catch (e) {
    return { name: 'fsync_dir', ok: false, detail: `${failed(e)}: a crash may lose the last renames` };
  } finally {
    closeSync(fd);
  }
}

function caseCheck(s: Scratch): { check: ProbeCheck; insensitive: boolean } {
  try {
    s.write(s.root, 'probe-a', 'a\n');
    const mine = lstatSync(path.join(s.root.path, 'probe-a'));
    let other;
    try {
      other = lstatSync(path.join(s.root.path, 'PROBE-A'));
    } catch (e) {
      if (codeOf(e) !== 'ENOENT') throw e;
    }
    const insensitive = other !== undefined && other.ino === mine.ino && other.dev === mine.dev;
    const detail = insensitive ? 'case-insensitive: names differing only in case are the same file' : 'case-sensitive';
    return { check: { name: 'case', ok: true, detail }, insensitive };
  } catch (e) {
    return { check: { name: 'case', ok: false, detail: `cannot be checked (${codeOf(e)})` }, insensitive: false };
  }
}

interface EventResult {
  check: ProbeCheck;
  latency: number | null;
}

/** Watches the probe's folder, creates a file there and times the event that names it. */
function eventCheck(s: Scratch, timeoutMs: number, rescanMs: number): Promise<EventResult> {
  const none = (why: string): EventResult => ({ check: { name: 'events', ok: false, detail: `${why}: rescan only (every ${rescanMs} ms)` }, latency: null });
  if (timeoutMs <= 0) return Promise.resolve(none('not checked (event timeout 0 ms)'));
  const name = 'event';
  return new Promise((resolve) => {
    let watcher: FSWatcher | null = null;
    let start = 0;
    const done = (r: EventResult) => {
      clearTimeout(timer);
      watcher?.close();
      watcher = null;
      resolve(r);
    };
    const timer = setTimeout(() => done(none(`no event within ${timeoutMs} ms`)), timeoutMs);
    try {
      watcher = watch(s.root.path, (_event, file) => {
        // A platform that names no file still said something changed in the folder.
        if (file === name || file === null) {
          const ms = Math.round((performance.now() - start) * 10) / 10;
          done({ check: { name: 'events', ok: true, detail: `delivered in ${ms} ms` }, latency: ms });
        }
      });
      watcher.on('error', (e) => done(none(`the watch failed (${codeOf(e)})`)));
    } catch (e) {
      done(none(`a watch cannot be set up (${codeOf(e)})`));
      return;
    }
    start = performance.now();
    try {
      s.write(s.root, name, 'event\n');
    } catch (e) {
      done(none(`the file to watch cannot be created (${codeOf(e)})`));
    }
  });
}

function freeSpace(paths: SpoolPaths): { check: ProbeCheck; bytes: number | null } {
  try {
    const st = statfsSync(paths.root);
    const bytes = Number(st.bavail) * Number(st.bsize);
    if (bytes < LOW_SPACE_BYTES) return { check: { name: 'free_space', ok: false, detail: `only ${mib(bytes)} free (under ${mib(LOW_SPACE_BYTES)})` }, bytes };
    return { check: { name: 'free_space', ok: true, detail: `${mib(bytes)} free` }, bytes };
  } catch (e) {
    return { check: { name: 'free_space', ok: false, detail: `cannot be measured (${codeOf(e)})` }, bytes: null };
  }
}

/** Whether the spool shares a filesystem (st_dev) with the home: its sandbox can then fill the disk the
 *  host's ledger needs. The host then takes no requests until space returns, from any spool. */
function apartFromHome(paths: SpoolPaths, home: string): ProbeCheck {
  try {
    const spool = folderDev(paths.root);
    if (spool !== statSync(home).dev) return { name: 'apart_from_home', ok: true, detail: "on another filesystem than the host's home" };
    return {
      name: 'apart_from_home',
      ok: false,
      detail: `on the filesystem of the host's home (${home}): a sandbox that fills it leaves the ledger no room, and the host then takes no requests from any spool until the home has ${mib(RESERVE_BYTES)} free again. A spool on a filesystem of its own (a partition, a tmpfs, a quota) keeps that to itself`,
    };
  } catch (e) {
    return { name: 'apart_from_home', ok: false, detail: `cannot be checked (${codeOf(e)})` };
  }
}

function summarize(fsType: string, checks: Map<ProbeCheckName, ProbeCheck>, verdict: ProbeReport['verdict'], latency: number | null, insensitive: boolean, rescanMs: number): string {
  const note = isSharedMount(fsType) ? `; a shared mount (${fsType}): changes made on the other side may send no file events` : '';
  if (verdict === 'unusable') return `${fsType}: unusable: ${UNUSABLE_IF_FAILED.map((n) => checks.get(n)!).find((c) => !c.ok)!.detail}`;
  const parts = [checks.get('events')!.ok ? `file events in ${latency} ms` : `no file events: rescan only (every ${rescanMs} ms)`];
  for (const n of ['fsync_file', 'fsync_dir', 'free_space'] as const) {
    const c = checks.get(n)!;
    if (!c.ok) parts.push(n === 'free_space' ? c.detail : `${CHECK_TITLES[n]}: ${c.detail}`);
  }
  if (insensitive) parts.push('names are case-insensitive');
  if (checks.get('apart_from_home')?.ok === false) parts.push("on the home's filesystem: a sandbox filling it stops the host taking requests");
  return `${fsType}: ${verdict === 'ok' ? 'ok; ' : ''}${parts.join('; ')}${note}`;
}

/** The probe's options under the host's settings: the rescan interval it names, and no wait for a
 *  file event where file events are switched off (the report then says "rescan only"). */
export function probeOptions(settings: { rescan_interval_ms: number; file_events: boolean }): ProbeOptions {
  return { rescanMs: settings.rescan_interval_ms, ...(settings.file_events ? {} : { eventTimeoutMs: 0 }) };
}

/** Probes the spool's mount. Never throws for a bad spool: a check that cannot run says why. */
export async function probeSpool(spool: ProbeTarget, opts: ProbeOptions = {}): Promise<ProbeReport> {
  const rescanMs = opts.rescanMs ?? 1000;
  const checks = new Map<ProbeCheckName, ProbeCheck>();
  const put = (c: ProbeCheck) => checks.set(c.name, c);
  const at = new Date().toISOString();
  const fsType = fsTypeOf(spool.paths.root);
  const space = freeSpace(spool.paths);
  put(space.check);
  if (spool.home !== undefined) put(apartFromHome(spool.paths, spool.home));
  put(ownerMode(spool.root));
  let latency: number | null = null;
  let insensitive = false;
  if (checks.get('owner_mode')!.ok) {
    put(sameFilesystem(spool.paths));
    let scratch: Scratch | null = null;
    try {
      scratch = new Scratch(spool.paths.tmp);
    } catch (e) {
      for (const n of ['rename', 'fsync_file', 'fsync_dir', 'events', 'case'] as const) put({ name: n, ok: false, detail: `not run: the probe's folder cannot be made in tmp/ (${codeOf(e)})` });
    }
    if (scratch) {
      try {
        put(renameCheck(scratch));
        put(fsyncFile(scratch));
        put(fsyncDir(scratch));
        const c = caseCheck(scratch);
        put(c.check);
        insensitive = c.insensitive;
        const ev = await eventCheck(scratch, opts.eventTimeoutMs ?? 2000, rescanMs);
        put(ev.check);
        latency = ev.latency;
      } finally {
        scratch.remove();
      }
    }
  } else {
    for (const n of ['same_filesystem', 'rename', 'fsync_file', 'fsync_dir', 'events', 'case'] as const) put({ name: n, ok: false, detail: 'not run: the spool is not safe to write in (see owner and mode)' });
  }
  const failedAny = (names: ProbeCheckName[]) => names.some((n) => !checks.get(n)!.ok);
  const verdict = failedAny(UNUSABLE_IF_FAILED) ? 'unusable' : failedAny(DEGRADED_IF_FAILED) ? 'degraded' : 'ok';
  return {
    spool: spool.name,
    dir: spool.root,
    at,
    fs_type: fsType,
    events: { delivered: checks.get('events')!.ok, latency_ms: latency },
    case_insensitive: insensitive,
    free_bytes: space.bytes,
    checks: CHECK_ORDER.filter((n) => checks.has(n)).map((n) => checks.get(n)!),
    verdict,
    summary: summarize(fsType, checks, verdict, latency, insensitive, rescanMs),
  };
}
