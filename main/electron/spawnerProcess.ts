// The app's spawner process (core/exec/spawnerMain.ts, bundled as spawner.cjs): an Electron utility
// process, since the app's binary cannot run a script as plain Node (its runAsNode fuse is off). It
// talks over its parentPort, and ends with the app, or when the daemon lets it go for having no run
// (spawner.ts: close() kills it, as it holds no run then).
import { utilityProcess } from 'electron';
import path from 'node:path';
import type { LaunchSpawner } from '../core/exec/spawner';
import type { FromSpawner } from '../core/exec/spawnerProtocol';

export function utilitySpawner(entry: string): LaunchSpawner {
  return () => {
    const child = utilityProcess.fork(entry, [], { serviceName: 'Dumbwaiter spawner', stdio: 'ignore', cwd: path.parse(process.cwd()).root });
    let exited: ((why: string) => void) | null = null;
    child.once('exit', (code) => exited?.(`exited with code ${code}`));
    return {
      get pid() {
        return child.pid;
      },
      send: (m) => child.postMessage(m),
      onMessage: (fn) => child.on('message', (m: FromSpawner) => fn(m)),
      onExit: (fn) => (exited = fn),
      // It has no channel to close: ended at once (the runs it started are process groups of their own).
      close: () => void child.kill(),
    };
  };
}
