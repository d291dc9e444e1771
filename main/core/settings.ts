// The host's settings: one validated JSON file in the home, read by the daemon and written by the CLI/app.
import { existsSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { writeJsonAtomic } from './fs/atomicWrite';
import { UserError } from './errors';

export const settingsSchema = z.strictObject({
  spool: z.string().min(1).nullable().default(null),
  host_id: z.string().min(1).default(() => randomUUID()),
  /** Requests older than this when claimed, or when about to start, expire. */
  max_request_age_s: z.number().int().min(60).max(30 * 86400).default(86400),
  /** The queue is rescanned this often even without file events (shared mounts often deliver none). */
  rescan_interval_ms: z.number().int().min(50).max(60_000).default(1000),
  /** Watch queue/ for file events; the rescan runs either way (turn off where a mount sends none or junk). */
  file_events: z.boolean().default(true),
  /** Runs at once across all operations; each operation also has its own `concurrency`. */
  max_concurrent_runs: z.number().int().min(1).max(64).default(4),
  /** On a clean stop, running work gets this long to finish before it is terminated. */
  shutdown_grace_s: z.number().int().min(0).max(3600).default(10),
  /** After SIGTERM to a process group, SIGKILL follows after this long. */
  kill_grace_s: z.number().min(0).max(600).default(5),
});

export type Settings = z.infer<typeof settingsSchema>;

export function readSettings(file: string): Settings {
  if (!existsSync(file)) return settingsSchema.parse({});
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UserError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  const parsed = settingsSchema.safeParse(raw);
  if (!parsed.success) throw new UserError(`${file} is invalid:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export function writeSettings(file: string, settings: Settings): void {
  writeJsonAtomic(file, settingsSchema.parse(settings));
}
