// Retention: the spool and the ledger cannot grow without bound. Finished results, logs, inbox
// messages and quarantined entries leave the spool after `retention_spool_days`; finished requests
// and audit entries leave the ledger after `retention_ledger_days` (which settings validation keeps
// above the idempotency binding's lifetime). Unfinished and uncertain requests are never reaped.
import { lstatSync, opendirSync, readdirSync, rmdirSync, unlinkSync, type Dir } from 'node:fs';
import { CAN_PIN, pinDir, unpin } from './spool/pinned';
import path from 'node:path';
import type { Db } from './ledger/db';
import type { Requests } from './ledger/requests';
import type { AuditLog } from './ledger/audit';
import type { Settings } from './settings';
import { isHostMadeSpool, type SpoolPaths } from './spool/layout';
import { INBOX_MESSAGE_NAME, isInProgressName, isRequestId } from '../../shared/protocol/ids';

export const DAY_MS = 86_400_000;
/** Leftovers of interrupted atomic writes (the spec's one hour). */
export const TMP_MAX_AGE_MS = 3_600_000;

export interface ReapReport {
  tmp: number;
  queue_leftovers: number;
  results: number;
  inbox: number;
  quarantine: number;
  ledger_requests: number;
  audit: number;
}

const MAX_DEPTH = 32;

/** The spool's age rule: a finished result, log, message or quarantined entry last changed before
 *  this time has left the spool (or leaves it at the next pass). The result repair applies it too. */
export function spoolCutoff(spoolDays: number, now = Date.now()): number {
  return now - spoolDays * DAY_MS;
}

/**
 * Removes one entry of a folder without ever following a link: a file, link or FIFO is unlinked; a
 * folder is opened without following links and emptied through its own fd (spool/pinned.ts), so a
 * symlink the sandbox swaps in anywhere below is only ever unlinked. Where fds cannot pin folders,
 * only empty folders are removed.
 */
function removeEntry(dir: string, name: string, depth = 0): void {
  const p = path.join(dir, name);
  if (!lstatSync(p).isDirectory()) return unlinkSync(p);
  if (CAN_PIN && depth < MAX_DEPTH) {
    const pin = pinDir(p);
    try {
      for (const child of readdirSync(pin.path)) removeEntry(pin.path, child, depth + 1);
    } finally {
      unpin(pin);
    }
  }
  rmdirSync(p);
}

/** Removes entries of `dir` last changed before `cutoffMs` that `ours` says the host named and
 *  `keep` does not keep. */
function reapDir(dir: string, cutoffMs: number, ours: (name: string) => boolean, keep: (name: string) => boolean = () => false): number {
  let n = 0;
  let d: Dir;
  try {
    d = opendirSync(dir);
  } catch {
    return 0;
  }
  // Entry by entry, not the whole listing at once: results/ may hold hundreds of thousands of names.
  try {
    for (let e = d.readSync(); e !== null; e = d.readSync()) {
      const name = e.name;
      try {
        if (!ours(name) || keep(name) || lstatSync(path.join(dir, name)).mtimeMs >= cutoffMs) continue;
        removeEntry(dir, name);
        n++;
      } catch {
        /* vanished, swapped or not empty: next time */
      }
    }
  } catch {
    /* the folder went away meanwhile: next time */
  } finally {
    d.closeSync();
  }
  return n;
}

// The names the host gives what it writes (results.ts, inbox.ts, claim.ts's quarantine): retention
// removes those and nothing else, so a file someone put there by hand stays.
/** <id>.json, <id>.log, or a leftover of the host's interrupted atomic write of one. */
const RESULT_NAME = /^\.?(.+)\.(json|log)(?:\.\d+\.[0-9a-f]+\.tmp)?$/;
const QUARANTINE_NAME = /^\d{4}-\d{2}-\d{2}T\d{9}Z-[0-9a-f]{6}-./;
const resultId = (name: string) => (RESULT_NAME.exec(name)?.[1] ?? null);
const any = () => true;

export type SpoolReap = Omit<ReapReport, 'ledger_requests' | 'audit'>;
export type LedgerReap = Pick<ReapReport, 'ledger_requests' | 'audit'>;

/** What leaves one spool. `spool`: the pinned paths, and only after the spool was checked safe. */
export function reapSpool(spool: SpoolPaths, requests: Requests, settings: Settings, now = Date.now()): SpoolReap {
  const spoolBefore = spoolCutoff(settings.retention_spool_days, now);
  // A result file stays while its request is unfinished (or uncertain), whatever its age.
  const unfinished = requests.unfinishedWireIds();
  // Only in a folder the host made a spool: pointed at someone's folder, it deletes nothing there.
  const ours = isHostMadeSpool(spool.root);
  const inSpool = (dir: string, cutoff: number, named: (name: string) => boolean, keep?: (name: string) => boolean) => (ours ? reapDir(dir, cutoff, named, keep) : 0);

  return {
    // tmp/ and queue/ are the sandbox's to write in: what is left there past the hour is a leftover.
    tmp: inSpool(spool.tmp, now - TMP_MAX_AGE_MS, any),
    queue_leftovers: inSpool(spool.queue, now - TMP_MAX_AGE_MS, isInProgressName),
    results: inSpool(spool.results, spoolBefore, (name) => isRequestId(resultId(name) ?? ''), (name) => unfinished.has(resultId(name)!)),
    inbox: inSpool(spool.inbox, spoolBefore, (name) => INBOX_MESSAGE_NAME.test(name)),
    quarantine: inSpool(spool.quarantine, spoolBefore, (name) => QUARANTINE_NAME.test(name)),
  };
}

/** The ledger's parts retention removes from. */
export interface LedgerStores {
  db: Db;
  requests: Requests;
  audit: AuditLog;
}

/** What leaves the ledger: finished requests, their audit entries and grants past the ledger's age. */
export function reapLedger(ledger: LedgerStores, settings: Settings, now = Date.now()): LedgerReap {
  const cutoff = new Date(now - Math.max(settings.retention_ledger_days * DAY_MS, settings.max_request_age_s * 1000 + DAY_MS)).toISOString();
  const report: LedgerReap = {
    ledger_requests: ledger.requests.deleteFinishedBefore(cutoff),
    // After the requests: a request still in the ledger (an old uncertain one, say) keeps its history.
    audit: ledger.audit.deleteBefore(cutoff),
  };
  ledger.db.prepare('DELETE FROM grants WHERE expires_at < ?').run(cutoff);
  return report;
}

/** What a pass removed, in words ("3 results, 1 inbox"), or null when nothing. */
export function reapedText(r: Partial<ReapReport>): string | null {
  const parts = Object.entries(r).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k.replace('_', ' ')}`);
  return parts.length ? parts.join(', ') : null;
}
