// A long-lived host idles small. Under a burst of allocation (the first sweep over a large results/
// folder, a burst of requests) V8 grows its heap for throughput and keeps what it grew while the host
// idles: measured after a start with 100,000 results, the young generation at 16 MiB a half (30 MiB
// of a daemon's 128), and the old one at 46 MiB of which 11 lived. V8 reads both flags each time it
// sizes a space, so they apply to the running process.
import v8 from 'node:v8';

/** The young generation stays at its first size (a scavenge of what lives there is cheap anyway), and
 *  the old one may grow to 1.5 times what lived at the last full collection before the next, instead
 *  of up to 4 times: a full collection of a heap this size takes a few milliseconds, and V8 gives back
 *  a grown heap only when it grew by over 10 MB, then tens of seconds later. */
export function keepHeapSmall(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  v8.setFlagsFromString('--heap-growing-percent=50');
}
