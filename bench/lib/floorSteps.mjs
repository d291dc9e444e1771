// The floor's steps for one request once its text is in hand, whatever brought it (the spool's
// floorHost.mjs, the socket's bridgeHost.mjs): the allowlist check and the HMAC check, a durable record
// that the run may start (an append to a journal and fdatasync, as a WAL commit), the run of the
// operation's program with its output piped (at most MAX_RUNS at once, as the daemon's
// max_concurrent_runs in the benchmark), and a durable record of its end; then the transport answers.
// Runs start as the product starts them (main/core/exec/nativeSpawn.ts's choice: posix_spawn through
// the addon where it is built, else Node's spawn, bundled by floor.ts into dist/bench/spawning.mjs), in
// this process or through a spawner: floorSpawner.mjs (a minimal Node process over an IPC channel, as
// the daemon's spawner) or floorSpawner.py (over pipes).
import { fork, spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { spawning } from '../../dist/bench/spawning.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The key requests are signed with (floor.ts signs with it too). */
export const FLOOR_KEY = 'floor-benchmark-key';
/** What may run: an op names its program, as an allowlist entry does. */
const ALLOWLIST = new Map([['noop', ['/bin/true']]]);
const MAX_RUNS = 4;
const RUN_ENV = { PATH: '/usr/bin:/bin' };

/** Runs `argv` with its output piped (in the host or in a spawner); `done` with its exit code, output and duration. */
export function runOne(argv, done) {
  const started = Date.now(); // as the executor measures a run's duration_ms
  const child = spawning().spawn(argv[0], argv.slice(1), { cwd: '/', env: RUN_ENV, fds: [] });
  const out = [];
  child.on('error', (e) => done({ code: null, output: e.message, duration_ms: Date.now() - started }));
  child.stdout.on('data', (c) => out.push(c));
  child.stderr.on('data', (c) => out.push(c));
  child.on('close', (code) => done({ code, output: Buffer.concat(out).toString(), duration_ms: Date.now() - started }));
}

/** How the host starts a run and hears of its end: in this process, or through a spawner (`via`). */
function starter(via) {
  if (via === 'in-process') return (_id, argv, done) => runOne(argv, done);
  const waiting = new Map();
  const ended = (m) => {
    waiting.get(m.id)?.(m);
    waiting.delete(m.id);
  };
  let send;
  if (via === 'python') {
    const py = spawn('python3', [path.join(here, 'floorSpawner.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: py.stdout }).on('line', (l) => ended(JSON.parse(l)));
    process.on('disconnect', () => py.stdin.end());
    send = (m) => py.stdin.write(`${JSON.stringify(m)}\n`);
  } else {
    const s = fork(path.join(here, 'floorSpawner.mjs'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json' });
    s.on('message', ended);
    send = (m) => s.send(m);
  }
  return (id, argv, done) => {
    waiting.set(id, done);
    send({ id, argv });
  };
}

/** The program a request may run: its MAC checked against the key, its op looked up; null if either fails. */
function check(req) {
  const mac = createHmac('sha256', FLOOR_KEY).update(JSON.stringify(req.body)).digest();
  const given = Buffer.from(String(req.mac), 'hex');
  if (given.length !== mac.length || !timingSafeEqual(mac, given)) return null;
  return ALLOWLIST.get(req.body.op) ?? null;
}

/**
 * The steps over `dir` (its journal) with runs started `via`. `take(text, answer, recorded)`: one
 * request; `recorded()` once its start is durable, `answer(doc)` with its final result, also durable.
 * Once the benchmark disconnects, the journal is closed and the process exits.
 */
export function floorSteps(dir, via) {
  const journal = openSync(path.join(dir, 'journal'), 'a');
  const durably = (line) => {
    writeSync(journal, `${line}\n`);
    fdatasyncSync(journal);
  };
  const start = starter(via);
  const waiting = [];
  let running = 0;
  const pump = () => {
    while (running < MAX_RUNS && waiting.length > 0) {
      const { id, argv, answer, recorded } = waiting.shift();
      running++;
      durably(`running ${id}`);
      recorded();
      start(id, argv, (r) => {
        running--;
        durably(`finished ${id} ${r.code}`);
        answer({ id, state: r.code === 0 ? 'succeeded' : 'failed', exit_code: r.code, stdout: r.output, duration_ms: r.duration_ms });
        pump();
      });
    }
  };
  process.on('disconnect', () => {
    closeSync(journal);
    process.exit(0);
  });
  return {
    take(text, answer, recorded = () => {}) {
      const req = JSON.parse(text);
      const id = req.body.id;
      const argv = check(req);
      if (argv === null) {
        durably(`rejected ${id}`);
        recorded();
        return answer({ id, state: 'rejected', exit_code: null, stdout: '', duration_ms: null });
      }
      waiting.push({ id, argv, answer, recorded });
      pump();
    },
  };
}
