// Running what is queued: admitted again just before a run (policy/admission.ts), a free slot per operation, the run, and
// its end recorded; and at start, the runs a stopped host left behind: those still running are watched
// as orphans (orphans.ts) and hold their slots, the others become uncertain and are reconciled
// (reconciler.ts) where their operation says how; and the processes of orphans a human gave a verdict
// that no host ended yet are ended.
import { existsSync } from 'node:fs';
import type { Db } from '../ledger/db';
import type { AuditLog } from '../ledger/audit';
import type { RequestRow, Requests } from '../ledger/requests';
import { approvedByFields, approvedByOf } from '../ledger/approvedBy';
import { admissionOf, admit } from '../policy/admission';
import { merged } from '../merged';
import type { KeyStore } from '../keys/keyStore';
import type { Grants } from '../ledger/grants';
import type { HostFlags } from '../ledger/meta';
import type { Lifecycle } from '../lifecycle';
import type { RunPlan } from '../allowlist/plan';
import type { Allowlist } from '../allowlist/types';
import type { Settings } from '../settings';
import type { Logger } from '../log';
import { dropUnstartedLog, makeLiveLog, type SpoolDirs } from '../spool/liveLogFile';
import { allowlistFor } from '../allowlist/forSpool';
import { DEFAULT_CWD } from '../allowlist/defaultCwd';
import type { RunHandle, RunOutcome } from '../exec/executor';
import { KeeperLost, type Kept, type RunStarter } from '../exec/keeper';
import { faultPoint } from '../faults';
import { Orphan, type OrphanEnd, type OrphanWatch, type Remains } from './orphans';
import { settleHint, uncheckedInterruption, type Reconciler } from './reconciler';
import { writeFailureCode } from '../ledger/room';
import { noteStarted, runEnd, spawnFailure } from './runRecord';

export interface RunnerDeps {
  db: Db;
  /** The spools whose requests may start now (served and usable), and the folders of one, where a
   *  run's log is made. */
  spools: () => string[];
  spoolDirs: (spool: string) => SpoolDirs | null;
  requests: Requests;
  audit: AuditLog;
  keys: KeyStore;
  grants: Grants;
  flags: HostFlags;
  lifecycle: Lifecycle;
  /** The home's one reconciler (HostCore's): the daemon's checks and a human's `resolve --check` share its slots. */
  reconciler: Reconciler;
  allowlist: () => Allowlist;
  settings: () => Settings;
  log: Logger;
  /** Starts runs (in the run keeper, which holds them while the daemon is gone). */
  starter: RunStarter;
  /** Runs `fn`, recording what it throws instead of throwing (one request never stops the others). */
  safely: (name: string, fn: () => void) => void;
}

/** Whether the operation's working folder is gone (the run then fails rather than starts). */
function cwdMissing(plan: RunPlan): boolean {
  return plan.cwd !== DEFAULT_CWD && !existsSync(plan.cwd);
}

/** A run of this host, or an orphan it watches: both hold a slot until their end is recorded. */
interface Running {
  op: string;
  terminate(reason: string): void;
  /** Resolves once its end is recorded. */
  recorded: Promise<void>;
  /** Stops watching it, ending nothing (an orphan's watch, at a stop that leaves runs running). */
  forget?: () => void;
}

/** How a run ended: its outcome; or the run keeper died with it, and `remains` is what is left of it. */
type RunEnd = { outcome: RunOutcome } | { row: RequestRow; remains: Remains };

/** Why a run recorded as running has nobody watching it (the start of an interruption's message). */
const HOST_STOPPED = 'the host stopped while this ran';
const KEEPER_LOST = 'the process that held this run (the host\'s run keeper) ended while it ran';

export class Runner {
  private readonly running = new Map<string, Running>();
  /** Runs that ended, to be recorded together (endTogether). */
  private readonly ending: { id: string; record: () => void; done: () => void }[] = [];
  /** Ends of runs a full or failing disk kept out of the ledger: recorded by recordLeftEnds() once there is room. */
  private leftEnds: { id: string; record: () => void }[] = [];
  private readonly reconciler: Reconciler;
  private stopping = false;
  /** The stop left the runs running: their ends (the keeper let go with them included) are the next start's to record. */
  private left = false;
  /** Where nextQueued() starts looking: the spool after the one that started last. */
  private turn = 0;

  constructor(private readonly d: RunnerDeps) {
    this.reconciler = d.reconciler;
  }

