// One logger for the core, scoped per module, the same under plain Node and inside Electron. Lines go to
// a sink: by default the core's own writer, where each line is written at once with one system call to
// the file and one to stderr (the daemon logs a few lines per request, and a general-purpose logger's
// formatting pipeline cost a tenth of its CPU in a burst); the desktop app installs its own (electron-log,
// main/electron/logging.ts). Either way a line is escaped here first, once.
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import { visibleLines } from '../../shared/text/visible';

export type LogLevel = 'error' | 'warn' | 'info';
type Level = LogLevel;
const RANK: Record<Level, number> = { error: 0, warn: 1, info: 2 };

/** Where escaped log lines go. `accepts` is asked first, so that a line nobody keeps costs nothing. */
export interface LogSink {
  accepts(level: LogLevel): boolean;
  /** `text`: the message, escaped, each further line indented; `scope`: the module's name. */
  write(level: LogLevel, scope: string, text: string): void;
}

export interface Logger {
  error(...parts: unknown[]): void;
  warn(...parts: unknown[]): void;
  info(...parts: unknown[]): void;
}

/** The file is renamed to `dumbwaiter.old.log` (replacing the one before) once it would pass this. */
const MAX_FILE_BYTES = 10 * 1024 * 1024;

// Until a home is known (short CLI commands, tests) nothing goes to a file; the console always gets
// stderr, so that stdout stays clean for `--json` output.
let consoleLevel: Level | false = 'warn';
/** The log file; `failed`: its last write failed (said once, until one works again). */
let file: { path: string; fd: number | null; bytes: number; failed: boolean } | null = null;
/** Scope labels are padded to the longest one made so far, so that the messages line up. */
let labelWidth = 0;
/** Another sink than the core's writer, once one is installed (the desktop app's). */
let installed: LogSink | null = null;

/** Sends every line to `sink` from now on (null: back to the core's own writer). */
export function useLogSink(sink: LogSink | null): void {
  installed = sink;
}

/** Sends log lines to `<home>/logs/dumbwaiter.log` (at info, rotated by size) and, at `consoleLevel`, to stderr. */
export function configureLogging(logsDir: string, level: 'info' | 'warn' | false = 'info'): void {
  const next = path.join(logsDir, 'dumbwaiter.log');
  if (file?.path !== next) {
    closeFile();
    file = { path: next, fd: null, bytes: 0, failed: false };
  }
  consoleLevel = level;
}

export function scopedLogger(scope: string): Logger {
  const label = `(${scope})`;
  labelWidth = Math.max(labelWidth, label.length);
  const at = (level: Level) => (...parts: unknown[]) => {
    const sink = installed ?? coreWriter;
    if (sink.accepts(level)) sink.write(level, scope, parts.map((p) => visibleLines(asText(p)).replaceAll('\n', '\n    ')).join(' '));
  };
  return { error: at('error'), warn: at('warn'), info: at('info') };
}

// Log lines carry what the sandbox wrote (operation names, file names, error messages): on a terminal
// or in a viewer its escape sequences would act, and a line feed would start a forged entry. So every
// part of a message is escaped (shared/text/visible), and each further line of a message is indented,
// which no entry's first line (`[date] [level] ...`) is.
function asText(part: unknown): string {
  if (typeof part === 'string') return part;
  if (part instanceof Error) return part.stack ?? String(part);
  return typeof part === 'object' && part !== null ? inspect(part) : String(part);
}

const toConsole = (level: Level) => consoleLevel !== false && RANK[level] <= RANK[consoleLevel];

/** The core's own writer: `<home>/logs/dumbwaiter.log` once configured, and stderr at its level. */
export const coreWriter: LogSink = {
  accepts: (level) => file !== null || toConsole(level),
  write(level, name, text) {
    const now = new Date();
    const time = `${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())}.${String(now.getMilliseconds()).padStart(3, '0')}`;
    const scope = `(${name})`.padEnd(labelWidth);
    if (file !== null) toLogFile(`[${now.getFullYear()}-${two(now.getMonth() + 1)}-${two(now.getDate())} ${time}] [${level}]${' '.repeat(5 - level.length)} ${scope} ${text}\n`);
    if (toConsole(level)) {
      try {
        process.stderr.write(`${time} ${scope} › ${text}\n`);
      } catch {
        /* no stderr (a closed pipe): the file still has it */
      }
    }
  },
};

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Appends one line (O_APPEND: the command line's processes and the daemon share the file). A file
 *  that cannot be written (a full disk) is said once on stderr, and tried again at the next line:
 *  logging never stops the host, nor stops for good. */
function toLogFile(line: string): void {
  const f = file!;
  const buf = Buffer.from(line, 'utf8');
  try {
    if (f.fd !== null && f.bytes + buf.length > MAX_FILE_BYTES) rotate(f);
    if (f.fd === null) open(f);
    writeSync(f.fd!, buf);
    f.bytes += buf.length;
    f.failed = false;
  } catch (e) {
    closeFile();
    if (!f.failed) process.stderr.write(`cannot write the log file ${f.path}: ${(e as Error).message}\n`);
    f.failed = true;
  }
}

/** The full file becomes dumbwaiter.old.log; another process may have just done so (then it is gone). */
function rotate(f: NonNullable<typeof file>): void {
  closeFile();
  try {
    renameSync(f.path, f.path.replace(/\.log$/, '.old.log'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

function open(f: NonNullable<typeof file>): void {
  mkdirSync(path.dirname(f.path), { recursive: true });
  f.fd = openSync(f.path, 'a', 0o600);
  f.bytes = fstatSync(f.fd).size;
}

function closeFile(): void {
  if (file?.fd == null) return;
  try {
    closeSync(file.fd);
  } catch {
    /* closed already */
  }
  file.fd = null;
}
