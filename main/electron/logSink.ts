// The desktop app's log sink: the core's lines, escaped already (core/log.ts), handed to electron-log,
// which writes them where the OS keeps an app's logs. It takes the logger, so that the same adapter runs
// with electron-log/main in the app and electron-log/node in the benchmark and tests (no Electron there).
import type { LogFunctions, NodeLogger } from 'electron-log';
import type { LogSink } from '../core/log';

export function electronLogSink(logger: NodeLogger): LogSink {
  const rank = (level: string) => logger.levels.indexOf(level);
  /** One scoped logger per core module, made once (electron-log pads the scope labels itself). */
  const scopes = new Map<string, LogFunctions>();
  return {
    accepts: (level) => Object.values(logger.transports).some((t) => t != null && t.level !== false && rank(t.level) >= rank(level)),
    write(level, scope, text) {
      let log = scopes.get(scope);
      if (!log) scopes.set(scope, (log = logger.scope(scope)));
      log[level](text);
    },
  };
}
