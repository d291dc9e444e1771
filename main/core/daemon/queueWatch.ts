// File events on queue/, as hints: one watch on the folder itself (one inotify watch on Linux), never
// state per file, which is what made a flood of 100,000 files cost gigabytes. It keeps the names of
// request files that events named and that are there (an event for a file that left queue/, such as
// our own claim, drops its name): the scanner takes those files, without listing queue/, and during a
// flood a request written now is taken before the backlog instead of after it. An event with no name,
// or more names than it keeps, asks for a rescan; the periodic rescan finds whatever events miss (and
// moves away what cannot be a request: an event naming such a file asks for nothing).
import { lstatSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { requestIdFromFileName } from '../../../shared/protocol/ids';
import type { Entry } from '../spool/claim';
import type { Logger } from '../log';

/** Names kept (the newest): a name costs some 300 bytes at most, so a few MiB in all. A flood of more
 *  validly named files than this, written after a request faster than they are taken, pushes the
 *  request's name out: it then waits for the listing (see docs/SECURITY.md, "Floods"). */
const NAMED_MAX = 8192;

export class QueueWatch {
  private watcher: FSWatcher | null = null;
  private dir = '';
  /** The names' bytes as latin1 (which keeps them exact), in the order events last named them. */
  private readonly named = new Set<string>();
  private lastError: string | null = null;

  constructor(
    /** A request file was named (`rescan` false: take the named files), or a rescan is needed. */
    private readonly onEvent: (rescan: boolean) => void,
    private readonly log: Logger,
  ) {}

  /** How many named files wait to be taken. */
  get namedCount(): number {
    return this.named.size;
  }

  /** Whether events come: false before the first watch and after an error closed it. */
  get watching(): boolean {
    return this.watcher !== null;
  }

  /** Watches `dir` (the pinned queue/, after each repin), in place of what was watched before. */
  watch(dir: string): void {
    this.close();
    this.dir = dir;
    this.named.clear(); // names in the folder watched before
    try {
      this.watcher = watch(dir, { encoding: 'buffer' }, (_event, raw) => {
        const noted = raw ? this.note(raw) : 'overflow';
        if (noted !== 'nothing') this.onEvent(noted === 'overflow');
      });
      this.watcher.on('error', (e) => this.failed(e));
      this.lastError = null;
    } catch (e) {
      this.failed(e as Error);
    }
  }

  /** `named`: a request file is there to take; `overflow`: a name was pushed out, only a rescan finds it. */
  private note(raw: Buffer): 'named' | 'overflow' | 'nothing' {
    if (requestIdFromFileName(raw.toString('utf8')) === null) return 'nothing'; // junk: the listing will move it away
    const key = raw.toString('latin1');
    this.named.delete(key);
    // An event also names what left queue/ (our own claims): only what is there now is worth a hint.
    try {
      if (!lstatSync(Buffer.concat([Buffer.from(this.dir + path.sep), raw]), { throwIfNoEntry: false })) return 'nothing';
    } catch {
      return 'nothing';
    }
    this.named.add(key);
    if (this.named.size <= NAMED_MAX) return 'named';
    this.named.delete(this.named.values().next().value!);
    return 'overflow';
  }

  /**
   * Hands `take` the named files while `more()` says so: newest first in a flood (what was written a
   * moment ago is served a moment later, however much came before it), else in the order they came.
   * Each name is forgotten as it is handed over, never before: those not reached keep their place
   * for the next call.
   */
  takeNamed(more: () => boolean, take: (e: Entry) => void, newestFirst = true): void {
    const names = [...this.named];
    for (const key of newestFirst ? names.reverse() : names) {
      if (!more()) return;
      if (!this.named.delete(key)) continue;
      const raw = Buffer.from(key, 'latin1');
      take({ raw, name: raw.toString('utf8') });
    }
  }

  private failed(e: Error): void {
    const msg = e.message;
    if (msg !== this.lastError) this.log.warn(`file events on queue/: ${msg} (the periodic rescan goes on)`);
    this.lastError = msg;
    this.close();
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
  }
}
