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
/** The home's log file, once configured. */
let file: LogFile | null = null;
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
    file?.close();
    file = new LogFile(next);
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

const timeOf = (at: Date) => `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}.${String(at.getMilliseconds()).padStart(3, '0')}`;

/** A log file's line, without its line end: `[date time] [level] (scope) text`, the scopes padded to the
 *  longest so far. Every sink that writes a file writes this, so that the files read alike. */
export function fileLine(at: Date, level: LogLevel, name: string, text: string): string {
  return `[${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${timeOf(at)}] [${level}]${' '.repeat(5 - level.length)} ${`(${name})`.padEnd(labelWidth)} ${text}`;
}

/** The core's own writer: `<home>/logs/dumbwaiter.log` once configured, and stderr at its level. */
export const coreWriter: LogSink = {
  accepts: (level) => file !== null || toConsole(level),
  write(level, name, text) {
    const now = new Date();
    file?.append(`${fileLine(now, level, name, text)}\n`);
    if (toConsole(level)) {
      try {
        process.stderr.write(`${timeOf(now)} ${`(${name})`.padEnd(labelWidth)} › ${text}\n`);
      } catch {
        /* no stderr (a closed pipe): the file still has it */
      }
    }
  },
};

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * A log file, appended one line at a time with one system call (O_APPEND: the command line's processes
 * and the daemon share the home's), private to its owner, renamed to `<name>.old.log` (replacing the
 * one before) once it would pass MAX_FILE_BYTES. A file that cannot be written (a full disk) is said
 * once on stderr, and tried again at the next line: logging never stops the host, nor stops for good.
 */
export class LogFile {
  private fd: number | null = null;
  private bytes = 0;
  /** Its last write failed (said once, until one works again). */
  private failed = false;

  constructor(readonly path: string) {}

  append(line: string): void {
    const buf = Buffer.from(line, 'utf8');
    try {
      if (this.fd !== null && this.bytes + buf.length > MAX_FILE_BYTES) this.rotate();
      if (this.fd === null) this.open();
      writeSync(this.fd!, buf);
      this.bytes += buf.length;
      this.failed = false;
    } catch (e) {
      this.close();
      if (!this.failed) process.stderr.write(`cannot write the log file ${this.path}: ${(e as Error).message}\n`);
      this.failed = true;
    }
  }

  close(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      /* closed already */
    }
    this.fd = null;
  }

  /** The full file becomes <name>.old.log; another process may have just done so (then it is gone). */
  private rotate(): void {
    this.close();
    try {
      renameSync(this.path, this.path.replace(/\.log$/, '.old.log'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }

  private open(): void {
    mkdirSync(path.dirname(this.path), { recursive: true });
    this.fd = openSync(this.path, 'a', 0o600);
    this.bytes = fstatSync(this.fd).size;
  }
}
