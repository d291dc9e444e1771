// A real host for end-to-end tests: a temporary home and spool made by the real `dumbwaiter init`,
// the real daemon process, and a sandbox side that signs and writes request files like a client would.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { computeMac, decodeSecret } from '../../shared/protocol/sign';
import type { KeyFile, ResultDoc, RequestState } from '../../shared/protocol/types';
import { Host } from '../../main/core/host/host';
import { keyFileOf, type Scope } from '../../main/core/keys/keyStore';
import { openLedger } from '../../main/core/ledger/db';
import { LedgerParts } from './ledger';
import { AS_USER, NO_UNPRIVILEGED_USER, alive, groupRunning, track } from './processes';
import { pidFile } from '../../main/core/exec/keeperFiles';
import { homePaths } from '../../main/core/home';
import { DEFAULT_SPOOL } from '../../shared/protocol/ids';
import { NO_OPERATIONS } from './allowlists';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The host's command line as the tests run it: the test build of the bundle (test/setup/global.ts builds
 *  it), which keeps the fault-injection points that product bundles leave out. */
export const CLI = path.join(ROOT, 'dist/test-host/cli.mjs');

/** An allowlist entry (as listed under `operations:`) for a run the test lets end: it prints "started",
 *  waits until the file named by its `go` argument exists, then prints "done". */
export const GATED_OP = `  - name: gated
    description: Print, wait until a file exists, print again
    command: [/bin/sh, -c, 'echo started; while [ ! -e "$0" ]; do sleep 0.05; done; echo done', "{go}"]
    args:
      go: {type: string, max_length: 500}
    scope: read
    approval: never
    concurrency: 4
`;

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls until `fn` returns a value (not undefined), or fails with `what` after `timeoutMs`. */
export async function eventually<T>(what: string, fn: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Waits until the clock reads later than `t` (ms): for a deadline the daemon checks against the same
 *  clock (an expiry), or for time stamps later than those already written. Not a pause: no event says it. */
export function clockPast(t: number): Promise<true> {
  return eventually(`the clock to pass ${new Date(t).toISOString()}`, () => (Date.now() > t ? true : undefined), Math.max(0, t - Date.now()) + 15_000);
}

export interface SubmitOptions {
  createdAt?: string;
  expiresAt?: string;
  intent?: string;
  /** Replace the payload text (it is still signed, unless `mac` is given). */
  payload?: string;
  mac?: string;
  keyId?: string;
  /** More payload fields (`timeout_s`, `max_output_bytes`, `plan_id`, or anything else), signed with the rest. */
  extra?: Record<string, unknown>;
}

export class DaemonProcess {
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Once all it wrote has been read too: its exit may be seen before the last of its output. */
  readonly closed: Promise<void>;

  constructor(readonly proc: ChildProcess) {
    proc.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    proc.stdout!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
    this.closed = new Promise((resolve) => proc.on('close', () => resolve()));
  }

  async ready(): Promise<this> {
    await eventually('the daemon to start', () => (this.stderr.includes('daemon running') ? true : this.proc.exitCode !== null ? fail(this.stderr) : undefined), 30_000);
    return this;
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGTERM');
    return this.exited;
  }

  async kill9(): Promise<void> {
    this.proc.kill('SIGKILL');
    await this.exited;
  }
}

function fail(stderr: string): never {
  throw new Error(`the daemon exited early:\n${stderr}`);
}

/** The host's service on a home, for one call. */
export function withService<T>(home: string, spool: string | undefined, fn: (svc: Host) => T): T {
  const svc = new Host(home, spool);
  try {
    return fn(svc);
  } finally {
    svc.close();
  }
}

/** The envelope text a client would write. */
export function envelope(key: KeyFile, id: string, op: string, args: Record<string, unknown> = {}, o: SubmitOptions = {}): string {
  const payload =
    o.payload ??
    JSON.stringify({
      id,
      op,
      args,
      created_at: o.createdAt ?? new Date().toISOString(),
      ...(o.expiresAt ? { expires_at: o.expiresAt } : {}),
      ...(o.intent ? { intent: o.intent } : {}),
      ...o.extra,
    });
  const keyId = o.keyId ?? key.key_id;
  const mac = o.mac ?? computeMac(decodeSecret(key.secret), keyId, payload);
  return JSON.stringify({ v: 1, key_id: keyId, payload, mac });
}

/** A sandbox as an agent holds it: a new folder outside the test's root (no node_modules above it)
 *  with copies of the spool's clients from its bin/ (written there by the daemon) and `key`'s file as
 *  key.json; `env` is what a client there runs with. The caller removes `dir`. */
export function sandboxWithClients(spool: string, key: KeyFile): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-sandbox-'));
  for (const client of ['dw.cjs', 'dw.py']) copyFileSync(path.join(spool, 'bin', client), path.join(dir, client));
  const keyFile = path.join(dir, 'key.json');
  writeFileSync(keyFile, JSON.stringify(key));
  return { dir, env: { PATH: process.env.PATH!, HOME: dir, DUMBWAITER_SPOOL: spool, DUMBWAITER_KEY_FILE: keyFile } };
}

