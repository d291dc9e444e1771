// Scanning queue/ and claiming what is there: in steps that let the event loop through, with what file
// events name first in a flood, and what a failed intake left in claimed/ retried. A file event's
// request file is taken by itself (a named pass: no listing, no check of the spool); the full pass
// (the spool checked, claimed/ and queue/ listed) runs on the rescan interval, or when events may have
// missed something.
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { requestIdFromFileName } from '../../../shared/protocol/ids';
import { lstatSync } from 'node:fs';
import { claim, entryPath, firstEntries, quarantine, type Entry } from '../spool/claim';
import { unboundRejection, type ResultWriter } from '../spool/results';
import type { SpoolPaths } from '../spool/layout';
import type { AuditLog } from '../ledger/audit';
import { writeFailureCode, type LedgerRoom } from '../ledger/room';
import type { Requests } from '../ledger/requests';
import type { Logger } from '../log';
import { faultPoint } from '../faults';
import { intakeClaimed, type IntakeDeps } from './intake';
import type { QueueWatch } from './queueWatch';
import type { Refusals } from './refusals';

/** Queue entries listed per pass, the first by name: memory stays bounded whatever queue/ holds. */
const LISTING_MAX = 4096;
/** A step of a scan takes at most this many entries, or stops after STEP_MS; between steps the loop
 *  lets file events, runs' output and timers through, and starts what may start. */
const STEP_MAX = 256;
const STEP_MS = 20;
/** From this many entries in one listing (a flood), requests that file events named go first. */
const BACKLOG = 1024;

export interface ScannerDeps {
  /** The spool's folders, pinned (spool/pinned.ts), and this host's own claimed/ folder. */
  io: SpoolPaths;
  claimedMine: () => string;
  /** Names the file events gave (null: none are watched). */
  queueWatch: () => QueueWatch | null;
  refusals: Refusals;
  intake: IntakeDeps;
  requests: Requests;
  audit: AuditLog;
  results: ResultWriter;
  log: Logger;
  /** Whether the spool may be touched now (checked and pinned); says why not, once. */
  spoolUsable: () => boolean;
  /** Whether it was found usable by the last check, and is still pinned (no check now). */
  spoolOk: () => boolean;
  /** Room for the ledger: without it, nothing is taken (requests wait in queue/, claimed/ keeps its files). */
  room: LedgerRoom;
  /** Before each pass: settings changed a moment ago apply to the very next request. */
  beforePass: () => void;
  /** Starts what may start: between steps, so a flood never holds the runs back. */
  pump: () => void;
  safely: (name: string, fn: () => void) => void;
}

export class Scanner {
  private scanning = false;
  private rescanWanted = false;
  /** Files events named wait to be taken. */
  private namedWanted = false;
  private stopping = false;
  /** Entries listed and not yet taken: part of the queue depth host.json shows. */
  unclaimed = 0;
  /** The last scan's unexpected failure, said once until a scan succeeds. */
  private scanError: string | null = null;
  /** Request ids taken in the current step (its commit is not made yet). */
  private readonly stepIds = new Set<string>();

  constructor(private readonly d: ScannerDeps) {}

  /** A full pass. */
  request(): void {
    this.rescanWanted = true;
    this.run();
  }

  /** A named pass: file events named request files (QueueWatch). */
  requestNamed(): void {
    this.namedWanted = true;
    this.run();
  }

  private run(): void {
    if (!this.stopping && !this.scanning) void this.scan();
  }

  /** No new pass starts; resolves once the current one has ended. */
  async stop(): Promise<void> {
    this.stopping = true;
    while (this.scanning) await new Promise((r) => setTimeout(r, 10));
  }

