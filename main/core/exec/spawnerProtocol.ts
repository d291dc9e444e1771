// What the daemon and its spawner process (spawnerMain.ts) say to each other over the spawner's IPC
// channel. Types, and how a run's outcome is carried: the spawner loads nothing of the daemon's for them.
import type { RunPlan } from '../allowlist/plan';
import type { RunOutcome } from './executor';
import type { SharedFile } from './sharedFile';

/** From the daemon. `run` numbers a run within one spawner process. */
export type ToSpawner =
  | { type: 'start'; run: number; requestId: string; plan: RunPlan; logFile: SharedFile | null; killGraceMs: number }
  | { type: 'terminate'; run: number; reason: string };

/** From the spawner: `ready` once it listens; `started` when a run has its process (or `failed` when
 *  the spawn threw: it never started); `done` with its outcome. */
export type FromSpawner =
  | { type: 'ready' }
  | { type: 'started'; run: number; pid: number | null; marker: string | null; since: number | null }
  | { type: 'failed'; run: number; message: string }
  | { type: 'done'; run: number; outcome: WireOutcome };

/** A run's outcome on the channel: its output excerpts as base64 of their UTF-8, since the channel's
 *  JSON would escape each control byte of them as 6 characters (a NUL-filled excerpt, 6 times its size). */
export type WireOutcome = Omit<RunOutcome, 'stdout' | 'stderr'> & { stdout_b64: string; stderr_b64: string };

export function toWire({ stdout, stderr, ...rest }: RunOutcome): WireOutcome {
  return { ...rest, stdout_b64: Buffer.from(stdout, 'utf8').toString('base64'), stderr_b64: Buffer.from(stderr, 'utf8').toString('base64') };
}

export function fromWire({ stdout_b64, stderr_b64, ...rest }: WireOutcome): RunOutcome {
  return { ...rest, stdout: Buffer.from(stdout_b64, 'base64').toString('utf8'), stderr: Buffer.from(stderr_b64, 'base64').toString('utf8') };
}
