// What a person reads of requests (`dumbwaiter requests|show|audit`, the app's requests.get/list/output
// and audit.search): the ledger's rows, a run's live output, and the audit log. Reads only.
import { readLiveLog, type LiveLogChunk } from '../spool/liveLog';
import type { AuditLog } from '../ledger/audit';
import type { EndedRun, RequestFilter, RequestRow, Requests } from '../ledger/requests';
import type { HostContext } from './context';

/** The audit log as the faces read it: its search, and where it is now. Only the host's own calls record. */
export type AuditReads = Pick<AuditLog, 'search' | 'lastSeq'>;

export class RequestReads {
  constructor(private readonly ctx: HostContext) {}

  /** A request as the ledger has it now, or null. */
  get(id: string): RequestRow | null {
    return this.ctx.core.requests.get(id);
  }

  list(f: RequestFilter = {}): ReturnType<Requests['list']> {
    return this.ctx.core.requests.list(f);
  }

  /** Runs that reached a final state after audit entry `seq`, oldest first (the app's notifications). */
  endedRunsAfter(seq: number): EndedRun[] {
    return this.ctx.core.requests.endedRunsAfter(seq);
  }

  /** The host's handle of the request that `wireId` names in `spool` (a plan and its steps name
   *  requests as their sandbox does), or `wireId` when there is none. */
  handleIn(spool: string, wireId: string): string {
    return this.ctx.core.requests.bound(spool, wireId)?.id ?? wireId;
  }

  /** New output of a running (or finished, while its log is kept) request, from byte `from`. */
  liveOutput(id: string, from: number): LiveLogChunk {
    const row = this.get(id);
    const pinned = row ? this.ctx.core.results.reach(row.spool) : null;
    return row && pinned ? readLiveLog(pinned.paths.results, row.wire_id, from) : { text: '', next: from, skipped: 0 };
  }
}
