// The run keeper: a small long-lived process per home that starts the daemon's runs (executor.ts) and
// holds them, so that they outlive the daemon. It runs in a session of its own, listens on a socket in
// the home's keeper folder (keeperFiles.ts), and reads each run's output itself (into the log the daemon
// made for it, and the excerpts of its result): a run goes on writing whole while the daemon is killed,
// upgraded or restarted. Its end is told to the daemon connected, and kept until that daemon says it is
// recorded; with no daemon connected, it is written durably to the folder, for the next one. Once no
// daemon is connected and no run is held, it exits. It also keeps the daemon from forking itself (the
// cost of fork() grows with the caller's memory: docs/BENCHMARKS.md).
import { randomBytes } from 'node:crypto';
import { createConnection, createServer, type Socket } from 'node:net';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { startRun, type RunHandle } from './executor';
import { openShared } from './sharedFile';
import { lineReader, toWire, type FromKeeper, type KeptEnd, type KeptStart, type ToKeeper } from './keeperProtocol';
import { listKeeper, makeKeeperDir, markExited, pidFile, removeEnd, socketPath, STALE_SOCKETS, unlistKeeper, writeEnd, KEEPER_VERSION } from './keeperFiles';

interface Held {
  start: KeptStart;
  handle: RunHandle;
}

/** Whether a keeper already listens at `sock` (a live one answers; a dead one's socket refuses). */
function listening(sock: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection(sock);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/** Serves the keeper folder `dir` as a keeper of `version`; `ready` is called once it listens (or
 *  once another keeper of that version is found listening: this one then exits, once `ready` has
 *  called its callback). */
export function serveKeeper(dir: string, version = KEEPER_VERSION, ready: (then?: () => void) => void = (then) => then?.()): void {
  makeKeeperDir(dir);
  const sock = socketPath(dir, version);
  const instance = randomBytes(8).toString('hex');
  const runs = new Map<string, Held>();
  /** Ends not yet forgotten by a daemon, and whether each is on disk. */
  const ended = new Map<string, { end: KeptEnd; written: boolean }>();
  let client: Socket | null = null;
  let draining = false;

  const send = (m: FromKeeper) => void client?.write(`${JSON.stringify(m)}\n`);

  /** On disk, what no daemon has recorded: for the next daemon, if this keeper goes too. False when
   *  the disk refused one (full, say): it stays in memory, and the keeper stays to give it. */
  const writeAll = (): boolean => {
    try {
      for (const e of ended.values()) {
        if (e.written) continue;
        writeEnd(dir, e.end);
        e.written = true;
      }
      return true;
    } catch (err) {
      process.stderr.write(`${new Date().toISOString()} could not write a run's end for the next daemon: ${(err as Error).message}\n`);
      return false;
    }
  };

  /** Once every end not forgotten is written: the mark says so, for the next daemon. */
  const exit = () => {
    markExited(dir, instance); // first: a daemon that finds no socket finds the mark
    server.close();
    unlistKeeper(dir, version);
    try {
      if (readFileSync(pidFile(dir), 'utf8').trim() === String(process.pid)) unlinkSync(pidFile(dir));
    } catch {
      /* not ours, or gone */
    }
    process.exit(0);
  };

  /** With no daemon to tell (or draining), nothing is kept only in memory; with no run left, it exits. */
  const settle = () => {
    if (client && !draining) return;
    if (writeAll() && runs.size === 0) exit();
  };

  const start = (m: Extract<ToKeeper, { type: 'start' }>) => {
    if (draining || runs.has(m.key)) return send({ type: 'failed', key: m.key, message: draining ? 'the keeper is being replaced' : 'a run of this request is held already' });
    let handle: RunHandle;
    try {
      // The log the daemon made, as a descriptor of that very file (or none): the run owns it from here.
      handle = startRun(m.key, m.plan, m.logFile && openShared(m.logFile), m.killGraceMs);
    } catch (e) {
      return send({ type: 'failed', key: m.key, message: (e as Error).message });
    }
    const kept: KeptStart = { key: m.key, pid: handle.pid, marker: handle.marker, since: handle.since };
    runs.set(m.key, { start: kept, handle });
    send({ type: 'started', ...kept });
    void handle.done.then((outcome) => {
      runs.delete(m.key);
      const end: KeptEnd = { key: m.key, outcome: toWire(outcome) };
      ended.set(m.key, { end, written: false });
      send({ type: 'done', ...end });
      settle();
    });
  };

  const receive = (m: ToKeeper) => {
    switch (m.type) {
      case 'hello':
        return send({ type: 'hello', version, pid: process.pid, instance, running: [...runs.values()].map((h) => h.start), ended: [...ended.values()].map((e) => e.end) });
      case 'start':
        return start(m);
      case 'terminate':
        return runs.get(m.key)?.handle.terminate(m.reason);
      case 'forget': {
        const e = ended.get(m.key);
        ended.delete(m.key);
        if (e?.written) removeEnd(dir, m.key);
        return;
      }
      case 'drain':
        draining = true;
        server.close(); // no new daemon finds it: the next keeper takes its place
        unlistKeeper(dir, version);
        return settle();
      case 'exit':
        // An end whose record the daemon could not commit (a full disk) is the next one's.
        if (runs.size === 0 && writeAll()) exit();
    }
  };

  const server = createServer((s) => {
    // One daemon at a time holds the home's lock: a new connection is the new daemon.
    client?.destroy();
    client = s;
    s.on('data', lineReader<ToKeeper>(receive));
    s.on('error', () => {});
    s.on('close', () => {
      if (client !== s) return;
      client = null;
      settle();
    });
  });
  server.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EADDRINUSE') throw e;
    // A socket left by a keeper that died, or one that listens: that one serves, this one is not needed.
    void listening(sock).then((live) => {
      if (live) return ready(() => process.exit(0));
      if (STALE_SOCKETS) unlinkSync(sock);
      server.listen(sock);
    });
  });
  server.on('listening', () => {
    writeFileSync(pidFile(dir), `${process.pid}\n`, { mode: 0o600 });
    listKeeper(dir, version);
    ready();
    // Started with no daemon (its daemon died before connecting): it must not stay.
    setTimeout(() => !client && settle(), NO_DAEMON_MS).unref();
  });
  server.listen(sock);
}

/** How long a keeper started waits for its daemon to connect before it goes. */
const NO_DAEMON_MS = 10_000;
