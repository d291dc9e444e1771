// A run's live log, results/<id>.log, made by the daemon itself just before the run starts. The
// sandbox chooses request ids, so it can put anything at that name beforehand: a symlink to a host
// file, a FIFO, a folder (one of mode 000), its own text. Whatever is there is moved to quarantine and
// recorded, and the log is created anew through the pinned results folder; the run writes to that
// file alone (exec/sharedFile.ts), whatever is later renamed or put at its name.
import { lstatSync } from 'node:fs';
import path from 'node:path';
import type { AuditLog } from '../ledger/audit';
import type { RequestRow } from '../ledger/requests';
import type { Logger } from '../log';
import { makeShared, TAKEN, type HeldFile } from '../exec/sharedFile';
import { quarantine } from './claim';
import { logPath } from './results';
import { kindReason } from './safeRead';
import type { SpoolPaths } from './layout';

/** Entries moved away before the log is given up on (the sandbox planting again and again). */
const TRIES = 3;

/** The live log of `row`'s run, made anew in `spool`'s results folder; null when it cannot be made (the
 *  run then goes on without a log, and its result says so). */
export function makeLiveLog(d: { audit: AuditLog; log: Logger }, spool: SpoolPaths, row: RequestRow): HeldFile | null {
  const name = `${row.id}.log`;
  const file = logPath(spool.results, row.id);
  for (let tries = 0; ; tries++) {
    const made = makeShared(file);
    if (made !== TAKEN) {
      if (made === null) d.log.warn(`${row.id}: could not create results/${name}: the run has no live log`);
      return made;
    }
    if (tries === TRIES || !moveAway(d, spool, file, name, row)) {
      d.log.warn(`${row.id}: results/${name} could not be cleared for the run: it has no live log`);
      return null;
    }
  }
}

/** Moves what is at the log's name to quarantine, saying what it was; false when it could not. */
function moveAway(d: { audit: AuditLog; log: Logger }, spool: SpoolPaths, file: string, name: string, row: RequestRow): boolean {
  let found: string;
  let movedTo: string | null;
  try {
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (!st) return true; // gone meanwhile
    found = (kindReason(st) ?? `is a file of ${st.size} bytes`).replace(/^is /, '');
    movedTo = quarantine(spool, file, name);
  } catch (e) {
    d.log.error(`${row.id}: could not move what is at results/${name} to quarantine: ${(e as Error).message}`);
    return false;
  }
  if (movedTo === null) return true;
  const where = `quarantine/${path.basename(movedTo)}`;
  const message = `results/${name} was ${found} the host did not make; moved to ${where}, and the run's log made anew`;
  d.log.warn(`${row.id}: ${message}`);
  d.audit.record({ kind: 'log_quarantined', request_id: row.id, key_id: row.key_id, op: row.op, message, details: { file: name, found, moved_to: where } });
  return true;
}
