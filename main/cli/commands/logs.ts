// `dumbwaiter logs ID [--follow] [--raw]`: a run's output. A finished run's is the host's record of it
// (the ledger's stdout and stderr, to this command's stdout and stderr); a running one's is its live
// log, read safely from the spool (spool/liveLog.ts), and with --follow read on as it grows until the
// run ends (a short poll of the log and the ledger's state, as the app does: no event says a file grew).
//
// The output is the host-run program's, but the sandbox's arguments can steer what it prints, and the
// live log sits in the spool, where the sandbox can write: so control characters are escaped by
// default (shared/text/visible.ts: an escape sequence cannot redraw the terminal), line feeds kept;
// --raw prints the bytes as they are, for a pipe or a file. Once a followed run ends, what was shown
// is checked against the size and SHA-256 the host recorded of its log, and a difference is said.
import { createHash } from 'node:crypto';
import type { Host } from '../../core/host/host';
import { UserError } from '../../core/errors';
import type { RequestRow } from '../../core/ledger/requests';
import { visibleLines } from '../../../shared/text/visible';
import { warn } from '../output';
import { onInterrupt, type Interrupt } from './interrupt';

export const LOGS_USAGE = 'usage: dumbwaiter logs ID [--follow] [--raw]';

export const LOGS_OPTIONS = {
  follow: { type: 'boolean', short: 'f', default: false },
  raw: { type: 'boolean', default: false },
} as const;

/** How often a followed run's log and state are looked at (the app's live view asks every 500 ms). */
const POLL_MS = 250;

/** Not started yet: --follow waits for it to start (or to end without running). */
const BEFORE_RUN = new Set<RequestRow['state']>(['queued', 'awaiting_approval']);

export async function printLogs(svc: Host, id: string, o: { follow: boolean; raw: boolean }): Promise<void> {
  const out = (stream: NodeJS.WriteStream, text: string) => text && stream.write(o.raw ? text : visibleLines(text));
  const get = () => {
    const row = svc.requests.get(id);
    if (!row) throw new UserError(`no request ${JSON.stringify(id)} (dumbwaiter requests lists them)`);
    return row;
  };
  const record = (row: RequestRow) => {
    out(process.stdout, row.stdout);
    out(process.stderr, row.stderr);
  };
  let row = get();
  if (!o.follow) {
    if (BEFORE_RUN.has(row.state)) return warn(`(${id} has not run yet: it is ${row.state}; --follow waits for it and prints its output)`);
    if (row.state !== 'running') return record(row);
    out(process.stdout, svc.requests.liveOutput(id, 0).text);
    return warn(`(${id} is still running: --follow prints the rest as it comes)`);
  }

  const interrupt = onInterrupt();
  try {
    if (BEFORE_RUN.has(row.state)) warn(`(${id} has not run yet: it is ${row.state}; its output follows once it runs)`);
    while (BEFORE_RUN.has(row.state) && !interrupt.stopped) {
      await interrupt.pause(POLL_MS);
      row = get();
    }
    if (interrupt.stopped) return;
    // Ended before it ran, or before we looked: no live log to follow, the host's record.
    if (row.state !== 'running') record(row);
    else {
      const ended = await followLive(svc, row, interrupt, (text) => out(process.stdout, text));
      if (!ended) return;
      row = ended;
      // No live log at all (it could not be made): the host's record is all there is.
      if (row.log_bytes === null) record(row);
    }
    warn(`(${id} ended: ${row.state}${row.exit_code !== null ? `, exit code ${row.exit_code}` : row.error_code ? `, ${row.error_code}` : ''})`);
  } finally {
    interrupt.release();
  }
}

/** Prints a running run's live log as it grows, until the run ends (its final row) or Ctrl-C (null).
 *  Then checks what it printed against the size and SHA-256 the host recorded of the log. */
async function followLive(svc: Host, running: RequestRow, interrupt: Interrupt, print: (text: string) => void): Promise<RequestRow | null> {
  const id = running.id;
  const seen = createHash('sha256');
  let row = running;
  let from = 0;
  let bytes = 0;
  let skipped = 0;
  const readOn = () => {
    for (;;) {
      const chunk = svc.requests.liveOutput(id, from);
      if (chunk.skipped) {
        skipped += chunk.skipped;
        warn(`[... ${chunk.skipped} bytes skipped ...]`);
      }
      if (chunk.next === from) return;
      from = chunk.next;
      const b = Buffer.from(chunk.text);
      seen.update(b);
      bytes += b.length;
      print(chunk.text);
    }
  };
  while (row.state === 'running') {
    readOn();
    await interrupt.pause(POLL_MS);
    if (interrupt.stopped) return null;
    row = svc.requests.get(id) ?? row;
  }
  readOn(); // what it wrote between the last look and its end
  if (row.log_sha256 !== null && (skipped > 0 || bytes !== row.log_bytes || seen.digest('hex') !== row.log_sha256)) {
    warn(`(the output above is not all the host recorded of this run: the log in the spool was changed, or part was skipped; dumbwaiter logs ${id} prints the record)`);
  }
  return row;
}
