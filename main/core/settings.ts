// The host's settings: one validated JSON file in the home, read by the daemon and written by the CLI/app.
import { existsSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from './fs/atomicWrite';
import { UserError } from './errors';
import { DEFAULT_SPOOL, SPOOL_NAME, SPOOL_NAME_RULE } from '../../shared/protocol/ids';
import type { CeilingView, SettingsView } from '../../shared/ipc/views';

const DAY_S = 86400;

/** A spend ceiling: a limit on runs, cost units and/or run time within a rolling window. */
export const ceilingSchema = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a name of letters, digits, _ . - (at most 64)'),
    /** global: all keys together; key: each key on its own (or only `key_id`, when given). */
    per: z.enum(['global', 'key']).default('global'),
    key_id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional(),
    window_s: z.number().int().min(60).max(366 * DAY_S),
    max_runs: z.number().int().min(0).optional(),
    max_cost: z.number().int().min(0).optional(),
    max_run_time_s: z.number().int().min(0).optional(),
    /** reject: refuse with spend_ceiling; ask: send the request to a human for approval. */
    action: z.enum(['reject', 'ask']).default('reject'),
  })
  .refine((c) => c.max_runs !== undefined || c.max_cost !== undefined || c.max_run_time_s !== undefined, {
    message: 'a ceiling needs at least one of max_runs, max_cost, max_run_time_s',
  })
  .refine((c) => c.key_id === undefined || c.per === 'key', { message: 'key_id goes with per: key' });

export type Ceiling = z.infer<typeof ceilingSchema>;

/** One spool: a folder shared with one sandbox. `dir` is absolute: a relative one would mean a
 *  different folder for each process's working folder. */
export const spoolEntrySchema = z.strictObject({
  name: z.string().regex(SPOOL_NAME, `a spool name is ${SPOOL_NAME_RULE}`),
  dir: z.string().min(1).refine((p) => path.isAbsolute(p), 'a spool folder must be an absolute path'),
});
export type SpoolEntry = z.infer<typeof spoolEntrySchema>;


export const settingsSchema = z.strictObject({
  /** Every spool this home serves, one per sandbox (names and folders unique). */
  spools: z
    .array(spoolEntrySchema)
    .max(64)
    .default([])
    .refine((ss) => new Set(ss.map((s) => s.name)).size === ss.length, { message: 'spool names must be unique' })
    .refine((ss) => new Set(ss.map((s) => path.resolve(s.dir))).size === ss.length, { message: 'two spools cannot share a folder' }),
  host_id: z.string().min(1).default(() => randomUUID()),
  /** Requests older than this when claimed, or when about to start, expire. */
  max_request_age_s: z.number().int().min(60).max(30 * 86400).default(86400),
  /** The queue is rescanned this often where file events do not come (file_events off, a mount that
   *  delivers none or is shared with another machine, a watch lost to an error); while they come, 30
   *  times less often (at most once a minute). */
  rescan_interval_ms: z.number().int().min(50).max(60_000).default(1000),
  /** Watch queue/ for file events; the rescan runs either way (turn off where a mount sends none or junk). */
  file_events: z.boolean().default(true),
  /** Runs at once across all operations; each operation also has its own `concurrency`. */
  max_concurrent_runs: z.number().int().min(1).max(64).default(4),
  /** On a clean stop, running work gets this long to finish before it is terminated. */
  shutdown_grace_s: z.number().int().min(0).max(3600).default(10),
  /** What a clean stop does with the runs still going: `stop` gives them shutdown_grace_s, then ends
   *  them (recorded uncertain); `leave` leaves them running, recorded when the host starts again. The
   *  desktop app's Quit asks, with this as its default answer. */
  runs_on_stop: z.enum(['stop', 'leave']).default('stop'),
  /** After SIGTERM to a process group, SIGKILL follows after this long. */
  kill_grace_s: z.number().min(0).max(600).default(5),
  /** A request waiting for a human longer than this is denied. */
  approval_timeout_s: z.number().int().min(1).max(30 * DAY_S).default(3600),
  ceilings: z.array(ceilingSchema).default([]).refine((cs) => new Set(cs.map((c) => c.name)).size === cs.length, {
    message: 'ceiling names must be unique',
  }),
  /** Desktop app: start at login, and a notification for each request that needs approval. */
  start_at_login: z.boolean().default(false),
  notifications: z.boolean().default(true),
  /** Finished results, logs, inbox messages and quarantined files leave the spool after this many days. */
  retention_spool_days: z.number().min(0.01).max(3650).default(7),
  /** Finished requests (and so their idempotency bindings) and audit entries leave the ledger after this. */
  retention_ledger_days: z.number().min(1).max(36500).default(90),
}).refine((s) => s.retention_ledger_days * DAY_S >= s.max_request_age_s + DAY_S, {
  message: 'retention_ledger_days must cover max_request_age_s plus one day: idempotency bindings must live that long',
  path: ['retention_ledger_days'],
}).refine((s) => s.ceilings.every((c) => c.window_s <= s.retention_ledger_days * DAY_S), {
  message: "retention_ledger_days must cover every ceiling's window_s: spend is counted from the ledger",
  path: ['retention_ledger_days'],
});

export type Settings = z.infer<typeof settingsSchema>;

// The schemas stay here (they check paths with node:path); what the app is shown must be exactly what
// they give: a field added to one and not the other fails to compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameShape: [Same<Settings, SettingsView>, Same<Ceiling, CeilingView>] = [true, true];
void _sameShape;

