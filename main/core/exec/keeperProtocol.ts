// What the daemon and the run keeper (keeperMain.ts) say to each other over the keeper's socket in
// the home: one JSON message a line. Types, and how a run's outcome is carried: the keeper loads
// nothing of the daemon's for them. A run is named by its `key` (the request's handle, unique in a
// home), so that a daemon started after another finds the runs that one started.
import type { RunPlan } from '../allowlist/plan';
import type { RunOutcome } from './executor';
import type { SharedFile } from './sharedFile';

/** Bumped when a message changes: a keeper speaking another version is drained, then replaced. */
export const KEEPER_PROTOCOL = 1;

/** From the daemon. `hello` first, with what it speaks. */
export type ToKeeper =
  | { type: 'hello'; version: string }
  | { type: 'start'; key: string; plan: RunPlan; logFile: SharedFile | null; killGraceMs: number }
  | { type: 'terminate'; key: string; reason: string }
  /** The run's end is in the ledger: the keeper lets its record go. */
  | { type: 'forget'; key: string }
  /** A keeper of another version: take no new run, and exit once the runs held have ended. */
  | { type: 'drain' }
  /** Exit now if no run is held (the daemon has had none for a while, or stops). */
  | { type: 'exit' };

/** A run the keeper holds, as it started. */
export interface KeptStart {
  key: string;
  pid: number | null;
  marker: string | null;
  since: number | null;
}

/** A run that ended whose end no daemon has said is recorded. */
export interface KeptEnd {
  key: string;
  outcome: WireOutcome;
}

/** From the keeper: `hello` answers the daemon's, with the runs it holds and the ends not yet
 *  forgotten, and `instance`, which names this keeper process among all that ever ran; `started` when a run has its process (or `failed` when the spawn threw: it never
 *  started); `done` with its outcome. */
export type FromKeeper =
  | { type: 'hello'; version: string; pid: number; instance: string; running: KeptStart[]; ended: KeptEnd[] }
  | ({ type: 'started' } & KeptStart)
  | { type: 'failed'; key: string; message: string }
  | ({ type: 'done' } & KeptEnd);

/** A run's outcome on the socket: its output excerpts as base64 of their UTF-8, since JSON would
 *  escape each control byte of them as 6 characters (a NUL-filled excerpt, 6 times its size). */
export type WireOutcome = Omit<RunOutcome, 'stdout' | 'stderr'> & { stdout_b64: string; stderr_b64: string };

export function toWire({ stdout, stderr, ...rest }: RunOutcome): WireOutcome {
  return { ...rest, stdout_b64: Buffer.from(stdout, 'utf8').toString('base64'), stderr_b64: Buffer.from(stderr, 'utf8').toString('base64') };
}

export function fromWire({ stdout_b64, stderr_b64, ...rest }: WireOutcome): RunOutcome {
  return { ...rest, stdout: Buffer.from(stdout_b64, 'base64').toString('utf8'), stderr: Buffer.from(stderr_b64, 'base64').toString('utf8') };
}

/** Reads newline-separated JSON messages from a stream's chunks; a line that is not JSON is skipped
 *  (only the user's own processes reach the socket, but none of them may crash the other side). */
export function lineReader<T>(onMessage: (m: T) => void): (chunk: Buffer) => void {
  let rest = '';
  return (chunk) => {
    const lines = (rest + chunk.toString('utf8')).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      let m: T;
      try {
        m = JSON.parse(line) as T;
      } catch {
        continue;
      }
      onMessage(m);
    }
  };
}
