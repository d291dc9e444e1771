// The host's state at a glance (`dumbwaiter status`, the app's status.get, spend.get and its tray):
// the daemon, the spools, the allowlist it serves, the requests that need a person, the spend.
import { spawning } from '../exec/nativeSpawn';
import { readHeartbeat } from '../spool/hostFiles';
import { spoolPaths } from '../spool/layout';
import { isLocked, readHolder, type LockHolder } from '../daemon/lock';
import { reconcileOf, type RequestRow } from '../ledger/requests';
import { reserveProblem } from '../ledger/room';
import { spendReport, type CeilingReport } from '../policy/spend';
import { disabledOf, type Operation } from '../allowlist/types';
import type { Grant } from '../ledger/grants';
import type { SpoolInfo, StatusView } from '../../../shared/ipc/views';
import type { ReconcileAttempt, RequestState } from '../../../shared/protocol/types';
import type { HostContext } from './context';
import type { Spools } from './spools';
import type { PendingApproval, Verdicts } from './verdicts';

export interface StatusReport {
  home: string;
  /** The folder of the spool commands act on (--spool, else `default`, else the only one). */
  spool: string | null;
  spools: SpoolInfo[];
  /** `heartbeat_problem`: why host.json could not be read (a FIFO put there, say), when it could not. */
  daemon: { running: boolean; holder: LockHolder | null; heartbeat_at: string | null; heartbeat_problem: string | null };
  /** Why a spool is not being served (each named): the running daemon's word (it stopped touching
   *  it), else this process's own check of the folder. Null when every spool is fine. */
  spool_problem: string | null;
  /** `disabled`: operations valid as written that cannot run as the disk is now (a link leads a
   *  folder of theirs into a spool or the home), each with why; the catalog leaves them out. */
  allowlist: StatusView['allowlist'];
  requests: Record<RequestState, number>;
  /** `orphaned`: it outlived a host that stopped, and the daemon watches it (a cancel ends it). */
  running: (Pick<RequestRow, 'id' | 'op' | 'key_id' | 'spool' | 'started_at' | 'pid'> & { orphaned: boolean })[];
  /** `reconcile`: the last check of its effect; `reconcilable`: its operation declares a reconcile command. */
  uncertain: (Pick<RequestRow, 'id' | 'op' | 'key_id' | 'spool' | 'started_at' | 'error_message'> & { reconcile: ReconcileAttempt | null; reconcilable: boolean })[];
  keys: { active: number; revoked: number };
  paused: boolean;
  approvals: PendingApproval[];
  grants: Grant[];
  spend: CeilingReport[];
  /** How runs start on this machine: posix_spawn through the native addon (Linux, built at install),
   *  else Node's spawn, and why (the same install and kernel as the daemon's run keeper). */
  spawning: { kind: 'posix_spawn' | 'node'; why: string };
}

/** The operations status shows, by name: where each is served, and whether it can be reconciled. */
type ServedOps = Map<string, Pick<Operation, 'name' | 'spools'> & { reconcilable: boolean }>;

export class Status {
  constructor(
    private readonly ctx: HostContext,
    private readonly spools: Spools,
    private readonly verdicts: Verdicts,
  ) {}

  /** What the running daemon serves, as it says while it holds the lock; else the file as a start
   *  would load it. */
  private allowlist(holder: LockHolder | null): { allowlist: StatusReport['allowlist']; ops: ServedOps } {
    const said = holder ? this.ctx.core.flags.allowlist(holder.pid) : null;
    if (said) {
      const ops: ServedOps = new Map(said.operations.map((op) => [op.name, op]));
      return { ops, allowlist: { ok: said.ok, operations: [...ops.keys()], error: said.error, disabled: said.disabled, serving: said.serving, since: said.since } };
    }
    const file = this.ctx.allowlistFile();
    if (!file.ok) return { ops: new Map(), allowlist: { ok: false, operations: [], error: file.reason, disabled: [], serving: null, since: null } };
    const ops: ServedOps = new Map([...file.allowlist.operations.values()].map((op) => [op.name, { ...op, reconcilable: op.reconcile !== null }]));
    return { ops, allowlist: { ok: true, operations: [...ops.keys()], error: null, disabled: disabledOf(file.allowlist), serving: null, since: null } };
  }

  report(): StatusReport {
    const { home, requests, keys: keyStore, results, flags, grants } = this.ctx.core;
    const counts = requests.countByState() as Record<RequestState, number>;
    const running = isLocked(home.lock);
    const holder = running ? readHolder(home.lockInfo) : null;
    const { allowlist, ops } = this.allowlist(holder);
    const commanded = this.ctx.spool;
    const shown = commanded ?? this.ctx.settings.spools[0] ?? null;
    const pinned = shown ? results.reach(shown.name) : null;
    const heartbeat = shown ? readHeartbeat((pinned?.paths ?? spoolPaths(shown.dir)).hostJson) : { heartbeat_at: null, problem: null };
    const keys = keyStore.list();
    const spools = this.spools.list(running, ops);
    const problems = spools.filter((s) => s.problem).map((s) => (spools.length === 1 ? s.problem! : `spool ${s.name}: ${s.problem}`));
    // Measured here, not read from the ledger: a full disk is what keeps the daemon from writing it there.
    const room = reserveProblem(home.root);
    if (room) problems.unshift(room);
    return {
      home: home.root,
      spool: commanded?.dir ?? null,
      spools,
      daemon: { running, holder, heartbeat_at: heartbeat.heartbeat_at, heartbeat_problem: heartbeat.problem },
      spool_problem: problems.length ? problems.join('\n') : null,
      spawning: { kind: spawning().kind, why: spawning().why },
      allowlist,
      requests: counts,
      running: requests.inState('running').map(({ id, op, key_id, spool, started_at, pid, orphaned }) => ({ id, op, key_id, spool, started_at, pid, orphaned: orphaned === 1 })),
      uncertain: requests.inState('uncertain').map((r) => ({
        id: r.id,
        op: r.op,
        key_id: r.key_id,
        spool: r.spool,
        started_at: r.started_at,
        error_message: r.error_message,
        reconcile: reconcileOf(r),
        reconcilable: ops.get(r.op)?.reconcilable ?? false,
      })),
      keys: { active: keys.filter((k) => !k.revoked_at).length, revoked: keys.filter((k) => k.revoked_at).length },
      paused: flags.paused,
      approvals: this.verdicts.pending(),
      grants: grants.list(),
      spend: spendReport(
        this.ctx.core.requests,
        this.ctx.settings.ceilings,
        keys.filter((k) => !k.revoked_at).map((k) => k.key_id),
      ),
    };
  }

  /** The status as the app shows it (what `status.get` answers, and what the tray is drawn from). */
  view(): StatusView {
    const { daemon, ...rest } = this.report();
    return { ...rest, daemon: { running: daemon.running, heartbeat_at: daemon.heartbeat_at } };
  }
}
