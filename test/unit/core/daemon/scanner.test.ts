// The scanner over a real home and a real spool, without a daemon process: what the sandbox plants in
// queue/ (a symbolic link, a FIFO, a folder) is refused and moved aside without blocking the pass or the
// request beside it; a flood is taken in steps that let the event loop through and listed a bounded
// number of entries per pass; a file an event named is taken by itself, without a listing or a check of
// the spool; what a failed intake left in claimed/ is taken at the next full pass.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SpoolPaths } from '../../../../main/core/spool/layout';
import { ResultWriter, WrittenResults } from '../../../../main/core/spool/results';
import { Scanner } from '../../../../main/core/daemon/scanner';
import { QueueWatch } from '../../../../main/core/daemon/queueWatch';
import { Refusals } from '../../../../main/core/daemon/refusals';
import { scopedLogger } from '../../../../main/core/log';
import { envelope, eventually } from '../../../helpers/host';
import { HomeParts } from '../../../helpers/homeParts';
import { allowlistYaml } from '../../../helpers/allowlists';
import type { KeyFile } from '../../../../shared/protocol/types';

const HELD = allowlistYaml({ name: 'held', command: ['/bin/true'], scope: 'write', approval: 'always' });

let parts: HomeParts;
let io: SpoolPaths;
let mine: string;
let key: KeyFile;
let watch: QueueWatch | null;
let scanner: Scanner;
/** How often the scanner checked the spool (a full pass does; a named pass does not), and began a pass. */
let checks: number;
let passes: number;

function build(withEvents: boolean): void {
  const log = scopedLogger('spool default');
  const written = new WrittenResults();
  const results = new ResultWriter('default', io, parts.core.requests, (k) => parts.core.keys.signer(k), null, written);
  const refusals = new Refusals(parts.core.audit, results, log, 'default');
  watch = withEvents ? new QueueWatch((rescan) => (rescan ? scanner.request() : scanner.requestNamed()), log) : null;
  scanner = new Scanner({
    io,
    claimedMine: () => mine,
    queueWatch: () => watch,
    refusals,
    intake: parts.intake({ results, log, refused: (r) => refusals.add(r) }),
    requests: parts.core.requests,
    audit: parts.core.audit,
    results,
    log,
    spoolUsable: () => (checks++, true),
    spoolOk: () => true,
    room: parts.room,
    beforePass: () => void passes++,
    pump: parts.shared.pump,
    safely: parts.shared.safely,
  });
}

const request = (id: string) => envelope(key, id, 'held');
const queued = () => readdirSync(io.queue);
const stateOf = (id: string) => parts.core.requests.get(id)?.state;
const rejected = () => parts.core.audit.search({ kind: 'rejected', limit: 100_000 });

beforeEach(() => {
  parts = new HomeParts(HELD);
  io = parts.io;
  mine = path.join(io.claimed, parts.settings.host_id);
  mkdirSync(mine, { recursive: true, mode: 0o700 });
  key = parts.keyFile();
  checks = 0;
  passes = 0;
});

afterEach(async () => {
  watch?.close();
  await scanner.stop();
  await parts.close();
});

describe('what the sandbox plants in queue/', () => {
  it('a symbolic link, a FIFO and a folder named as requests are refused and moved to quarantine; the request beside them is recorded in the same pass', async () => {
    build(false);
    const secret = path.join(parts.root, 'secret.json');
    writeFileSync(secret, request('r-secret'));
    symlinkSync(secret, path.join(io.queue, 'r-link.json'));
    execFileSync('mkfifo', [path.join(io.queue, 'r-fifo.json')]); // opened, it would block until a writer comes
    mkdirSync(path.join(io.queue, 'r-dir.json'));
    writeFileSync(path.join(io.queue, 'r-good.json'), request('r-good'));
    scanner.request();
    await eventually('the pass to take every entry', () => (queued().length === 0 && stateOf('r-good') ? true : undefined));
    expect(stateOf('r-good')).toBe('awaiting_approval');
    for (const id of ['r-link', 'r-fifo', 'r-dir']) expect(stateOf(id)).toBeUndefined();
    expect(readdirSync(io.quarantine).sort()).toEqual(expect.arrayContaining([expect.stringContaining('r-dir'), expect.stringContaining('r-fifo'), expect.stringContaining('r-link')]));
    const refused = rejected().map((e) => e.request_id);
    expect(refused.sort()).toEqual(['r-dir', 'r-fifo', 'r-link']);
    // Each refused id that nothing bound is answered, so that the sandbox's client is not left waiting.
    for (const id of ['r-link', 'r-fifo', 'r-dir']) await eventually(`the refusal of ${id}`, () => (existsSync(path.join(io.results, `${id}.json`)) ? true : undefined));
    expect(existsSync(secret)).toBe(true); // the link's target is neither read nor moved
    expect(parts.caught).toEqual([]);
  });
});

describe('a flood', () => {
  it('is taken in steps that let the event loop through, a bounded listing per pass: more than a listing holds takes a second pass', async () => {
    build(false);
    const n = 4096 + 200; // a full listing, and more
    for (let i = 0; i < n; i++) writeFileSync(path.join(io.queue, `junk-${String(i).padStart(5, '0')}`), 'x');
    writeFileSync(path.join(io.queue, 'r-after.json'), request('r-after'));
    let turns = 0;
    const turn = setInterval(() => turns++, 0); // runs only when the scan lets the loop through
    try {
      scanner.request();
      await eventually('the flood to be taken', () => (queued().length === 0 && stateOf('r-after') ? true : undefined), 60_000);
    } finally {
      clearInterval(turn);
    }
    expect(passes).toBe(2); // 4096 entries listed per pass: the rest, and the request, in the next
    expect(checks).toBe(2);
    expect(parts.pumps).toBeGreaterThan(n / 256); // runs may start between steps of at most 256 entries
    expect(turns).toBeGreaterThan(2);
    expect(readdirSync(io.quarantine)).toHaveLength(n);
    expect(stateOf('r-after')).toBe('awaiting_approval');
  }, 90_000);
});

describe('a file an event named', () => {
  it('is taken by itself: no listing (what waited in queue/ before stays for the full pass), no check of the spool', async () => {
    writeFileSync(path.join(io.queue, 'r-before.json'), request('r-before'));
    build(true);
    watch!.watch(io.queue);
    writeFileSync(path.join(io.queue, 'r-named.json'), request('r-named'));
    await eventually('the named request to be recorded', () => stateOf('r-named'));
    expect(stateOf('r-named')).toBe('awaiting_approval');
    expect(queued()).toEqual(['r-before.json']);
    expect(stateOf('r-before')).toBeUndefined();
    expect(checks).toBe(0);
    scanner.request(); // the full pass finds what the events did not name
    await eventually('the full pass to take the other', () => stateOf('r-before'));
    expect(checks).toBe(1);
    expect(queued()).toEqual([]);
  });
});

describe('claimed/ after a failed intake', () => {
  it('a request left in this host\'s claimed/ is taken at the next full pass; a file there that is no request goes to quarantine', async () => {
    build(false);
    writeFileSync(path.join(mine, 'r-left.json'), request('r-left'));
    writeFileSync(path.join(mine, 'stray'), 'x');
    scanner.request();
    await eventually('the leftover to be recorded', () => stateOf('r-left'));
    expect(stateOf('r-left')).toBe('awaiting_approval');
    await eventually('claimed/ to be empty', () => (readdirSync(mine).length === 0 ? true : undefined));
    expect(readdirSync(io.quarantine)).toEqual([expect.stringContaining('stray')]);
  });
});