  private async scan(): Promise<void> {
    this.scanning = true;
    try {
      while (!this.stopping && !this.rescanWanted && this.namedWanted) {
        this.namedWanted = false;
        await this.namedPass();
      }
      while (this.rescanWanted && !this.stopping) {
        this.rescanWanted = false;
        this.namedWanted = false; // the listing takes them, or takeNamed() in a backlog
        if (!this.d.room.check() || !this.d.spoolUsable()) return;
        this.d.beforePass();
        await this.recoverClaimed(); // anything left by a failed intake is retried, not stranded
        const { entries, more } = firstEntries(this.d.io.queue, LISTING_MAX);
        const backlog = entries.length >= BACKLOG;
        for (let i = 0; i < entries.length && !this.stopping; ) {
          // In a backlog, a request written now goes before the thousands listed ahead of it: the name
          // order holds among a normal queue's entries, not against a flood.
          if (backlog && i > 0) this.takeNamed();
          i = this.takeStep(entries, i, (e) => this.take(e));
          this.unclaimed = entries.length - i;
          this.d.pump();
          if (i < entries.length) await yieldToLoop(); // let events, runs' output and timers through
        }
        this.d.refusals.endPass();
        this.d.pump();
        if (more) this.rescanWanted = true;
        this.scanError = null;
      }
    } catch (e) {
      // A full disk failed the step's commit: what it claimed stays in claimed/, taken again with room.
      if (this.d.room.failed(e, 'ledger')) return;
      // The spool changed under the scan (a folder made unreadable after the check): the next check says why.
      const msg = `the scan of the spool failed: ${(e as Error).message}`;
      if (msg !== this.scanError) {
        this.d.log.error(`${(e as Error).stack ?? msg} (retried at every rescan)`);
        this.d.audit.record({ kind: 'internal_error', message: msg });
      }
      this.scanError = msg;
    } finally {
      this.d.safely('refusals', () => this.d.refusals.endPass()); // a failed pass's too: the next starts afresh
      this.unclaimed = 0;
      this.scanning = false;
    }
    // Asked for while the pass ended: events never wait for the next interval.
    if (this.namedWanted || this.rescanWanted) this.run();
  }

  /** The files events named, in steps, until none is left; the spool as the last check found it. */
  private async namedPass(): Promise<void> {
    if (!this.d.room.check() || !this.d.spoolOk()) return; // the next full pass checks it again, and says why
    this.d.beforePass();
    let waiting: number;
    while ((waiting = this.d.queueWatch()?.namedCount ?? 0) > 0 && !this.stopping && !this.rescanWanted) {
      this.takeNamed(waiting < BACKLOG); // in the order they came, but newest first in a flood
      this.d.pump();
      await yieldToLoop();
    }
    this.d.refusals.endPass();
    this.d.pump();
  }

  /**
   * Files this host claimed but had not yet recorded when it stopped, in steps like the queue's: the
   * sandbox can fill claimed/<host>/ too (its name is in host.json), and must not hold up the loop,
   * the other spools or the runs meanwhile.
   */
  private async recoverClaimed(): Promise<void> {
    const { entries, more } = firstEntries(this.d.claimedMine(), LISTING_MAX);
    for (let i = 0; i < entries.length && !this.stopping; ) {
      i = this.takeStep(entries, i, (e) => this.recover(e));
      this.d.pump();
      if (i < entries.length) await yieldToLoop();
    }
    if (more) this.rescanWanted = true;
  }

  private recover(e: Entry): void {
    const mine = this.d.claimedMine(); // read at each use: a repin between steps moves it
    const file = entryPath(mine, e);
    if (!lstatSync(file, { throwIfNoEntry: false })) return; // gone since the listing
    const id = requestIdFromFileName(e.name);
    if (id) this.intakeSafely(id, path.join(mine, e.name), true);
    else quarantine(this.d.io, file, e.name);
  }

