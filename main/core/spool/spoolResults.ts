// Each spool's one result publisher. While the daemon of this process serves a spool, its server's
// writer (which knows the spool's health and what it wrote, for the repair) is the one; otherwise a
// writer over folders pinned here, looked at again at each use: a process that lives long (the app's)
// pins a spool that was unsafe when it started once it is fixed, and folders replaced meanwhile anew.
import path from 'node:path';
import type { KeyStore } from '../keys/keyStore';
import type { Requests, RequestRow } from '../ledger/requests';
import type { SpoolEntry } from '../settings';
import { checkSpool, type SpoolPaths } from './layout';
import { PinnedSpool } from './pinned';
import { ResultWriter, type WrittenResults } from './results';
import type { SpoolHealth } from './health';

/** A spool reachable now: where its folders are, and its writer. */
export interface ReachableSpool {
  paths: SpoolPaths;
  writer: ResultWriter;
}

export class SpoolResults {
  /** Pinned here, by spool name (with the folder it was pinned at). */
  private readonly pins = new Map<string, { dir: string; pinned: PinnedSpool; writer: ResultWriter }>();
  /** The daemon's servers, by spool name. */
  private readonly served = new Map<string, ReachableSpool & { ok: () => boolean }>();

  constructor(
    private readonly spools: () => SpoolEntry[],
    private readonly requests: Requests,
    private readonly keys: KeyStore,
  ) {}

  /** The writer of a spool the daemon serves through `paths` (pinned by its server), used by every face
   *  of this process while `ok()`; `release` ends that. */
  serve(name: string, paths: SpoolPaths, ok: () => boolean, health: SpoolHealth, written: WrittenResults): { writer: ResultWriter; release: () => void } {
    const writer = new ResultWriter(name, paths, this.requests, (k) => this.keys.signer(k), health, written);
    const entry = { paths, writer, ok };
    this.served.set(name, entry);
    return { writer, release: () => this.served.get(name) === entry && this.served.delete(name) };
  }

  /** Writes the row's result file in its spool, when that can be reached now (else it waits, unsynced). */
  publish(row: RequestRow): void {
    this.reach(row.spool)?.writer.publish(row);
  }

  /**
   * A spool of the home, checked and pinned, when it is there and safe: only then do we write into it.
   * Null for a spool no longer in the home, or unsafe now: its results wait for it to come back.
   */
  reach(name: string): ReachableSpool | null {
    const served = this.served.get(name);
    if (served) return served.ok() ? served : null;
    const entry = this.spools().find((s) => s.name === name);
    if (!entry) return null;
    const dir = path.resolve(entry.dir);
    let have = this.pins.get(name);
    if (have && have.dir !== dir) {
      // Moved (or removed and added again elsewhere) since it was pinned: never the old folder.
      this.forget(name);
      have = undefined;
    }
    if (have && have.pinned.replaced().length === 0) return { paths: have.pinned.paths, writer: have.writer };
    try {
      const checked = checkSpool(dir);
      if (have) {
        have.pinned.repin();
        return { paths: have.pinned.paths, writer: have.writer };
      }
      const pinned = new PinnedSpool(checked);
      // paths: updated in place by a repin
      const made = { dir, pinned, writer: new ResultWriter(name, pinned.paths, this.requests, (k) => this.keys.signer(k)) };
      this.pins.set(name, made);
      return { paths: pinned.paths, writer: made.writer };
    } catch {
      return null; // unsafe or incomplete: the daemon reports it, and publishes once it is fixed
    }
  }

  /** Lets go of a spool's pins (removed from the home). */
  forget(name: string): void {
    this.pins.get(name)?.pinned.close();
    this.pins.delete(name);
  }

  close(): void {
    for (const name of [...this.pins.keys()]) this.forget(name);
  }
}
