// The spool's own folders replaced, removed or made again (tmp/, queue/, results/... in the spool's
// folder; this host's folder in claimed/): a watch on the spool's folder and one on claimed/ ask for a
// full pass at once (the spool's check, and a repin), rather than at the next rescan, which is rare
// while file events work (daemon.ts). Entries of other names (host.json, written every 5 s; another
// host's claimed folder) ask for nothing.
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log';
import type { SpoolPaths } from '../spool/layout';

export class LayoutWatch {
  private watchers: FSWatcher[] = [];
  private lastError: string | null = null;

  constructor(
    private readonly changed: () => void,
    private readonly log: Logger,
  ) {}

  /** Whether both watches are up (false before the first watch and after an error closed them). */
  get watching(): boolean {
    return this.watchers.length === 2;
  }

  /** `plain`: the spool's folders by name; `claimed`: claimed/ as pinned (after each repin). */
  watch(plain: SpoolPaths, claimed: string, hostId: string): void {
    this.close();
    const folders = new Set([plain.tmp, plain.queue, plain.claimed, plain.results, plain.inbox, plain.quarantine, plain.bin].map((p) => path.basename(p)));
    try {
      this.add(plain.root, (name) => folders.has(name));
      this.add(claimed, (name) => name === hostId);
      this.lastError = null;
    } catch (e) {
      this.failed(e as Error);
    }
  }

  private add(dir: string, ours: (name: string) => boolean): void {
    const w = watch(dir, (_event, name) => (name === null || ours(name)) && this.changed());
    w.on('error', (e) => this.failed(e));
    this.watchers.push(w);
  }

  private failed(e: Error): void {
    if (e.message !== this.lastError) this.log.warn(`file events on the spool's folders: ${e.message} (the periodic rescan checks them)`);
    this.lastError = e.message;
    this.close();
  }

  close(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }
}
