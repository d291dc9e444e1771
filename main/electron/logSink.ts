// The desktop app's log sink: the core's lines, escaped already (core/log.ts), handed to electron-log
// (its levels, scopes and console), whose file transport here is the core's own appender aimed at
// `file`. electron-log's stock file transport opens and closes the file for every line and formats it
// from a template: three times the core writer's CPU a request (bench/sections/app.ts measures this sink
// against the core's writer). The logger is a parameter, so that the same set-up runs in the app and in
// the benchmark and tests, where there is no Electron.
import type { LogFunctions, LogMessage, NodeLogger } from 'electron-log';
import { LogFile, fileLine, type LogLevel, type LogSink } from '../core/log';

/** Sets `logger` up as the app uses it (its file at info, its console at warnings) and makes it a sink. */
export function electronLogSink(logger: NodeLogger, file: string): LogSink {
  const out = new LogFile(file);
  logger.transports.file.level = false;
  logger.transports.appFile = Object.assign((m: LogMessage) => out.append(`${fileLine(m.date, m.level as LogLevel, m.scope ?? '', m.data.join(' '))}\n`), {
    level: 'info' as const,
    transforms: [],
  });
  logger.transports.console.level = 'warn';
  const rank = (level: string) => logger.levels.indexOf(level);
  /** One scoped logger per core module, made once. */
  const scopes = new Map<string, LogFunctions>();
  /** The transports that take `level` now (their levels may be changed at any time). */
  const takes = (level: LogLevel) => Object.values(logger.transports).filter((x) => x != null && x.level !== false && rank(x.level) >= rank(level));
  return {
    accepts: (level) => takes(level).length > 0,
    write(level, scope, text) {
      // A line the file alone takes (the daemon's info lines) is appended here, as the file transport
      // would, without electron-log's dispatch: a microsecond a line, which doubled a request's log cost.
      const t = takes(level);
      if (t.length === 1 && t[0] === logger.transports.appFile) return out.append(`${fileLine(new Date(), level, scope, text)}\n`);
      let log = scopes.get(scope);
      if (!log) scopes.set(scope, (log = logger.scope(scope)));
      log[level](text);
    },
  };
}
