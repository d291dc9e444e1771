// One logger for the core, scoped per module (electron-log works under plain Node and inside Electron).
import path from 'node:path';
import log from 'electron-log/node';

export type Logger = ReturnType<typeof log.scope>;

// Until a home is known (short CLI commands, tests) nothing goes to a file; the console always gets
// stderr, so that stdout stays clean for `--json` output.
log.transports.file.level = false;
log.transports.console.level = 'warn';
log.transports.console.writeFn = ({ message }) => console.error(...message.data);

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