  get size(): number {
    return this.running.size;
  }

  /**
   * Runs that were going when the host stopped, never re-run. Those the run keeper held (`kept`) are
   * recorded as they ended, or followed until they do, as if the host had not stopped. One that never
   * reached the keeper (`keeperHadAll`: the keeper every run was sent to answered, so one it does not
   * hold, with no process recorded, was never started) is queued again. Of the others, one whose
   * processes still run is watched as an orphan (still running; a cancel ends it); the rest are
   * uncertain (once what they left is looked for and ended, their slots held meanwhile: the host
   * serves while that goes on), and wait for startReconciling() to be checked.
   */
  recoverInterrupted(kept: Map<string, Kept> = new Map(), keeperHadAll = false): void {
    for (const row of this.d.requests.inState('running')) {
      const k = kept.get(row.id);
      kept.delete(row.id);
      if (k) {
        this.d.safely(row.id, () => this.resumeKept(row, k));
        continue;
      }
      if (keeperHadAll && row.pid === null) {
        const message = 'the host stopped after recording its start, before its run keeper received it: it never ran, and is queued again';
        this.d.safely(row.id, () => {
          if (!this.d.lifecycle.move(row, 'queued', { started_at: null }, { kind: 'requeued', message }, ['running'])) return;
          const dirs = this.d.spoolDirs(row.spool);
          if (dirs) dropUnstartedLog(dirs.io, row);
        });
        continue;
      }
      const remains = this.remainsOf(row);
      this.d.safely(row.id, () => this.resume(row, remains, HOST_STOPPED));
    }
    // Kept for requests no longer running: a human's verdict came while no daemon ran (it stands).
    for (const [key, k] of kept) {
      if ('outcome' in k) this.d.starter.forget(key);
      else {
        k.handle.terminate('resolved');
        void k.handle.done.then(() => this.d.starter.forget(key), () => {});
      }
    }
    // After the running ones: a verdict given meanwhile (before this host adopted the run) is found here.
    for (const row of this.d.requests.endedOrphans()) {
      if (this.running.has(row.id)) continue; // adopted above: its watch ends it
      const ending = Orphan.endRemains(row, this.watch(row.id));
      this.hold(row.id, row.op, () => {}, ending, (note) => this.orphanEnded(row.id, `its processes were ended at the host's start${note ? ` (${note})` : ''}`));
    }
    // Those an earlier start left uncertain before its check could say anything: a crash during the
    // check, or a clean stop (which ends runs, and checks in progress).
    for (const row of this.d.requests.inState('uncertain')) {
      if (!uncheckedInterruption(row)) continue;
      if (this.reconciler.reconcilable(row.op)) this.reconciler.enqueue(row, 'daemon (restart)');
      // Its operation no longer declares a check: none is coming, so its result must not say one is.
      else if (row.reconcile_pending === 1) {
        const message = `its operation no longer declares a reconcile command: no check is coming. ${settleHint(row.id, false)}`;
        this.d.safely(row.id, () => this.d.lifecycle.move(row, 'uncertain', { reconcile_pending: 0, error_message: message }, { kind: 'uncertain', message }));
      }
    }
  }

  /** A run the keeper held while no daemon ran: recorded as it ended, or followed, holding its slot. */
  private resumeKept(row: RequestRow, k: Kept): void {
    if ('outcome' in k) {
      this.d.log.info(`${row.id}: ended while no daemon ran; recorded as it ended`);
      return this.finishRow(row, k.outcome);
    }
    this.d.log.info(`${row.id}: still running in the run keeper (pid ${k.handle.pid}): followed again`);
    if (row.pid === null && k.handle.pid !== null) this.d.requests.setProcesses(row.id, k.handle.pid, k.handle.marker, k.handle.since);
    this.follow(row, this.endOf(row, k.handle), k.handle);
  }

  /** What is left of a run recorded as running whose runner is gone (see Remains). */
  private remainsOf(row: RequestRow): Remains {
    try {
      return Orphan.find(row, this.watch(row.id));
    } catch (e) {
      this.d.log.error(`${row.id}: could not look for its processes: ${(e as Error).message}`);
      return null;
    }
  }

