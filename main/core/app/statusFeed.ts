// The app's live feed: polls the host's status and sends the contract's events for what changed.
// The desktop app sends them to its windows; the renderer's tests to their page.
import type { EventName, IpcEvents } from '../../../shared/ipc/contract';
import type { StatusView } from '../../../shared/ipc/views';
import { statusView } from '../ipc/handlers';
import type { HostService } from '../service';
import { StatusWatcher, type StatusChanges } from './statusWatcher';
import { nowIso } from '../time';

export type EmitEvent = <E extends EventName>(event: E, payload: IpcEvents[E]) => void;

export class StatusFeed {
  private readonly watcher = new StatusWatcher();
  /** The newest update of a finished run reported so far, and the runs reported at exactly that time. */
  private mark: string | null = null;
  private atMark = new Set<string>();

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
    if (this.mark === null) {
      this.mark = nowIso();
      return [];
    }
    const rows = this.svc.requests.endedRunsSince(this.mark).filter((r) => !(r.updated_at === this.mark && this.atMark.has(r.id)));
    const last = rows.at(-1)?.updated_at;
    if (last !== undefined && last !== this.mark) {
      this.mark = last;
      this.atMark.clear();
    }
    for (const r of rows) if (r.updated_at === this.mark) this.atMark.add(r.id);
    return rows.map(({ id, op, state }) => ({ id, op, state }));
  }
}
