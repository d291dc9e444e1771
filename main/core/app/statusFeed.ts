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

  constructor(
    private readonly svc: HostService,
    private readonly emit: EmitEvent,
  ) {}

  poll(): { status: StatusView; changes: StatusChanges } {
    const status = statusView(this.svc);
    const changes = this.watcher.update(status, (id) => {
      const r = this.svc.requests.get(id);
      return r ? { id: r.id, op: r.op, state: r.state } : null;
    });
    if (changes.changed) this.emit('state.changed', status);
    for (const f of changes.finished) this.emit('run.finished', f);
    for (const p of changes.newApprovals) this.emit('approval.requested', p);
    return { status, changes };
  }
}