/** Writes a file into a spool's queue/ the way the protocol says: into tmp/, then renamed. */
export function writeQueueFile(spool: string, name: string, content: string | Buffer): void {
  const tmp = path.join(spool, 'tmp', `${name}.${process.pid}.${Math.random().toString(36).slice(2)}`);
  writeFileSync(tmp, content);
  renameSync(tmp, path.join(spool, 'queue', name));
}

export function readResult(spool: string, id: string): ResultDoc | undefined {
  try {
    return JSON.parse(readFileSync(path.join(spool, 'results', `${id}.json`), 'utf8')) as ResultDoc;
  } catch {
    return undefined;
  }
}

const ANY_FINAL: RequestState[] = ['succeeded', 'failed', 'rejected', 'denied', 'expired', 'cancelled', 'uncertain'];

/** Waits until a request's result is in one of `states` (default: any final state). */
export function waitForResult(spool: string, id: string, states: RequestState[] = ANY_FINAL, timeoutMs = 20_000): Promise<ResultDoc> {
  return eventually(`result of ${id} in ${states.join('|')}`, () => {
    const r = readResult(spool, id);
    return r && states.includes(r.state) ? r : undefined;
  }, timeoutMs);
}

/** The host's handle for the request a sandbox named `id` in the spool named `spool` (the run's
 *  DUMBWAITER_REQUEST_ID, the audit log's request_id, `approvals approve`, the service's `request`):
 *  the id in `default`, `<id>@<spool>` in every other (PROTOCOL.md "Ids per spool"). */
export function handleOf(id: string, spool: string): string {
  return spool === DEFAULT_SPOOL ? id : `${id}@${spool}`;
}

/** The pid of the run keeper of the home `home` while one runs (exec/keeperFiles.ts), else null. */
export function keeperPidOf(home: string): number | null {
  try {
    const pid = Number(readFileSync(pidFile(homePaths(home).keeper), 'utf8'));
    return pid > 0 && alive(pid) ? pid : null;
  } catch {
    return null;
  }
}

/** SIGKILL to the run keeper of `home`, if one runs. Returns its pid. */
export function killKeeperOf(home: string): number | null {
  const pid = keeperPidOf(home);
  if (pid !== null) process.kill(pid, 'SIGKILL');
  return pid;
}

/**
 * A test's cleanup: every run keeper of `home` killed, and gone. It outlives its daemon, and one that
 * a daemon killed while starting it had no time to name in its pid file is found by its command line
 * (its folder is an argument) where /proc can say.
 */
export async function endKeepersOf(home: string): Promise<void> {
  const dir = homePaths(home).keeper;
  const pids = new Set<number>();
  const named = keeperPidOf(home);
  if (named !== null) pids.add(named);
  if (existsSync('/proc')) {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(dir)) pids.add(Number(name));
      } catch {
        /* gone meanwhile */
      }
    }
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }
  await eventually(`the run keepers of ${home} to die`, () => ([...pids].some(alive) ? undefined : true));
}

export class TestHost {
  readonly root: string;
  readonly home: string;
  readonly spool: string;
  /** A folder for operations to work in: the root holds the home and the spool, which no cwd may contain. */
  readonly work: string;
  private daemons: DaemonProcess[] = [];
  private sentinels = 0;
  /** The names of the spools this test made, by folder. */
  private spoolNames = new Map<string, string>();

