// The desktop app's status: how soon a request's end reaches the app's windows, pushed. The app's own
// parts run here as they do in its main process (main/electron/main.ts), without Electron: the status
// feed (core/app/statusFeed.ts) on a Host, fed either by the daemon in the same process
// (Daemon.onChange) or, when the command line's daemon holds the home, by the home folder's watch
// (followHome). What the feed emits is what the app sends to its windows at once (sendEvent).
// And what the daemon's logging costs a request in the app: the lines its in-process daemon wrote, written
// again through the core's own writer and through the app's sink (electron-log, main/electron/logSink.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import electronLog from 'electron-log/node';
import { configureLogging, coreWriter, useLogSink, type LogLevel, type LogSink } from '../../main/core/log';
import { electronLogSink } from '../../main/electron/logSink';
import { Daemon } from '../../main/core/daemon/daemon';
import { Host } from '../../main/core/host/host';
import { HostCore } from '../../main/core/hostCore';
import { StatusFeed, followHome } from '../../main/core/app/statusFeed';
import { homePaths } from '../../main/core/home';
import type { BenchHost } from '../lib/host';

export interface AppPush {
  /** ms from the request's `finished` audit entry (its final commit) to the feed's `run.finished`. */
  in_process: number[];
  /** The same, the daemon being another process (the command line's). */
  other_process: number[];
  /** The in-process daemon's log lines (what the app's sink is given), for measureAppLogging. */
  lines: Line[];
}

type Line = [LogLevel, string, string];

export interface AppLogging {
  lines_per_request: number;
  /** CPU µs a request's lines cost, written through each sink to its file (each the median of `rounds`). */
  core_us: number;
  electron_log_us: number;
}

/** `n` no-op requests in turn, each timed from its final commit to the event the app would send. */
async function pushTimes(host: BenchHost, n: number, svc: Host, follow: (feed: StatusFeed) => () => void): Promise<number[]> {
  const db = new Database(path.join(host.home, 'ledger.sqlite'), { readonly: true, fileMustExist: true });
  const finishedAt = db.prepare("SELECT at FROM audit WHERE request_id = ? AND kind = 'finished'");
  const waiting = new Map<string, (epoch: number) => void>();
  const feed = new StatusFeed(svc, (event, payload) => {
    if (event === 'run.finished') waiting.get((payload as { id: string }).id)?.(Date.now());
  });
  feed.poll(); // the first pass sets where "finished since" starts, as the app's first does
  const stop = follow(feed);
  const times: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const id = host.nextId('app');
      const pushed = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no run.finished for ${id} within 30 s`)), 30_000);
        waiting.set(id, (epoch) => {
          clearTimeout(timer);
          resolve(epoch);
        });
      });
      host.submitFast(id);
      const at = await pushed;
      waiting.delete(id);
      times.push(at - Date.parse((finishedAt.get(id) as { at: string }).at));
    }
  } finally {
    stop();
    feed.close();
    db.close();
  }
  return times;
}

export async function measureAppPush(inProcessHost: BenchHost, otherProcessHost: BenchHost, n: number): Promise<AppPush> {
  // As the app does: one core for its daemon and its service.
  const core = HostCore.open(inProcessHost.home);
  const daemon = await Daemon.start({ homeDir: inProcessHost.home, core, command: 'the benchmark (as the desktop app)', consoleLog: false });
  // Its lines still go to the core's writer (the file in the home), and are kept for measureAppLogging.
  const lines: Line[] = [];
  useLogSink({ accepts: (level) => coreWriter.accepts(level), write: (...line) => (lines.push(line), coreWriter.write(...line)) });
  let in_process: number[];
  try {
    in_process = await pushTimes(inProcessHost, n, new Host(core), (feed) => daemon.onChange(() => feed.changed()));
  } finally {
    useLogSink(null);
    await daemon.stop();
    core.close();
  }
  const d = otherProcessHost.startDaemon();
  await d.ready();
  let other_process: number[];
  const svc = new Host(otherProcessHost.home);
  try {
    other_process = await pushTimes(otherProcessHost, n, svc, (feed) => {
      const watch = followHome(homePaths(otherProcessHost.home), () => feed.changed());
      return () => watch?.close();
    });
  } finally {
    svc.close();
    await d.stop();
  }
  return { in_process, other_process, lines };
}

/** The daemon's lines of `requests` requests, written `rounds` times through the core's writer (into the
 *  home's log, as the in-process daemon left it configured) and through the app's electron-log sink (as
 *  main/electron/logging.ts sets it up: its file at info, its console at warn). */
export function measureAppLogging(host: BenchHost, lines: Line[], requests: number, rounds: number): AppLogging {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-bench-log-'));
  try {
    configureLogging(homePaths(host.home).logs, false);
    // The requests' lines again and again, so that a round is long enough to time (some 5,000 lines).
    const times = Math.max(1, Math.ceil(5000 / Math.max(1, lines.length)));
    const cost = (sink: LogSink) => {
      const each: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const t = process.cpuUsage();
        for (let i = 0; i < times; i++) for (const [level, scope, text] of lines) if (sink.accepts(level)) sink.write(level, scope, text);
        const used = process.cpuUsage(t);
        each.push((used.user + used.system) / (requests * times));
      }
      return each.sort((a, b) => a - b)[Math.floor(each.length / 2)]!;
    };
    const electron = electronLogSink(electronLog.create({ logId: 'bench' }), path.join(dir, 'dumbwaiter.log'));
    cost(coreWriter); // warm both
    cost(electron);
    return { lines_per_request: lines.length / requests, core_us: cost(coreWriter), electron_log_us: cost(electron) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