  /** A run whose runner is gone (`cause`: how), by what is left of it: its main process is watched as
   *  an orphan; what it left holds the slot until it is ended, as in a run; with nothing, uncertain. */
  private resume(row: RequestRow, remains: Remains, cause: string): void {
    if (remains === null) this.interrupted(row, false, null, cause);
    else if ('orphan' in remains) this.adopt(row, remains.orphan, cause);
    else this.hold(row.id, row.op, () => {}, remains.leftovers, (note) => this.interrupted(row, false, note, cause));
  }

  private watch(id: string): OrphanWatch {
    return { killGraceMs: this.d.settings().kill_grace_s * 1000, stillRunning: () => this.d.requests.get(id)?.state === 'running', log: this.d.log };
  }

  /** Once the host is up: the checks of what recovery left uncertain (never before the first request). */
  startReconciling(): void {
    this.reconciler.start();
  }

  /** Starts queued runs while there are free slots, honouring each operation's concurrency. */
  pump(): void {
    // The pause flag is read from the ledger, not a cache: once `dumbwaiter pause` returns, nothing new starts.
    let last: string | null = null;
    while (!this.stopping && this.running.size < this.d.settings().max_concurrent_runs && !this.d.flags.paused) {
      const row = this.nextQueued();
      if (!row || row.id === last) return; // nothing to start, or it could not start now: try again later
      last = row.id;
      this.d.safely(row.id, () => this.startRow(row));
    }
  }

  /** The next request to start: the oldest queued of each spool in turn, so that a sandbox with a long
   *  queue never holds another's requests back behind all of its own. */
  private nextQueued(): RequestRow | null {
    const spools = this.d.spools();
    const full = this.fullOps();
    for (let i = 0; i < spools.length; i++) {
      const at = (this.turn + i) % spools.length;
      const row = this.d.requests.nextQueued(full, spools[at]!);
      if (row) {
        this.turn = at + 1;
        return row;
      }
    }
    return null;
  }

  /** Terminates the running requests someone asked to cancel (from another process, or dumbwaiter.cancel),
   *  orphans included. */
  cancelRequested(): void {
    if (this.running.size === 0) return;
    for (const row of this.d.requests.cancelRequested()) this.running.get(row.id)?.terminate('cancel');
  }

  /** A clean stop: nothing new starts, checks in progress end. With `runs` 'stop', what runs (orphans
   *  too) gets `graceMs`, or until `hurry` resolves, then is terminated (and recorded as uncertain).
   *  With 'leave', it is left running, its row `running`, and nothing more is recorded here: the next
   *  start finds it as it finds the runs of a host that went away. Resolves to how many were left. */
  async stop(graceMs: number, hurry: Promise<void>, runs: 'stop' | 'leave' = 'stop'): Promise<number> {
    this.stopping = true;
    await this.reconciler.stop();
    const pending = () => Promise.all([...this.running.values()].map((r) => r.recorded));
    if (this.running.size === 0) return 0;
    if (runs === 'leave') {
      this.left = true;
      for (const r of this.running.values()) r.forget?.();
      this.d.log.info(`leaving ${this.running.size} running request(s) running: the next start picks them up`);
      return this.running.size;
    }
    this.d.log.info(`waiting up to ${graceMs / 1000} s for ${this.running.size} running request(s)`);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([pending(), hurry, new Promise<void>((r) => (grace = setTimeout(r, graceMs)))]);
    clearTimeout(grace);
    for (const r of this.running.values()) r.terminate('shutdown');
    await pending();
    return 0;
  }

  private fullOps(): string[] {
    const counts = new Map<string, number>();
    for (const r of this.running.values()) counts.set(r.op, (counts.get(r.op) ?? 0) + 1);
    const ops = this.d.allowlist().operations;
    return [...counts].filter(([op, n]) => n >= (ops.get(op)?.concurrency ?? 1)).map(([op]) => op);
  }

