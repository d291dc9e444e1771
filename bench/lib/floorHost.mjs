// The floor host, for the benchmark and bench/profile.ts --mode floor: the least a host that keeps
// Dumbwaiter's guarantees does for one request, in plain Node with nothing else loaded (no ledger
// database, no audit, no logging), over the spool: the file event on queue/ (or, with a poll interval,
// a listing of queue/ at each tick), the claim (a rename) and the read, then floorSteps.mjs (the
// allowlist and HMAC checks, the durable records around the run), the claimed file removed once the
// start is recorded, as the daemon does, and the result written by a rename into results/.
// Usage: node floorHost.mjs SPOOL in-process|spawner|python [POLL_MS]
import { readdirSync, readFileSync, renameSync, unlinkSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';
import { floorSteps } from './floorSteps.mjs';

const [spool, via, pollMs] = process.argv.slice(2);
const steps = floorSteps(spool, via);

const take = (name) => {
  const claimed = path.join(spool, 'claimed', name);
  try {
    renameSync(path.join(spool, 'queue', name), claimed);
  } catch {
    return; // the event (or the listing) named what already left
  }
  const answer = (doc) => {
    const tmp = path.join(spool, 'tmp', `${doc.id}.result`);
    writeFileSync(tmp, JSON.stringify(doc));
    renameSync(tmp, path.join(spool, 'results', `${doc.id}.json`));
  };
  steps.take(readFileSync(claimed, 'utf8'), answer, () => unlinkSync(claimed));
};

if (pollMs === undefined) watch(path.join(spool, 'queue'), (_e, name) => name?.endsWith('.json') && take(name));
else setInterval(() => readdirSync(path.join(spool, 'queue')).sort().forEach((n) => n.endsWith('.json') && take(n)), Number(pollMs));
process.send('ready');
