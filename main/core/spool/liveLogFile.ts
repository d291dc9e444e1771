// A run's live log, results/<id>.log, made by the daemon itself just before the run starts. The
// sandbox chooses request ids, so it can put anything at that name beforehand: a symlink to a host
// file, a FIFO, a folder (one of mode 000), its own text. Whatever is there is moved to quarantine and
// recorded, and the log is created anew through the pinned results folder; the run writes to that
// file alone (exec/sharedFile.ts), whatever is later renamed or put at its name.
import { lstatSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import type { AuditLog } from '../ledger/audit';
import type { RequestRow } from '../ledger/requests';
import type { Logger } from '../log';
import { makeShared, TAKEN, type HeldFile } from '../exec/sharedFile';
import { quarantine } from './claim';
import { logPath } from './results';
import { kindReason } from './safeRead';
import type { SpoolPaths } from './layout';

/** A served spool's folders: as pinned (`io`), and by name (`plain`). */
export interface SpoolDirs {
  io: SpoolPaths;
  plain: SpoolPaths;
}

/** Entries moved away before the log is given up on (the sandbox planting again and again). */
const TRIES = 10;

interface Moved {
  found: string;
  to: string;
}

/** The live log of `row`'s run, made anew in `spool`'s results folder (`io`: pinned; `plain`: its
 *  paths by name); null when it cannot be made (the run then goes on without a log, and its result
 *  says so). */
export function makeLiveLog(d: { audit: AuditLog; log: Logger }, { io: spool, plain }: SpoolDirs, row: RequestRow): HeldFile | null {
  const name = `${row.wire_id}.log`;
  const file = logPath(spool.results, row.wire_id);
  const moved: Moved[] = [];
  let made = makeShared(file, plain.results);
  // Each move is followed at once by the create, and recorded only after: a sandbox planting again in
  // a loop has only the moment between the two.
  for (let tries = 0; made === TAKEN && tries < TRIES; tries++) {
    const away = moveAway(spool, file, name);
    if (away instanceof Error) {
      d.log.error(`${row.id}: could not move what is at results/${name} to quarantine: ${away.message}`);
      break;
    }
    if (away) moved.push(away);
    made = makeShared(file, plain.results);
  }
  for (const { found, to } of moved) {
    const message = `results/${name} was ${found} the host did not make; moved to ${to}`;
    d.log.warn(`${row.id}: ${message}`);
    d.audit.record({ kind: 'log_quarantined', request_id: row.id, key_id: row.key_id, op: row.op, message, details: { file: name, found, moved_to: to } });
  }
  if (made === TAKEN || made === null) {
    d.log.warn(`${row.id}: results/${name} could not be ${made === TAKEN ? 'cleared' : 'created'}: the run has no live log`);
    return null;
  }
  return made;
}

/**
 * The log made for a run that never started (its daemon died before the run keeper received it, and it
 * is queued again): taken away while it is still an empty file, so that the next start makes it anew
 * without taking it for something the sandbox planted. Anything else there is left for that start's
 * quarantine, as planted.
 */
export function dropUnstartedLog(spool: SpoolPaths, row: RequestRow): void {
  const file = logPath(spool.results, row.wire_id);
  try {
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (st?.isFile() && st.size === 0) unlinkSync(file);
  } catch {
    /* left for the next start to deal with */
  }
}

/** Moves what is at the log's name to quarantine: what it was and where it went; null when it was
 *  gone already. */
function moveAway(spool: SpoolPaths, file: string, name: string): Moved | null | Error {
  try {
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (!st) return null;
    const movedTo = quarantine(spool, file, name);
    return movedTo === null ? null : { found: (kindReason(st) ?? `is a file of ${st.size} bytes`).replace(/^is /, ''), to: `quarantine/${path.basename(movedTo)}` };
  } catch (e) {
    return e as Error;
  }
}