  private startRow(row: RequestRow): void {
    const { lifecycle } = this.d;
    const settings = this.d.settings();
    // Admitted again, just before it runs: its expiry, its key, the allowlist, a path on disk, the
    // spend, its grant or its plan may have changed since intake.
    const a = admit(admissionOf(row, this.d.keys.get(row.key_id)), {
      allowlist: allowlistFor(this.d.allowlist(), row.spool),
      settings,
      grants: this.d.grants,
      requests: this.d.requests,
      maxRequestAgeMs: settings.max_request_age_s * 1000,
      now: new Date(),
    });
    if (a.kind === 'refused') return void lifecycle.refuse(row, a.state, a.code, a.message);
    if (a.kind === 'waits') {
      const back = merged(approvedByFields(null), { approval_json: JSON.stringify(a.approval), plan_json: JSON.stringify(a.plan), decided_at: null, ceiling_override: 0 });
      return void lifecycle.move(row, 'awaiting_approval', back, { kind: 'approval_requested', message: `back to approval before starting: ${a.why}` });
    }
    if (a.kind !== 'runs') throw new Error(`${row.id} (${row.op}) cannot be queued to run (runner.ts)`);
    const plan = a.plan;
    if (a.grant) this.d.grants.use(a.grant.id);
    if (cwdMissing(plan)) return void lifecycle.refuse(row, 'failed', 'spawn_failed', `the operation's working folder ${plan.cwd} does not exist`);

    const started = lifecycle.start(row, {
      started_at: new Date().toISOString(),
      plan_json: JSON.stringify(plan),
      cost: plan.cost,
      // Approved by a grant only now: recorded as its approval.
      ...(a.by && !approvedByOf(row) ? merged(approvedByFields(a.by), { decided_at: new Date().toISOString() }) : {}),
    });
    if (!started) return;
    // Inside a group (the runs that ended, endTogether) the start shares its commit, and the run is
    // launched once that is made: the slot is held from here, as reserve() holds one.
    this.holdSlot(started.id, started.op);
    lifecycle.afterCommit(
      started.id,
      () => {
        faultPoint('after_mark_running');
        this.launch(started, plan);
      },
      () => this.release(started.id),
    );
  }

  /**
   * A slot for a new request that intake starts in its own commit (Lifecycle.enter's startNow), held
   * from now until launch() or release(): given when it could start now as startRow would start it
   * (intake's gate has just passed) and nothing queued that could start waits before it, in any spool.
   */
  reserve(id: string, op: string, spool: string, plan: RunPlan): boolean {
    if (this.stopping || this.d.flags.paused || this.running.size >= this.d.settings().max_concurrent_runs) return false;
    const full = this.fullOps();
    const spools = this.d.spools();
    if (full.includes(op) || cwdMissing(plan) || !spools.includes(spool) || spools.some((s) => this.d.requests.nextQueued(full, s))) return false;
    this.holdSlot(id, op);
    this.turn = spools.indexOf(spool) + 1; // as nextQueued() would have taken it: the other spools go next
    return true;
  }

  /** A slot held for a run about to be launched: a cancel meanwhile is seen again once it runs. */
  private holdSlot(id: string, op: string): void {
    this.running.set(id, { op, terminate: () => {}, recorded: Promise.resolve() });
  }

  /** A reserved slot not used: the request did not start (paused or revoked by its commit), or that commit failed. */
  release(id: string): void {
    this.running.delete(id);
  }

  /** Runs `started`, recorded as running (by startRow, or by intake in a reserved slot). The slot is
   *  held from now on, while the keeper starts the run: a cancel or a stop meanwhile reaches it once
   *  it has its process. */
  launch(started: RequestRow, plan: RunPlan): void {
    this.running.delete(started.id); // a reserved slot: held by the run from here (follow)
    let handle: RunHandle | null = null;
    let stopWith: string | null = null;
    const ended = this.run(started, plan, this.d.settings().kill_grace_s * 1000, (h) => {
      handle = h;
      if (stopWith !== null) h.terminate(stopWith);
    });
    this.follow(started, ended, { terminate: (r) => (handle ? handle.terminate(r) : (stopWith ??= r)) });
  }

  /** Holds the slot of `row`'s run until `ended`, then records how it ended. */
  private follow(row: RequestRow, ended: Promise<RunEnd>, run: Pick<RunHandle, 'terminate'>): void {
    this.hold(row.id, row.op, (r) => run.terminate(r), ended, (end) => ('outcome' in end ? this.finishRow(row, end.outcome) : this.resume(end.row, end.remains, KEEPER_LOST)), { together: true });
  }