  /** `allowlist`: the home's allowlist.yaml (a test that names files under its root writes its own
   *  later); `root`: an empty folder to lay the home and the spool out in (a mount the test made),
   *  instead of a new one. */
  constructor(allowlist = NO_OPERATIONS, settings: Record<string, unknown> = {}, opts: { root?: string } = {}) {
    this.root = opts.root ?? mkdtempSync(path.join(os.tmpdir(), 'dw-test-'));
    this.home = path.join(this.root, 'home');
    this.spool = path.join(this.root, 'spool');
    this.work = path.join(this.root, 'work');
    mkdirSync(this.work);
    const init = this.cli(['init']);
    if (init.status !== 0) throw new Error(`init failed: ${init.stderr}`);
    this.spoolNames.set(this.spool, DEFAULT_SPOOL);
    this.writeAllowlist(allowlist);
    const file = path.join(this.home, 'settings.json');
    const current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...current, rescan_interval_ms: 200, shutdown_grace_s: 2, kill_grace_s: 1, ...settings }));
  }

  /** Runs the real command line against this home and spool. `spool`: another spool's name or folder
   *  for `--spool`, or null for none (a command that acts on every spool, or names one itself). */
  cli(args: string[], opts: { env?: Record<string, string>; spool?: string | null } = {}): CliResult {
    const spool = opts.spool === undefined ? this.spool : opts.spool;
    const r = spawnSync(process.execPath, [CLI, ...args, '--home', this.home, ...(spool === null ? [] : ['--spool', spool])], {
      encoding: 'utf8',
      env: { ...process.env, ...opts.env },
      timeout: 60_000,
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  writeAllowlist(yaml: string): void {
    const tmp = path.join(this.home, '.allowlist.tmp');
    writeFileSync(tmp, yaml);
    renameSync(tmp, path.join(this.home, 'allowlist.yaml'));
  }

  /** Creates a key through the host's own service (the CLI is tested on its own); `spool`: the name of
   *  the spool it works through (else the one commands act on). */
  createKey(name = 'test', scope: Scope = 'write', ops: string[] | null = null, spool?: string): KeyFile {
    return this.service((svc) => keyFileOf(svc.keys.create(name, scope, ops, 'test', spool)));
  }

  /** A key made by the real `dumbwaiter keys create NAME --spool SPOOL --out FILE`: its key file. */
  createKeyWithCli(name: string, spool: string, scope: Scope = 'write'): KeyFile {
    const file = path.join(this.root, `${name}.key.json`);
    const r = this.cli(['keys', 'create', name, '--scope', scope, '--out', file], { spool });
    if (r.status !== 0) throw new Error(`keys create ${name} --spool ${spool} failed: ${r.stderr}`);
    return JSON.parse(readFileSync(file, 'utf8')) as KeyFile;
  }

  /** Another spool of this home, added by the real `dumbwaiter spools add` at a new folder under the
   *  test's root; returns its folder. */
  addSpool(name: string): string {
    const dir = path.join(this.root, `spool-${name}`);
    const r = this.cli(['spools', 'add', name, dir], { spool: null });
    if (r.status !== 0) throw new Error(`spools add ${name} failed: ${r.stderr}`);
    this.spoolNames.set(dir, name);
    return dir;
  }

  /** handleOf for a request that came through `spool`: a spool's name, or the folder of one this test
   *  made (else this host's first). */
  handleOf(id: string, spool = this.spool): string {
    const name = this.spoolNames.get(spool) ?? spool;
    if (path.isAbsolute(name)) throw new Error(`no spool of this test at ${spool}`);
    return handleOf(id, name);
  }

  /** `spool`: the spool it acts on (a name or folder; else this host's first spool's folder). */
  service<T>(fn: (svc: Host) => T, spool = this.spool): T {
    return withService(this.home, spool, fn);
  }

  /** The ledger's stores through their own connection, for one call: to plant a row as an older
   *  version or another process left it (the service keeps its tables to itself). */
  ledger<T>(fn: (ledger: LedgerParts) => T): T {
    const db = openLedger(path.join(this.home, 'ledger.sqlite'));
    try {
      return fn(new LedgerParts(db));
    } finally {
      db.close();
    }
  }

  /** `asUser`: without the power to override file permissions (see AS_USER), as on a user's desktop.
   *  `spool`: the one spool it serves (a name or folder; else this host's first spool), or null for
   *  every spool of the home. */
  async startDaemon(env: Record<string, string> = {}, opts: { asUser?: boolean; spool?: string | null } = {}): Promise<DaemonProcess> {
    if (opts.asUser && AS_USER === null) throw new Error(NO_UNPRIVILEGED_USER);
    const spool = opts.spool === undefined ? this.spool : opts.spool;
    const [program, ...args] = [...(opts.asUser ? AS_USER! : []), process.execPath, CLI, 'daemon', '--home', this.home, ...(spool === null ? [] : ['--spool', spool])];
    const proc = track(
      spawn(program!, args, {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const d = new DaemonProcess(proc);
    this.daemons.push(d);
    try {
      return await d.ready();
    } catch (e) {
      await d.kill9(); // one that never said it runs may still be starting
      throw e;
    }
  }

  envelope(key: KeyFile, id: string, op: string, args: Record<string, unknown> = {}, o: SubmitOptions = {}): string {
    return envelope(key, id, op, args, o);
  }

  /** Writes a request the way the protocol says: into tmp/, then renamed into queue/ (of `spool`, a
   *  spool folder: by default this host's first). */
  submit(key: KeyFile, id: string, op: string, args: Record<string, unknown> = {}, o: SubmitOptions = {}, spool = this.spool): void {
    writeQueueFile(spool, `${id}.json`, this.envelope(key, id, op, args, o));
  }

  writeQueueFile(name: string, content: string | Buffer): void {
    writeQueueFile(this.spool, name, content);
  }

  queuePath(name: string): string {
    return path.join(this.spool, 'queue', name);
  }

  result(id: string, spool = this.spool): ResultDoc | undefined {
    return readResult(spool, id);
  }

  waitResult(id: string, states?: RequestState[], timeoutMs?: number, spool = this.spool): Promise<ResultDoc> {
    return waitForResult(spool, id, states, timeoutMs);
  }

  /**
   * Submits a request that the daemon takes after every request already in queue/, and waits for its
   * final result. The queue is read in name order (zz-... sorts after the tests' ids), and each pass
   * over it ends by starting what may start (pump). The default, dumbwaiter.ping, is answered at
   * intake, for any key, paused or not: it shows that earlier requests were taken, and that the pass
   * which took those whose results were already seen has ended. A sentinel that runs shows more: runs
   * start in claim order, but one of another operation may overtake a run whose operation is at its
   * concurrency limit.
   */
  sentinel(key: KeyFile, op = 'dumbwaiter.ping', args: Record<string, unknown> = {}, spool = this.spool): Promise<ResultDoc> {
    const id = `zz-sentinel-${++this.sentinels}`;
    this.submit(key, id, op, args, {}, spool);
    return this.waitResult(id, undefined, undefined, spool);
  }

  /** The process group of a run, once the daemon has recorded it: just after the run started (which
   *  the result and the run's own output may show first). */
  runPid(id: string): Promise<number> {
    return eventually(`the pid of ${id} in the ledger`, () => this.service((s) => s.requests.get(id)?.pid ?? undefined));
  }

  /** Waits until the process group of a run (its pid in the ledger) has ended, e.g. one left running by
   *  a killed daemon, which ends on its own. */
  async runGone(id: string, timeoutMs = 15_000): Promise<void> {
    const pid = this.service((s) => s.requests.get(id)?.pid);
    if (pid) await eventually(`the processes of ${id} to end`, () => (groupRunning(pid) ? undefined : true), timeoutMs);
  }

  logOf(id: string): string {
    return readFileSync(path.join(this.spool, 'results', `${id}.log`), 'utf8');
  }

  inbox(): Record<string, unknown>[] {
    const dir = path.join(this.spool, 'inbox');
    // Messages only, as a client reads them: not a host's write in progress (.<name>.tmp).
    return readdirSync(dir)
      .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
      .sort()
      .map((n) => JSON.parse(readFileSync(path.join(dir, n), 'utf8')) as Record<string, unknown>);
  }

  audit(query = '', kind?: string): { kind: string; request_id: string | null; message: string; actor: string }[] {
    return this.service((s) => s.audit.search({ text: query, kind, limit: 10_000 }));
  }

  exists(rel: string): boolean {
    return existsSync(path.join(this.spool, rel));
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.daemons.map((d) => d.stop()));
    await endKeepersOf(this.home); // one holding runs a killed daemon left (a stopped daemon's exits by itself)
    rmSync(this.root, { recursive: true, force: true });
  }

  /** The pid of the home's run keeper while one runs, else null. */
  keeperPid(): number | null {
    return keeperPidOf(this.home);
  }

  /** SIGKILL to the home's run keeper, if one runs: with a daemon killed too, the host as a whole
   *  crashed (its runs go on as orphans, or die at their next write). Returns its pid. */
  killKeeper(): number | null {
    return killKeeperOf(this.home);
  }

  /** The whole host killed by SIGKILL: the daemon `d`, then its run keeper (the runs go on as orphans,
   *  or die at their next write), as after a crash of both. */
  async crash(d: DaemonProcess): Promise<void> {
    await d.kill9();
    const pid = this.killKeeper();
    if (pid !== null) await eventually('the run keeper to die', () => (alive(pid) ? undefined : true));
  }
}

/** What most end-to-end files start from: a TestHost, a key of its spool, and its daemon running. */
export interface RunningHost {
  host: TestHost;
  key: KeyFile;
  daemon: DaemonProcess;
}

/** A TestHost with `allowlist` and `settings`, a key (`name`, `scope`) of its first spool, and its daemon started. */
export async function runningHost(allowlist: string, key: { name: string; scope?: Scope }, settings: Record<string, unknown> = {}): Promise<RunningHost> {
  const host = new TestHost(allowlist, settings);
  try {
    return { host, key: host.createKey(key.name, key.scope), daemon: await host.startDaemon() };
  } catch (e) {
    await host.cleanup();
    throw e;
  }
}
