// File events on queue/, as hints: one watch on the folder itself (one inotify watch on Linux), never
// state per file, which is what made a flood of 100,000 files cost gigabytes. It also keeps the names
// of request files that events named and that are there (not those the daemon itself just moved out),
// so that during a flood a request written now is taken before the backlog instead of after it. The
// periodic rescan finds whatever events miss.
import { lstatSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { requestIdFromFileName } from '../../../shared/protocol/ids';
import type { Entry } from '../spool/claim';
import type { Logger } from '../log';

/** Named files kept (the newest); a flood's older names are left to the listing. */
const NAMED_MAX = 1024;

export class QueueWatch {
  private watcher: FSWatcher | null = null;
  private dir = '';
  /** By the name's bytes (latin1 keeps them exact), in the order events named them. */
  private readonly named = new Map<string, Entry>();
  private lastError: string | null = null;

  constructor(
    private readonly onEvent: () => void,
    private readonly log: Logger,
  ) {}

  /** Watches `dir` (the pinned queue/, after each repin), in place of what was watched before. */
  watch(dir: string): void {
    this.close();
    this.dir = dir;
    try {
      this.watcher = watch(dir, { encoding: 'buffer' }, (_event, raw) => {
        if (raw) this.note(raw);
        this.onEvent();
      });
      this.watcher.on('error', (e) => this.failed(e));
      this.lastError = null;
    } catch (e) {
      this.failed(e as Error);
    }
  }

  private note(raw: Buffer): void {
    const name = raw.toString('utf8');
    if (requestIdFromFileName(name) === null) return; // junk: the listing will move it away
    // An event also names what left queue/ (our own claims): only what is there now is worth a hint.
    try {
      if (!lstatSync(Buffer.concat([Buffer.from(this.dir + path.sep), raw]), { throwIfNoEntry: false })) return;
    } catch {
      return;
    }
    const key = raw.toString('latin1');
    this.named.delete(key);
    this.named.set(key, { raw: Buffer.from(raw), name });
    if (this.named.size > NAMED_MAX) this.named.delete(this.named.keys().next().value!);
  }

  /** Up to `max` named files, newest first (what was written a moment ago is served a moment later,
   *  however much came before it), forgotten once taken. */
  takeNamed(max: number): Entry[] {
    const keys = [...this.named.keys()].slice(-max).reverse();
    const out = keys.map((k) => this.named.get(k)!);
    for (const k of keys) this.named.delete(k);
    return out;
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
