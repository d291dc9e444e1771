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
  /** One scoped logger per core module, made once. */
  const scopes = new Map<string, LogFunctions>();
  const takes = transportsTaking(logger);
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

type Transport = NodeLogger['transports'][string];

/**
 * The transports that take a level now. Their levels, the transports and the list of levels may be
 * changed at any time, so the answers are kept only while every transport is the same at the same
 * level and the list is the same array of the same length: that check reads a few properties, where
 * working the answer out again (a filter over the transports, two searches of the levels' list) cost
 * a request's lines more than the rest of the sink.
 */
function transportsTaking(logger: NodeLogger): (level: LogLevel) => readonly Transport[] {
  let seen: Transport[] = [];
  let seenLevels: (string | false | undefined)[] = [];
  let levels: string[] = [];
  let levelsLength = -1;
  let answers = new Map<LogLevel, Transport[]>();
  const unchanged = () => {
    if (logger.levels !== levels || levels.length !== levelsLength) return false;
    let i = 0;
    for (const name in logger.transports) {
      const x = logger.transports[name];
      if (x !== seen[i] || x?.level !== seenLevels[i]) return false;
      i++;
    }
    return i === seen.length;
  };
  return (level) => {
    if (!unchanged()) {
      seen = Object.values(logger.transports);
      seenLevels = seen.map((x) => x?.level);
      levels = logger.levels;
      levelsLength = levels.length;
      answers = new Map();
    }
    let t = answers.get(level);
    if (!t) {
      const rank = (l: string) => levels.indexOf(l);
      t = seen.filter((x) => x != null && x.level !== false && rank(x.level) >= rank(level));
      answers.set(level, t);
    }
    return t;
  };
}
