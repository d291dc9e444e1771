// The app's live feed: polls the host's status and sends the contract's events for what changed.
// The desktop app sends them to its windows; the renderer's tests to their page.
import type { EventName, IpcEvents } from '../../../shared/ipc/contract';
import type { StatusView } from '../../../shared/ipc/views';
import { statusView } from '../ipc/handlers';
import type { HostService } from '../service';
import { StatusWatcher, type StatusChanges } from './statusWatcher';

export type EmitEvent = <E extends EventName>(event: E, payload: IpcEvents[E]) => void;

export class StatusFeed {
  private readonly watcher = new StatusWatcher();
  /** The audit seq read up to: runs that ended after it are news. */
  private seq: number | null = null;

  constructor(
    private readonly svc: HostService,
    private readonly emit: EmitEvent,
  ) {}

  poll(): { status: StatusView; changes: StatusChanges & { finished: IpcEvents['run.finished'][] } } {
    const status = statusView(this.svc);
    const changes = { ...this.watcher.update(status), finished: this.finishedRuns() };
    if (changes.changed) this.emit('state.changed', status);
    for (const f of changes.finished) this.emit('run.finished', f);
    for (const p of changes.newApprovals) this.emit('approval.requested', p);
    return { status, changes };
  }

  /** Runs that ended since the last poll (from the first poll on), each once. */
  private finishedRuns(): IpcEvents['run.finished'][] {
    if (this.seq === null) {
      this.seq = this.svc.lastAuditSeq();
      return [];
    }
    const rows = this.svc.endedRunsAfter(this.seq);
    this.seq = rows.at(-1)?.seq ?? this.seq;
    return rows.map(({ id, op, spool, state }) => ({ id, op, spool, state }));
  }
}