  /** Starts the run of `row` (recorded as running) and waits for its end; `onHandle` once it has its
   *  process. Its outcome; or, when the keeper died with it, what is left of it. */
  private async run(row: RequestRow, plan: RunPlan, killGraceMs: number, onHandle: (h: RunHandle) => void): Promise<RunEnd> {
    let handle: RunHandle;
    try {
      const dirs = this.d.spoolDirs(row.spool);
      if (!dirs) throw new Error(`spool "${row.spool}" cannot be written now`);
      handle = await this.d.starter.start(row.id, plan, makeLiveLog(this.d, dirs, row), killGraceMs);
    } catch (e) {
      // It may have started: no pid to look for, so it ends uncertain, as a run cut by a host crash.
      if (e instanceof KeeperLost) return { row, remains: null };
      return { outcome: spawnFailure(plan, e as Error) };
    }
    noteStarted(this.d, row, plan, handle);
    this.d.log.info(`${row.id}: started ${row.op} (pid ${handle.pid})`);
    onHandle(handle);
    return this.endOf(row, handle);
  }

  /** How a started run ended: its outcome, or, when the keeper died with it, what is left of it. */
  private async endOf(row: RequestRow, handle: RunHandle): Promise<RunEnd> {
    try {
      return { outcome: await handle.done };
    } catch (e) {
      if (!(e instanceof KeeperLost)) throw e;
      if (this.left) return { row, remains: null }; // the stop let the keeper go with it: not looked for, nor watched
      this.d.log.warn(`${row.id}: ${e.message}: looking for its processes`);
      const now = this.d.requests.get(row.id) ?? row;
      return { row: now, remains: this.remainsOf(now) };
    }
  }

  /** A slot held by `id` until `ended`, whose end `finish` records; then what waits may start.
   *  `together`: recorded with the other runs that end in the same turn of the event loop (endTogether).
   *  `forget`: how a stop that leaves runs running stops watching it (an orphan's watch). */
  private hold<T>(id: string, op: string, terminate: (reason: string) => void, ended: Promise<T>, finish: (end: T) => void, how: { together?: boolean; forget?: () => void } = {}): void {
    const { together = false, forget } = how;
    const recorded = ended.then((end) => {
      if (this.left) return;
      if (together) return new Promise<void>((done) => this.endTogether({ id, record: () => finish(end), done }));
      this.running.delete(id);
      this.recordEnd({ id, record: () => finish(end) });
      this.pump();
    });
    this.running.set(id, { op, terminate, recorded, ...(forget ? { forget } : {}) });
  }

  /** Runs that end in the same turn of the event loop are recorded in one commit with the starts of
   *  what takes their slots (group commit: one fsync for all of a burst's ends and starts), once that
   *  turn's I/O has been seen. */
  private endTogether(end: { id: string; record: () => void; done: () => void }): void {
    this.ending.push(end);
    if (this.ending.length > 1) return;
    setImmediate(() => {
      const ends = this.ending.splice(0);
      for (const e of ends) this.running.delete(e.id);
      let made = false;
      this.d.safely('the runs that ended', () => {
        this.d.lifecycle.group(() => {
          ends.forEach((e) => this.d.safely(e.id, e.record));
          this.pump();
        });
        made = true;
      });
      ends.forEach((e) => e.done());
      if (made) return;
      // The commit failed (a full disk): each end in its own, kept for later if it fails again; the
      // starts were undone with the commit: each in its own, then.
      ends.forEach((e) => this.recordEnd(e));
      this.pump();
    });
  }

  /** Records a run's end; one the disk refuses is kept, and recorded by recordLeftEnds(). */
  private recordEnd(e: { id: string; record: () => void }): void {
    let refused = false;
    this.d.safely(e.id, () => {
      try {
        e.record();
      } catch (err) {
        refused = writeFailureCode(err) !== null;
        throw err;
      }
    });
    if (refused) this.leftEnds.push(e);
  }

  /** The ends a full disk kept out of the ledger, tried again (the daemon: once there is room). */
  recordLeftEnds(): void {
    if (!this.leftEnds.length) return;
    this.leftEnds.splice(0).forEach((e) => this.recordEnd(e));
    this.pump();
  }

  /** A run found still running at start: watched, holding its slot, until it ends or is ended. */
  private adopt(row: RequestRow, orphan: Orphan, cause: string): void {
    const message =
      `${cause}, and its processes (process group ${row.pid}) still run: the host watches them ` +
      `and records it once they end; it will not be re-run (cancel it to end them: dumbwaiter cancel ${row.id})`;
    this.d.lifecycle.move(row, 'running', { orphaned: 1 }, { kind: 'orphaned', message, details: { pid: row.pid } });
    this.d.log.warn(`${row.id}: orphaned: ${message}`);
    this.hold(row.id, row.op, (r) => orphan.terminate(r), orphan.done, (end) => this.finishOrphan(row, end, cause), { forget: () => orphan.forget() });
  }