  /**
   * Intake of one claimed file. An unexpected failure must not leave it in claimed/ to fail again at
   * every start: it is moved to quarantine, recorded, and answered where its id is not bound.
   */
  private intakeSafely(id: string, file: string, recovering = false): void {
    try {
      intakeClaimed(this.d.intake, id, file, recovering);
    } catch (e) {
      // The disk, not the request: the step fails as a whole, the file stays in claimed/ for the next pass.
      if (writeFailureCode(e)) throw e;
      const msg = `the host could not process this request: ${(e as Error).message}`;
      this.d.log.error(`${id}: ${(e as Error).stack ?? msg}`);
      this.d.safely(id, () => {
        this.d.audit.record({ kind: 'internal_error', request_id: id, message: msg });
        quarantine(this.d.io, file, `${id}.json`);
        if (!this.d.requests.bound(this.d.intake.spool, id)) this.d.results.writeUnbound(unboundRejection(id, null, 'bad_envelope', msg));
      });
    }
  }

  /** Handles `entries` from `from` on, for one step (STEP_MAX entries or STEP_MS); returns where it stopped. */
  private takeStep(entries: Entry[], from: number, handle: (e: Entry) => void): number {
    const until = performance.now() + STEP_MS;
    let i = from;
    this.inStep(() => {
      while (i < entries.length && i - from < STEP_MAX && (i === from || performance.now() < until)) {
        const e = entries[i++]!;
        this.d.safely(e.name, () => handle(e));
      }
    });
    return i;
  }

  /**
   * The files that events named, for one step (as takeStep): in a backlog newest first (`inOrder`:
   * in the order they came, for a named pass outside a flood). Each is taken
   * as the listing would take it: claimed, then authenticated once, at intake, and recorded or refused.
   * So looking at one is never wasted (junk is refused now, not looked at and left to the listing), a
   * request written during a flood waits for the files named after it, not for the names that sort
   * before it, and those a step does not reach keep their names for the next (see docs/SECURITY.md).
   */
  private takeNamed(inOrder = false): void {
    const until = performance.now() + STEP_MS;
    let n = 0;
    const more = () => n === 0 || (n < STEP_MAX && performance.now() < until);
    this.inStep(() =>
      this.d.queueWatch()?.takeNamed(
        more,
        (e) => {
          n++;
          this.d.safely(e.name, () => this.take(e));
        },
        !inOrder,
      ),
    );
  }

  /** A step is one commit (group commit: one fsync for all its requests and refusals), and its
   *  refusals are recorded together, however the step ends; ids taken in it are not taken again in it. */
  private inStep(fn: () => void): void {
    this.d.intake.lifecycle.group(() => {
      try {
        fn();
      } finally {
        this.stepIds.clear();
        this.d.refusals.flush();
      }
    });
  }

  private take(entry: Entry): void {
    const { name } = entry;
    // The same name written again during the step: claiming it now would replace the claimed file of
    // the request not yet committed; it waits in queue/ for the next pass.
    const named = requestIdFromFileName(name);
    if (named !== null && this.stepIds.has(named)) return void (this.rescanWanted = true);
    if (named !== null) this.stepIds.add(named);
    const c = claim(this.d.io, entry, this.d.claimedMine());
    if (c.kind === 'gone') return;
    if (c.kind === 'claimed') faultPoint('after_claim');
    if (c.kind === 'refused') {
      const bound = c.id !== null && this.d.requests.bound(this.d.intake.spool, c.id) !== null;
      const msg = `queue entry ${JSON.stringify(name)} ${c.reason}; ${c.movedTo ? `moved to quarantine/${path.basename(c.movedTo)}` : 'it vanished'}`;
      this.d.refusals.add({
        entry: { kind: 'rejected', request_id: c.id, message: `bad_envelope: ${msg}`, details: { code: 'bad_envelope', file: name, reason: c.reason } },
        line: msg,
        result: c.id !== null && !bound ? unboundRejection(c.id, null, 'bad_envelope', `the request file ${c.reason}`) : null,
      });
      return;
    }
    this.intakeSafely(c.id, c.file);
  }
}
