// The spawner process: a small long-lived Node process that starts the daemon's runs (executor.ts), so
// that fork() never copies the daemon's heap (its cost grows with the caller's memory: docs/BENCHMARKS.md)
// and the daemon's main thread does not wait in spawn(). It loads the executor's modules and nothing
// else, and does what the daemon asks over its IPC channel (spawnerProtocol.ts): a child_process.fork
// channel, or an Electron utility process's parentPort. Once the channel closes (the daemon stopped or
// died, or let it go for having no run: spawner.ts) it exits at once: the runs are process groups of their own and go on, as after a host crash,
// and the next host finds them by their pid and marker (daemon/orphans.ts).
import { startRun, type RunHandle } from './executor';
import { openShared } from './sharedFile';
import { toWire, type FromSpawner, type ToSpawner } from './spawnerProtocol';

/** Electron's utility process: `process.parentPort` (typed here: the core never imports Electron). */
interface ParentPort {
  on(event: 'message', listener: (e: { data: ToSpawner }) => void): void;
  postMessage(message: FromSpawner): void;
}

const port = (process as NodeJS.Process & { parentPort?: ParentPort }).parentPort;
// A message to a daemon that is gone (its channel closing) is dropped: the spawner exits on the
// disconnect, and an EPIPE thrown meanwhile would only crash it first.
const send = port ? (m: FromSpawner) => port.postMessage(m) : (m: FromSpawner) => void (process.connected && process.send?.(m, undefined, {}, () => {}));
const runs = new Map<number, RunHandle>();

function handle(m: ToSpawner): void {
  if (m.type === 'terminate') return runs.get(m.run)?.terminate(m.reason);
  // The log the daemon made, as a descriptor of that very file (or none): the run owns it from here.
  let h: RunHandle;
  try {
    h = startRun(m.requestId, m.plan, m.logFile && openShared(m.logFile), m.killGraceMs);
  } catch (e) {
    return send({ type: 'failed', run: m.run, message: (e as Error).message });
  }
  runs.set(m.run, h);
  send({ type: 'started', run: m.run, pid: h.pid, marker: h.marker, since: h.since });
  void h.done.then((outcome) => {
    runs.delete(m.run);
    send({ type: 'done', run: m.run, outcome: toWire(outcome) });
  });
}

if (port) port.on('message', (e) => handle(e.data));
else if (process.send) {
  process.on('message', (m) => handle(m as ToSpawner));
  process.on('disconnect', () => process.exit(0));
} else {
  process.stderr.write('the spawner is started by the daemon, over an IPC channel\n');
  process.exit(2);
}
send({ type: 'ready' });
