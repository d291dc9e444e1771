// The floor host, for the benchmark's latency section and bench/profile.ts --mode floor: the least a
// host that keeps Dumbwaiter's guarantees does for one request, in plain Node with nothing else loaded
// (no ledger, no allowlist, no audit, no logging): the file event on queue/, the claim (a rename) and
// the read, an HMAC check, a durable record that the run may start (an append to a journal and
// fdatasync, as a WAL commit), the claimed file removed, the run of the request's program with its
// output piped, a durable record of its end, and the result written by a rename. Where runs start:
// `in-process`, in this process; `spawner`, in a second minimal Node process over an IPC channel, as
// the daemon does (its heap is never forked); `python`, in floorSpawner.py over pipes (Python's
// subprocess starts children with vfork, where Node's libuv forks).
// Usage: node floorHost.mjs SPOOL in-process|spawner|python
import { fork, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { closeSync, fdatasyncSync, openSync, readFileSync, renameSync, unlinkSync, watch, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);

/** Runs `argv` with its output piped (in the host or in a spawner); `done` with its exit code, output and duration. */
function runOne(argv, done) {
  const started = Date.now(); // as the executor measures a run's duration_ms
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const out = [];
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
    const py = spawn('python3', [path.join(path.dirname(here), 'floorSpawner.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: py.stdout }).on('line', (l) => ended(JSON.parse(l)));
    process.on('disconnect', () => py.stdin.end());
    send = (m) => py.stdin.write(`${JSON.stringify(m)}\n`);
  } else {
    const s = fork(here, ['--spawner'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json' });
    s.on('message', ended);
    send = (m) => s.send(m);
  }
  return (id, argv, done) => {
    waiting.set(id, done);
    send({ id, argv });
  };
}

if (process.argv[2] === '--spawner') {
  process.on('message', (m) => runOne(m.argv, (r) => process.send({ id: m.id, ...r })));
  process.on('disconnect', () => process.exit(0));
} else {
  const spool = process.argv[2];
  const via = process.argv[3];
  const key = Buffer.from('floor-benchmark-key');
  const journal = openSync(path.join(spool, 'journal'), 'a');
  const durably = (line) => {
    writeSync(journal, `${line}\n`);
    fdatasyncSync(journal);
  };
  const start = starter(via);

  const take = (name) => {
    const id = name.slice(0, -'.json'.length);
    const claimed = path.join(spool, 'claimed', name);
    try {
      renameSync(path.join(spool, 'queue', name), claimed);
    } catch {
      return; // the event named what already left
    }
    const req = JSON.parse(readFileSync(claimed, 'utf8'));
    const mac = createHmac('sha256', key).update(JSON.stringify(req.body)).digest();
    if (!timingSafeEqual(mac, Buffer.from(req.mac, 'hex'))) throw new Error('bad mac');
    durably(`running ${id}`);
    unlinkSync(claimed); // as the daemon does once the run is recorded: claimed/ stays small
    start(id, ['/bin/true'], (r) => {
      durably(`finished ${id} ${r.code}`);
      const tmp = path.join(spool, 'tmp', `${id}.result`);
      writeFileSync(tmp, JSON.stringify({ id, state: r.code === 0 ? 'succeeded' : 'failed', stdout: r.output, duration_ms: r.duration_ms }));
      renameSync(tmp, path.join(spool, 'results', `${id}.json`));
    });
  };
  watch(path.join(spool, 'queue'), (_e, name) => name?.endsWith('.json') && take(name));
  process.on('disconnect', () => {
    closeSync(journal);
    process.exit(0);
  });
  process.send('ready');
}
