// results/<id>.json: built from the ledger row, replaced atomically at every change of state, and signed
// for the key that made the request (docs/PROTOCOL.md, "Authenticated results and inbox messages").
import { lstatSync, type BigIntStats } from 'node:fs';
import path from 'node:path';
import { quarantine } from './claim';
import { scopedLogger } from '../log';
import { writeFileAtomic } from '../fs/atomicWrite';
import { signHostDoc, type HostDocKey } from '../../../shared/protocol/hostAuth';
import { approvalOf, reconcileOf, type RequestRow, type Requests } from '../ledger/requests';
import { OUTPUT_EXCERPT_BYTES, type ErrorCode, type ResultDoc } from '../../../shared/protocol/types';
import { TailBuffer } from '../exec/tailBuffer';
import { planDocOf } from '../policy/plans';
import { nowIso } from '../time';
import { merged } from '../merged';
import type { SpoolPaths } from './layout';
import type { SpoolHealth } from './health';

const log = scopedLogger('results');

export function resultPath(resultsDir: string, id: string): string {
  return path.join(resultsDir, `${id}.json`);
}

export function logPath(resultsDir: string, id: string): string {
  return path.join(resultsDir, `${id}.log`);
}

/** The tail of an output that a result carries. The executor keeps no more than OUTPUT_EXCERPT_BYTES,
 *  but a ledger row written before it did may hold up to max_output_bytes (64 MiB), which JSON would
 *  make a result no client reads. */
function excerptOf(text: string): { text: string; cut: boolean } {
  // An excerpt of that many bytes is at most that many UTF-16 units (a byte gives one at most, an
  // invalid one U+FFFD), each at most 6 characters of JSON.
  if (text.length <= OUTPUT_EXCERPT_BYTES) return { text, cut: false };
  const tail = new TailBuffer(OUTPUT_EXCERPT_BYTES);
  tail.push(Buffer.from(text, 'utf8'));
  return { text: tail.text(), cut: tail.truncated };
}

export function resultDocOf(row: RequestRow): ResultDoc {
  const stdout = excerptOf(row.stdout);
  const stderr = excerptOf(row.stderr);
  const doc: ResultDoc = {
    v: 1,
    id: row.wire_id, // the id as the sandbox gave it: nothing it reads names the host's handle
    op: row.op,
    state: row.state,
    updated_at: row.updated_at,
    exit_code: row.exit_code,
    signal: row.signal,
    stdout: stdout.text,
    stderr: stderr.text,
    stdout_truncated: row.stdout_truncated === 1 || stdout.cut,
    stderr_truncated: row.stderr_truncated === 1 || stderr.cut,
    started_at: row.started_at,
    finished_at: row.finished_at,
    duration_ms: row.duration_ms,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    request_hash: row.binding_hash,
  };
  if (row.resolved_by === 'human') {
    doc.resolved_by = 'human';
    doc.note = row.note ?? '';
  } else if (row.resolved_by === 'reconcile') doc.resolved_by = 'reconcile';
  if (row.state === 'running' && row.orphaned === 1) doc.orphaned = true;
  if (row.state === 'uncertain' && row.reconcile_pending === 1) doc.reconcile_pending = true;
  const reconcile = reconcileOf(row);
  if (reconcile) doc.reconcile = { ...reconcile, stdout: excerptOf(reconcile.stdout).text, stderr: excerptOf(reconcile.stderr).text };
  const approval = approvalOf(row);
  if (approval) {
    doc.approval = row.decided_by ? merged(approval, { decided_by: row.decided_by, decided_at: row.decided_at ?? undefined }) : approval;
  }
  const plan = planDocOf(row);
  if (plan) doc.plan = plan;
  if (row.state === 'cancelled' && row.cancel_requested_by) doc.cancelled_by = row.cancel_requested_by;
  if (row.log_bytes !== null && row.log_sha256 !== null) {
    doc.log_bytes = row.log_bytes;
    doc.log_sha256 = row.log_sha256;
  }
  return doc;
}

/** A result for a file that never bound its id (refused before authentication): no ledger row. */
export function unboundRejection(id: string, op: string | null, code: ErrorCode, message: string): ResultDoc {
  return {
    v: 1,
    id,
    op,
    state: 'rejected',
    updated_at: nowIso(),
    exit_code: null,
    signal: null,
    stdout: '',
    stderr: '',
    stdout_truncated: false,
    stderr_truncated: false,
    started_at: null,
    finished_at: null,
    duration_ms: null,
    error: { code, message },
  };
}

/** The file text of a bound request's result: its document, signed for its key. */
export function signedResultText(row: RequestRow, key: HostDocKey): string {
  return signHostDoc('result', key, JSON.stringify(resultDocOf(row), null, 2) + '\n');
}

/** A version of a file, told apart without reading it: other content, a replacement, another name
 *  for it (a hard link) or its times set back each change one of these (any change sets ctime, which
 *  cannot be set back). */
