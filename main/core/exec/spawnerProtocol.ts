// What the daemon and its spawner process (spawnerMain.ts) say to each other over the spawner's IPC
// channel. Types only: the spawner loads nothing of the daemon's for them.
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
  | { type: 'done'; run: number; outcome: RunOutcome };
