// Turns successive status snapshots into the events the desktop app shows: the state changed, a new
// request waits for approval, a run finished. Pure bookkeeping: the app polls, this compares.
import type { IpcEvents } from '../../../shared/ipc/contract';
import type { StatusView } from '../../../shared/ipc/views';
import type { RecentRun } from './trayState';

export interface StatusChanges {
  changed: boolean;
  newApprovals: IpcEvents['approval.requested'][];
  finished: IpcEvents['run.finished'][];
}

export class StatusWatcher {
  private last = '';
  private approvals = new Set<string>();
  private running = new Map<string, string>();
  private first = true;

  /** `finalState`: the state of a request that left `running` (looked up by the caller). */
  update(s: StatusView, finalState: (id: string) => RecentRun | null): StatusChanges {
    // The heartbeat moves every few seconds by itself: only a change of anything else is a change.
    const json = JSON.stringify({ ...s, daemon: { ...s.daemon, heartbeat_at: null } });
    const changed = json !== this.last;
    this.last = json;
    const newApprovals = this.first ? [] : s.approvals.filter((a) => !this.approvals.has(a.id));
    this.approvals = new Set(s.approvals.map((a) => a.id));
    const nowRunning = new Map(s.running.map((r) => [r.id, r.op]));
    const finished: StatusChanges['finished'] = [];
    for (const id of this.running.keys()) {
      if (nowRunning.has(id)) continue;
      const r = finalState(id);
      if (r) finished.push({ id: r.id, op: r.op, state: r.state });
    }
    this.running = nowRunning;
    this.first = false;
    return { changed, newApprovals, finished };
  }
}