function versionOf(st: BigIntStats): string {
  // join() makes one flat string; a template of 13 parts is kept as a tree of them, ~600 bytes (100,000 are kept).
  return [st.dev, st.ino, st.mode, st.nlink, st.size, st.mtimeNs, st.ctimeNs].join(':');
}

/** The version of each bound result file (by its name, the wire id) as this process last wrote it or found it right, so that a
 *  look (lstat) tells whether the file is still the host's (spool/resultRepair.ts). */
export class WrittenResults {
  private readonly byId = new Map<string, string>();

  set(id: string, st: BigIntStats): void {
    this.byId.set(id, versionOf(st));
  }

  matches(id: string, st: BigIntStats): boolean {
    return this.byId.get(id) === versionOf(st);
  }

  forget(id: string): void {
    this.byId.delete(id);
  }

  /** Another results/ folder: none of its files was seen. */
  clear(): void {
    this.byId.clear();
  }
}

export class ResultWriter {
  /** Rows whose key cannot sign here, said once each. */
  private readonly unsignable = new Set<string>();

  constructor(
    /** The spool's name: only its own requests' results are written here. */
    readonly spool: string,
    private readonly paths: SpoolPaths,
    private readonly requests: Requests,
    /** The key a result is signed for (KeyStore.signer); null: it cannot be signed in this process. */
    private readonly signer: (keyId: string) => HostDocKey | null,
    private readonly health: SpoolHealth | null = null,
    /** Where the daemon keeps what it wrote, for the repair; null elsewhere. */
    private readonly written: WrittenResults | null = null,
  ) {}

  /**
   * Writes the row's result file, then records in the ledger that the file is current. Another process
   * (the daemon, or the command line) may have changed the row meanwhile: then the newer version is
   * written too, so the last writer always leaves the latest state in the file. Never throws: a file
   * that cannot be written now stays unsynced and is retried, so a ledger step is never undone by it.
   * Nor is one whose key's secret this process cannot open (sealed by the desktop app's keychain, for
   * the command line): the app's daemon, which can, writes it when it sees the ledger change.
   */
  publish(row: RequestRow): boolean {
    // Each sandbox sees its own spool only: another spool's result here would be a leak.
    if (row.spool !== this.spool) {
      log.error(`results/${row.wire_id}.json (request ${row.id}) not written to spool "${this.spool}": the request came through spool "${row.spool}"`);
      return false;
    }
    for (let current: RequestRow | null = row; current; ) {
      const key = this.signer(current.key_id);
      if (!key) {
        if (!this.unsignable.has(current.id)) log.warn(`results/${current.wire_id}.json (request ${current.id}) not written here: the secret of key ${current.key_id} cannot be opened by this process to sign it`);
        this.unsignable.add(current.id);
        return false;
      }
      // Without fsyncs: the ledger is the durable record, committed before the file is written, so a
      // final state shown is never taken back. What a power cut loses of the file (or leaves of an
      // older version) the start's sweep over every result finds and writes again (resultsWatch.ts).
      // Named by the wire id, in this spool (bound within it); the ledger's row by the host's handle.
      const st = this.write(current.wire_id, signedResultText(current, key), false);
      if (!st) return false;
      this.written?.set(current.wire_id, st);
      this.requests.markSynced(current.id, current.version);
      const version = this.requests.versionOf(current.id);
      current = version !== null && version !== current.version ? this.requests.get(current.id) : null;
    }
    return true;
  }

  /** Unsigned: the request was refused before it was authenticated, so no key can be trusted with it. */
  writeUnbound(doc: ResultDoc): boolean {
    this.written?.forget(doc.id);
    return this.write(doc.id, JSON.stringify(doc, null, 2) + '\n', true) !== null;
  }

  /** Something the sandbox put where the result goes (a folder, say) is moved to quarantine once.
   *  Returns what the file written is, or null when it could not be written. */
  private write(id: string, text: string, durable: boolean): BigIntStats | null {
    const file = resultPath(this.paths.results, id);
    for (let attempt = 0; ; attempt++) {
      try {
        const st = writeFileAtomic(file, text, 0o644, durable);
        this.health?.succeeded();
        return st;
      } catch (e) {
        if (this.health?.failed(e, `results/${id}.json`)) return null;
        if (attempt === 0 && lstatSync(file, { throwIfNoEntry: false })?.isDirectory()) {
          quarantine(this.paths, file, `${id}.json`);
          log.warn(`results/${id}.json was a folder; moved it to quarantine`);
          continue;
        }
        log.error(`cannot write results/${id}.json (will retry): ${(e as Error).message}`);
        return null;
      }
    }
  }

  /** After a crash: every row whose last change may not have reached its result file. */
  repairAll(): number {
    let n = 0;
    for (const row of this.requests.unsynced(this.spool)) if (this.publish(row)) n++;
    return n;
  }
}
