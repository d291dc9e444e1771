// What-if preload for bench/profile.ts (never used by `npm run bench`): the daemon without its
// per-request log lines. electron-log's console and file transports are held at "warn", whatever
// configureLogging asks for, so the difference to the default run is what info logging costs.
import log from 'electron-log/node';

for (const t of [log.transports.console, log.transports.file]) {
  Object.defineProperty(t, 'level', { get: () => 'warn', set: () => {}, configurable: true });
}
