// The socket bridge host, for the benchmark's bridge section: the floor host's steps (floorSteps.mjs:
// the allowlist and HMAC checks, the durable records around the run) with requests arriving over a
// Unix socket instead of the spool: one JSON line a request, its result written back on the same
// connection as one JSON line. What a host without the spool would do at the least: tunnel- and
// socket-based bridges take requests this way.
// Usage: node bridgeHost.mjs DIR in-process|spawner|python   (listens on DIR/bridge.sock)
import { createServer } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { floorSteps } from './floorSteps.mjs';

const [dir, via] = process.argv.slice(2);
const steps = floorSteps(dir, via);

createServer((conn) => {
  conn.on('error', () => {}); // a client gone: its runs' ends are in the journal all the same
  createInterface({ input: conn }).on('line', (line) => steps.take(line, (doc) => conn.writable && conn.write(`${JSON.stringify(doc)}\n`)));
}).listen(path.join(dir, 'bridge.sock'), () => process.send('ready'));
