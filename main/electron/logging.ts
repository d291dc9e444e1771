// The desktop app's log: electron-log, writing to the file in the OS's usual place for an app's logs
// (app.getPath('logs'): ~/Library/Logs/<app> on macOS, %APPDATA%\<app>\logs on Windows,
// ~/.config/<app>/logs on Linux). The core's lines (the daemon's, the IPC's, the app's, the page's
// reported errors) reach it through the core's sink (core/log.ts), escaped there.
//
// electron-log/node, not electron-log/main: the main flavour listens on ipcMain for its renderer side as
// soon as it is loaded ('__ELECTRON_LOG__', outside the contract, unchecked), and our pages reach the
// log only through the contract's app.reportError, bounded and rate-limited.
import { app, shell } from 'electron';
import log from 'electron-log/node';
import path from 'node:path';
import { useLogSink } from '../core/log';
import { electronLogSink } from './logSink';

const LOG_FILE = 'dumbwaiter.log';

/** Sends every log line of this process to electron-log's file (info and above) and console (warnings). */
export function startLogging(): void {
  useLogSink(electronLogSink(log, path.join(app.getPath('logs'), LOG_FILE)));
}

/** The logs folder in the OS's file manager; the OS's error text when it could not be opened. */
export async function openLogsFolder(): Promise<string | null> {
  return (await shell.openPath(app.getPath('logs'))) || null;
}
