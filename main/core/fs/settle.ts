// A file a person or a script writes in place (truncate, then write, maybe in several steps) is read
// half-written in between: it is read only once it has kept the same stamp (fs/stamp.ts: size, mtime,
// inode) for SETTLE_MS. Hints (file events, ticks) start the wait or start it again; its end looks at
// the stamp once more, so an event the watcher dropped (chokidar drops a change that follows another
// within a few ms) costs nothing.
import { stampOf } from './stamp';

/** How long a file written in place must stay the same before it is read. */
export const SETTLE_MS = 500;

export class Settle {
  private timer: NodeJS.Timeout | null = null;
  /** The stamp the wait is for. */
  private stamp = '';

  constructor(
    private readonly file: string,
    /** Called once the file has stayed the same for SETTLE_MS since the last change seen. */
    private readonly settled: () => void,
  ) {}

  /** Whether a change is being waited out. */
  get waiting(): boolean {
    return this.timer !== null;
  }

  /** Starts the wait, or starts it again when the file changed since the wait began. */
  start(): void {
    const now = stampOf(this.file);
    if (this.timer !== null && now === this.stamp) return;
    this.stamp = now;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.look(), SETTLE_MS);
    this.timer.unref();
  }

  private look(): void {
    this.timer = null;
    if (stampOf(this.file) !== this.stamp) return this.start();
    this.settled();
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
