// Anyone who can write the spool can change or replace results/<id>.json: with an unsigned forgery, a
// file signed for another key, an older version the host signed (a replay), a FIFO, a link, a folder.
// A client that checks signatures ignores all of that, but it then sees no answer, and an old client
// believes it. So the host looks at a bound request's result file and, when it is not what the host
// wrote, writes it again and records what it found (its kind and size, never its content).
// A look is an lstat compared with the version the daemon wrote (WrittenResults); only a file that
// differs is read, and compared with what the ledger says the file must hold, byte for byte.
import { closeSync, fstatSync, lstatSync, readSync, type BigIntStats } from 'node:fs';
import { openHostDoc, type HostDocKey } from '../../../shared/protocol/hostAuth';
import { isFinalState } from '../../../shared/protocol/types';
import type { AuditLog } from '../ledger/audit';
import type { Requests } from '../ledger/requests';
import type { Logger } from '../log';
import type { SpoolPaths } from './layout';
import { resultPath, signedResultText, type ResultWriter, type WrittenResults } from './results';
import { openSpoolFile } from './safeRead';

/** A file larger than this is described by its size only (clients read no more of a result). */
const READ_MAX = 64 * 1024 * 1024;

export class ResultRepair {
  constructor(
    /** The pinned paths (read at each use: a repin changes them in place). */
    private readonly paths: SpoolPaths,
    private readonly requests: Requests,
    private readonly writer: ResultWriter,
    private readonly written: WrittenResults,
    private readonly signer: (keyId: string) => HostDocKey | null,
    private readonly audit: AuditLog,
    private readonly log: Logger,
  ) {}

  /**
   * Looks at results/<id>.json and writes it again when it is not the host's. `changed`: a file event
   * said its content changed, so it is read even if it looks as written (a write in place within the
   * clock's tick leaves its times as they were). Returns true when it was written again.
   */
  check(id: string, changed = false): boolean {
    const file = resultPath(this.paths.results, id);
    const st = lstatSync(file, { bigint: true, throwIfNoEntry: false });
    if (st && !changed && this.written.matches(id, st)) return false;
    const row = this.requests.get(id);
    // Unbound: the host's own unsigned refusals, or anything named like one; no key to sign for.
    if (!row) {
      this.written.forget(id);
      return false;
    }
    // Its latest state is not in the file yet: whoever made it writes it (or repairAll does).
    if (row.synced === 0) return false;
    if (!st) {
      this.written.forget(id);
      if (isFinalState(row.state)) return false; // retention removes finished results
    }
    const key = this.signer(row.key_id);
    if (!key) return false; // sealed for another process (the app's daemon), which looks itself
    const expected = Buffer.from(signedResultText(row, key), 'utf8');
    const found = st ? this.differs(id, file, expected, key) : 'was removed';
    if (found === null) return false;
    // Another process (the command line) may have moved the request on and written it meanwhile.
    const now = this.requests.get(id);
    if (!now || now.version !== row.version || now.synced === 0) return false;
    if (!this.writer.publish(now)) return false; // retried at the next look: the file is still not ours
    const message = `results/${id}.json ${found}; the host wrote its result again`;
    this.log.warn(`${id}: ${message}`);
    this.audit.record({ kind: 'result_repaired', request_id: id, key_id: row.key_id, op: row.op, message, details: { found } });
    return true;
  }

  /** Null when the file holds exactly `expected` (its version is then remembered); else what it is. */
  private differs(id: string, file: string, expected: Buffer, key: HostDocKey): string | null {
    const opened = openSpoolFile(file);
    if (!opened.ok) return opened.reason.replace(/^is /, 'was '); // "was a FIFO", "was a symbolic link", "was a folder"...
    const { fd } = opened;
    try {
      const st = fstatSync(fd, { bigint: true });
      const bytes = st.size <= BigInt(READ_MAX) ? readAll(fd, st) : null;
      const links = st.nlink > 1n ? `, ${st.nlink} names (hard links)` : '';
      if (bytes?.equals(expected)) {
        // Right, but another name for it would let it be changed later, unseen by a look at this name.
        if (links) return `was the host's file with another name (${st.size} bytes${links})`;
        this.written.set(id, st); // written by another process (the command line), or before a restart
        return null;
      }
      return `was ${bytes ? describe(bytes, key) : 'a file too large to read'} (${st.size} bytes${links})`;
    } catch (e) {
      return `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
    } finally {
      closeSync(fd);
    }
  }
}

/** Reads at most one byte more than the file's size: one that grows meanwhile is not swallowed. */
function readAll(fd: number, st: BigIntStats): Buffer {
  const buf = Buffer.alloc(Number(st.size) + 1);
  let n = 0;
  for (let r; n < buf.length && (r = readSync(fd, buf, n, buf.length - n, n)) > 0; ) n += r;
  return buf.subarray(0, n);
}

/** What kind of file it was, by its signature alone (the key id is of the protocol's safe characters). */
function describe(bytes: Buffer, key: HostDocKey): string {
  const opened = openHostDoc('result', bytes.toString('utf8'), key);
  if (opened.ok) return 'another version the host signed for this key (a replay)';
  if (opened.why === 'unsigned') return 'an unsigned file';
  if (opened.why === 'other_key') return `a file signed for another key, ${opened.keyId}`;
  return 'a file whose signature does not match';
}