export function readSettings(file: string): Settings {
  if (!existsSync(file)) return settingsSchema.parse({});
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UserError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  const parsed = settingsSchema.safeParse(migrated(raw));
  if (!parsed.success) throw new UserError(`${file} is invalid:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** An earlier version's single `spool: DIR` is the spool named `default`. */
function migrated(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !('spool' in raw)) return raw;
  const { spool, ...rest } = raw as Record<string, unknown>;
  if ('spools' in rest) return raw; // both: let validation say that `spool` is unknown
  return { ...rest, spools: typeof spool === 'string' ? [{ name: DEFAULT_SPOOL, dir: spool }] : [] };
}

export function writeSettings(file: string, settings: Settings): void {
  writeJsonAtomic(file, settingsSchema.parse(settings));
}

/** Settings a user may change with `config set` (the host's identity stays fixed; spools change only
 *  through `dumbwaiter spools` and the host's spool calls (host/spools.ts), which check the folder). */
export const SETTABLE = Object.keys(settingsSchema.shape).filter((k) => k !== 'host_id' && k !== 'spools');

/** Parses a command-line value: JSON when it is JSON (numbers, booleans, arrays), else the text itself. */
export function parseSettingValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A copy of `current` with one setting changed, validated as a whole. Throws a UserError saying why not. */
export function withSetting(current: Settings, name: string, value: unknown): Settings {
  if (name === 'spool' || name === 'spools') {
    throw new UserError('spools are not changed like other settings: use `dumbwaiter spools add NAME DIR` / `spools remove NAME`, or Settings > Spools (a spool takes only a new or empty folder)');
  }
  if (!SETTABLE.includes(name)) throw new UserError(`unknown setting "${name}" (settable: ${SETTABLE.join(', ')})`);
  const parsed = settingsSchema.safeParse({ ...current, [name]: value });
  if (!parsed.success) throw new UserError(`invalid value for ${name}:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The ceilings a new list drops or changes, by name (adding one only limits more). */
export function loosenedCeilings(before: Ceiling[], after: Ceiling[]): string[] {
  const next = new Map(after.map((c) => [c.name, JSON.stringify(c)]));
  return before.filter((c) => next.get(c.name) !== JSON.stringify(c)).map((c) => (next.has(c.name) ? `${c.name} (changed)` : `${c.name} (removed)`));
}

type Loosening<K extends keyof Settings> = ((before: Settings[K], after: Settings[K]) => boolean) | null;
const longer = (before: number, after: number) => after > before;

/**
 * Which change of each setting lets more run, or lets it run with less oversight or less trace: the
 * app asks the person natively before those (a page gone wrong must not make them alone). null: no
 * change of it does. Every setting is listed, so a new one must be decided here.
 */
export const LOOSENS: { [K in keyof Settings]: { loosens: Loosening<K>; why: string } } = {
  spools: { loosens: null, why: 'changed only through the spool calls, which ask themselves' },
  host_id: { loosens: null, why: 'not settable' },
  // A request signed long ago (by an agent since stopped, or a file copied into the queue later) still runs.
  max_request_age_s: { loosens: longer, why: 'Older requests still run when they are picked up.' },
  // How soon a request is seen, not whether it may run.
  rescan_interval_ms: { loosens: null, why: 'timing only' },
  file_events: { loosens: null, why: 'timing only' },
  // More runs at once: a burst gets further before the spend ceilings, checked as each run starts, stop it.
  max_concurrent_runs: { loosens: longer, why: 'More runs go at once, so a burst gets further before spend ceilings stop it.' },
  // A run told to end (by a stop, a timeout or a cancel) goes on that much longer.
  shutdown_grace_s: { loosens: longer, why: 'Runs go on longer after the host is told to stop.' },
  // Left running, a run goes on with no host to end it: its timeout, a cancel, a spend ceiling's count
  // wait for the next start.
  runs_on_stop: { loosens: (b, a) => b === 'stop' && a === 'leave', why: 'Runs go on after the host stops, with nothing to end them (a timeout, a cancel) until it starts again.' },
  kill_grace_s: { loosens: longer, why: 'A run that ignores being ended (timeout, cancel) goes on longer before it is killed.' },
  // A card stays approvable long after the moment it was made for.
  approval_timeout_s: { loosens: longer, why: 'A request waits longer for approval before it is denied: it can be approved long after it was made.' },
  ceilings: { loosens: (b, a) => loosenedCeilings(b, a).length > 0, why: 'Requests they stopped or sent to you for approval may then run.' },
  // Whether the host runs at login, not what it lets run (the tray shows it running).
  start_at_login: { loosens: null, why: 'when the host runs, not what it allows' },
  // Off, a request waiting for the person no longer reaches them: nobody sees what is asked.
  notifications: { loosens: (b, a) => b && !a, why: 'You are no longer told when a request waits for your approval.' },
  // Run output (which may hold what the operations read) stays longer in the folder the sandbox reads.
  retention_spool_days: { loosens: longer, why: 'Results and logs stay longer in the spool, where the sandbox reads them.' },
  // Shorter: the evidence of what ran and who approved it goes sooner.
  retention_ledger_days: { loosens: (b, a) => a < b, why: 'The record of what ran and who approved it is deleted sooner.' },
};

/** Whether changing setting `name` from `before` to `after` loosens it (see LOOSENS). */
export function loosens(name: keyof Settings, before: Settings, after: Settings): boolean {
  const rule = LOOSENS[name].loosens as Loosening<typeof name>;
  return rule !== null && (rule as (b: unknown, a: unknown) => boolean)(before[name], after[name]);
}

/** `settings` with the ceilings pinned to key `from` pinned to `to` instead (a rotated key keeps them). */
export function withCeilingsMoved(settings: Settings, from: string, to: string): Settings {
  return { ...settings, ceilings: settings.ceilings.map((c) => (c.key_id === from ? { ...c, key_id: to } : c)) };
}