  /** An orphan's end: by itself, uncertain (and checked); cancelled; stopped with the host, uncertain;
   *  or after a human's forced verdict (already recorded, maybe while a cancel or a stop ended it), only noted. */
  private finishOrphan(row: RequestRow, end: OrphanEnd, cause: string): void {
    const ended = end.note ? ` (${end.note})` : '';
    if (end.by === 'itself') return this.interrupted(row, true, end.note, cause);
    if (end.reason === 'resolved') return this.orphanEnded(row.id, `its processes were ended${ended}`);
    const finished_at = new Date().toISOString();
    const duration_ms = row.started_at ? Date.now() - Date.parse(row.started_at) : null;
    const cancelled = end.reason === 'cancel';
    const message = cancelled
      ? `an orphaned run cancelled: its processes were ended${ended}`
      : `an orphaned run terminated because the host was stopping${ended}; it may or may not have taken effect. ${settleHint(row.id, this.reconciler.reconcilable(row.op))}`;
    const next = this.d.lifecycle.move(
      row,
      cancelled ? 'cancelled' : 'uncertain',
      { orphaned: 0, finished_at, duration_ms, error_code: cancelled ? null : 'interrupted', error_message: cancelled ? null : message },
      { kind: 'finished', message: `${row.op} ${cancelled ? 'cancelled' : 'uncertain'}: ${message}`, details: { state: cancelled ? 'cancelled' : 'uncertain', orphaned: true } },
      ['running'],
    );
    if (next) this.d.log.info(`${row.id}: ${next.state} (orphaned)`);
    else this.orphanEnded(row.id, `its processes were ended${ended}`);
  }

  /** The processes of an orphan given a human's verdict have ended (`what`: how): recorded, and the
   *  request no longer has processes to end (`orphaned` 0, in the same commit). */
  private orphanEnded(id: string, what: string): void {
    const row = this.d.requests.get(id);
    if (!row || row.orphaned !== 1 || row.state === 'running') return;
    const message = `orphaned run resolved as ${row.state} by a human while it ran: ${what}`;
    if (this.d.lifecycle.move(row, row.state, { orphaned: 0 }, { kind: 'orphan_ended', message })) this.d.log.info(`${id}: ${message}`);
  }

  /** A run cut short by a stopped host whose main process is gone (`left`: what ending what it left
   *  behind found): uncertain, then checked where its operation declares a reconcile command (the
   *  move comes first, so a crash during the check leaves it uncertain). */
  private interrupted(row: RequestRow, orphanEnded: boolean, left: string | null, cause: string): void {
    const reconcilable = this.reconciler.reconcilable(row.op);
    const group = row.pid ? ` (process group ${row.pid})` : '';
    let how = group;
    if (orphanEnded) how = left ? `, and its main process (pid ${row.pid}) outlived it and has ended since; ${left}` : `, and its processes${group} outlived it and have ended since`;
    else if (left) how = `${group}; its main process had ended, and ${left}`;
    const message = `${cause}${how}; it may or may not have taken effect and will not be re-run. ${settleHint(row.id, reconcilable)}`;
    const next = this.d.lifecycle.move(row, 'uncertain', { error_code: 'interrupted', error_message: message, orphaned: 0, reconcile_pending: reconcilable ? 1 : 0 }, { kind: 'uncertain', message }, ['running']);
    if (!next) return this.orphanEnded(row.id, `its processes have ended${left ? ` (${left})` : ''}`);
    this.d.log.warn(`${row.id}: uncertain: ${message}`);
    if (reconcilable) this.reconciler.enqueue(next, orphanEnded ? 'daemon (orphan ended)' : 'daemon (restart)');
  }

  private finishRow(row: RequestRow, o: RunOutcome): void {
    faultPoint('after_exit_before_result');
    const { state, patch, note, how } = runEnd(row, o, this.reconciler.reconcilable(row.op));
    if (!this.d.lifecycle.move(row, state, patch, note, ['running'])) return this.d.starter.forget(row.id); // a human's verdict came first
    this.d.log.info(`${row.id}: ${state} (${how})`);
    this.d.lifecycle.afterCommit(row.id, () => {
      this.d.starter.forget(row.id); // recorded: the keeper lets its end go
      faultPoint('after_result'); // recorded, and its result written
    });
  }
}
