// The app's live feed: recomputes the host's status when told that something changed, and sends the
// contract's events for what did. Pushed, not polled: the daemon in the app's process says after each
// change (Daemon.onChange), and where the daemon runs elsewhere the home folder's watch does
// (followHome). The desktop app sends the events to its windows; the renderer's tests to their page.
import path from 'node:path';
import type { EventName, IpcEvents } from '../../../shared/ipc/contract';
import type { StatusView } from '../../../shared/ipc/views';
import type { Host } from '../host/host';
import type { HomePaths } from '../home';
import { scopedLogger } from '../log';
import { watchFiles } from '../wake';
import { StatusWatcher, type StatusChanges } from './statusWatcher';

export type EmitEvent = <E extends EventName>(event: E, payload: IpcEvents[E]) => void;

export interface FeedPass {
  status: StatusView;
  changes: StatusChanges & { finished: IpcEvents['run.finished'][] };
}

/** A burst of changes (a daemon's commits as requests pour in) makes at most one pass per this long. */
const PASS_GAP_MS = 20;
/** How long after daemon.json changed the lock is looked at again (see followHome). */
const LOCK_SETTLE_MS = 500;
const log = scopedLogger('status feed');

export class StatusFeed {
  private readonly watcher = new StatusWatcher();
  /** The audit seq read up to: runs that ended after it are news. */
  private seq: number | null = null;
  private pending: NodeJS.Timeout | null = null;
  private lastPass = -Infinity;
  private closed = false;

  constructor(
    private readonly host: Host,
    private readonly emit: EmitEvent,
    /** After each pass made on a change (the tray, notifications). */
    private readonly onPass: (pass: FeedPass) => void = () => {},
  ) {}

  /** Something the status shows may have changed: one pass soon, however many changes come meanwhile. */
  changed(): void {
    if (this.pending || this.closed) return;
    const wait = Math.max(0, this.lastPass + PASS_GAP_MS - performance.now());
    this.pending = setTimeout(() => {
      this.pending = null;
      try {
        this.onPass(this.poll());
      } catch (e) {
        log.error(`status: ${(e as Error).stack ?? String(e)}`); // the next change makes another pass
      }
    }, wait);
  }

  /** One pass now: the status, and the events for what changed since the last. */
  poll(): FeedPass {
    this.lastPass = performance.now();
    const status = this.host.status.view();
    const changes = { ...this.watcher.update(status), finished: this.finishedRuns() };
    if (changes.changed) this.emit('state.changed', status);
    for (const f of changes.finished) this.emit('run.finished', f);
    for (const p of changes.newApprovals) this.emit('approval.requested', p);
    return { status, changes };
  }

  /** No pass from now on (a pending one is dropped). */
  close(): void {
    this.closed = true;
    if (this.pending) clearTimeout(this.pending);
    this.pending = null;
  }

  /** Runs that ended since the last pass (from the first pass on), each once. */
  private finishedRuns(): IpcEvents['run.finished'][] {
    if (this.seq === null) {
      this.seq = this.host.audit.lastSeq();
      return [];
    }
    const rows = this.host.requests.endedRunsAfter(this.seq);
    this.seq = rows.at(-1)?.seq ?? this.seq;
    return rows.map(({ id, op, spool, state }) => ({ id, op, spool, state }));
  }
}

/**
 * Where the daemon runs in another process (the command line's), what it changes is learnt of from
 * the home folder's watch: its ledger commits write the ledger's write-ahead log, other processes touch
 * the wake, it writes daemon.json (the lock's holder) at its start and removes it at its stop, and the
 * settings and the allowlist are files there too. Its lock goes a moment after its daemon.json (the
 * kernel's lock says nothing when it goes): one more pass then. Null when the folder cannot be watched
 * (said in the log): the caller's rare check is then all there is.
 */
export function followHome(home: HomePaths, changed: () => void): { close(): void } | null {
  const holder = path.basename(home.lockInfo);
  const names = [`${path.basename(home.ledger)}-wal`, path.basename(home.wake), holder, path.basename(home.settings), path.basename(home.allowlist)];
  let settle: NodeJS.Timeout | null = null;
  const w = watchFiles(
    home.root,
    names,
    (name) => {
      changed();
      if (name !== holder && name !== null) return;
      if (settle) clearTimeout(settle);
      settle = setTimeout(changed, LOCK_SETTLE_MS);
    },
    (e) => log.warn(`watching ${home.root}: ${String(e)} (the app's view is refreshed only now and then)`),
  );
  return w && { close: () => (w.close(), settle && clearTimeout(settle)) };
}
