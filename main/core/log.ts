// One logger for the core, scoped per module (electron-log works under plain Node and inside Electron).
import path from 'node:path';
import { inspect } from 'node:util';
import log from 'electron-log/node';
import { visibleLines } from '../../shared/text/visible';

export type Logger = ReturnType<typeof log.scope>;

// Until a home is known (short CLI commands, tests) nothing goes to a file; the console always gets
// stderr, so that stdout stays clean for `--json` output.
log.transports.file.level = false;
log.transports.console.level = 'warn';
log.transports.console.writeFn = ({ message }) => console.error(...message.data);

// Log lines carry what the sandbox wrote (operation names, file names, error messages): on a terminal
// or in a viewer its escape sequences would act, and a line feed would start a forged entry. So every
// part of a message is escaped (shared/text/visible) before any transport formats it (the console's
// own colours are added after), and each further line of a message is indented, which no entry's first
// line (`[date] [level] ...`) is.
function asText(part: unknown): string {
  if (typeof part === 'string') return part;
  if (part instanceof Error) return part.stack ?? String(part);
  return typeof part === 'object' && part !== null ? inspect(part) : String(part);
}
log.hooks.push((message) => ({ ...message, data: message.data.map((part) => visibleLines(asText(part)).replaceAll('\n', '\n    ')) }));

/** Sends log lines to `<home>/logs/dumbwaiter.log` (rotated by size) and, at `consoleLevel`, to stderr. */
export function configureLogging(logsDir: string, consoleLevel: 'info' | 'warn' | false = 'info'): void {
  log.transports.file.resolvePathFn = () => path.join(logsDir, 'dumbwaiter.log');
  log.transports.file.maxSize = 10 * 1024 * 1024;
  log.transports.file.level = 'info';
  log.transports.console.level = consoleLevel;
}

export function scopedLogger(scope: string): Logger {
  return log.scope(scope);
}
