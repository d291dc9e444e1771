// Turns successive status snapshots into the events the desktop app shows: the state changed, a new
// request waits for approval. Pure bookkeeping: the app polls, this compares. (Finished runs come from
// the ledger, not from snapshots: a run can start and end between two of them.)
import type { IpcEvents } from '../../../shared/ipc/contract';
import type { StatusView } from '../../../shared/ipc/views';

export interface StatusChanges {
  changed: boolean;
  newApprovals: IpcEvents['approval.requested'][];
}

export class StatusWatcher {
  private last = '';
  private approvals = new Set<string>();
  private first = true;

  update(s: StatusView): StatusChanges {
    // The heartbeats (the host's, each spool's) move every few seconds by themselves: only a change of
    // anything else is a change.
    const json = JSON.stringify({ ...s, daemon: { ...s.daemon, heartbeat_at: null }, spools: s.spools.map((x) => ({ ...x, heartbeat_at: null })) });
    const changed = json !== this.last;
    this.last = json;
    const newApprovals = this.first ? [] : s.approvals.filter((a) => !this.approvals.has(a.id));
    this.approvals = new Set(s.approvals.map((a) => a.id));
    this.first = false;
    return { changed, newApprovals };
  }
}
