// The sweep over result files across a restart, with a real ledger, real files, the real writer and
// repair, and no file events (the sweep alone): what a complete sweep proved is kept in the ledger, so
// the next process reads only what changed since. A result forged, or changed in place with its times
// set back (its change time cannot be), while the host was stopped is still found and written again;
// the host's own files are left as they are. What the record trusts is not read at all: a wrong file
// older than what the record says was proved is left (shown by planting such a record), and a record
// made for another results/ folder, or whose clock has since stepped back, is not trusted.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { closeSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSpool, type SpoolPaths } from '../../../../main/core/spool/layout';
import { ResultRepair } from '../../../../main/core/spool/resultRepair';
import { ResultWriter, WrittenResults, resultPath } from '../../../../main/core/spool/results';
import { HorizonStore, folderIdentity, horizonNow, trusted, type Horizon, type HorizonRecord } from '../../../../main/core/spool/resultsHorizon';
import { ResultsWatch, sweepDue } from '../../../../main/core/daemon/resultsWatch';
import { scopedLogger } from '../../../../main/core/log';
import { TestLedger } from '../../../helpers/ledger';
import { HostFlags } from '../../../../main/core/ledger/meta';
import { eventually } from '../../../helpers/host';
import { openHostDoc } from '../../../../shared/protocol/hostAuth';

let root: string;
let paths: SpoolPaths;
let ledger: TestLedger;
let keyId: string;
let store: HorizonStore;
let host: Host | null = null;
const signer = (k: string) => ledger.keys.signer(k);
const IDS = Array.from({ length: 150 }, (_, i) => `r${String(i).padStart(3, '0')}`); // a few pages of the sweep

/** One process's parts for the spool: what it wrote is its own (a restart starts with nothing). */
class Host {
  readonly written = new WrittenResults();
  readonly writer = new ResultWriter('default', paths, ledger.requests, signer, null, this.written);
  readonly repair = new ResultRepair(paths, ledger.requests, this.writer, this.written, signer, ledger.audit, () => 7, scopedLogger('test'));
  readonly watch: ResultsWatch;

  constructor(eventsWork = () => false) {
    this.watch = new ResultsWatch(this.repair, this.written, ledger.requests, () => 7, () => true, false, store, scopedLogger('test'), eventsWork);
  }

  start(): void {
    this.watch.watch(paths.results, true);
    this.watch.start();
  }
}

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'dw-watch-'));
  paths = createSpool(path.join(root, 'spool'));
  ledger = new TestLedger();
  keyId = ledger.keys.create('sandbox', 'write').key_id;
  store = new HorizonStore(new HostFlags(ledger.db), 'default');
});

afterEach(() => {
  host?.watch.close();
  host = null;
  ledger.close();
  rmSync(root, { recursive: true, force: true });
});

const file = (id: string) => resultPath(paths.results, id);
const repairsOf = (id: string) => ledger.audit.search({ kind: 'result_repaired' }).filter((e) => e.request_id === id);
const hostsOwn = (id: string) => {
  const opened = openHostDoc('result', readFileSync(file(id), 'utf8'), signer(keyId)!);
  return opened.ok && opened.doc.id === id && opened.doc.state === 'succeeded';
};

/** Every request finished and its result written by a first process, whose sweep then completes. */
async function firstProcess(): Promise<HorizonRecord> {
  const first = new Host();
  for (const id of IDS) expect(first.writer.publish(ledger.add(id, { key_id: keyId, state: 'succeeded' }))).toBe(true);
  host = first;
  first.start();
  await eventually('the first sweep to complete', () => store.load()?.complete ?? undefined);
  first.watch.close();
  host = null;
  return store.load()!;
}

/** A forgery put at the name as a writer of the spool would: written aside, renamed over it. */
function forge(id: string): void {
  const tmp = path.join(paths.tmp, `forged-${id}`);
  writeFileSync(tmp, JSON.stringify({ v: 1, id, state: 'succeeded', stdout: 'forged\n' }));
  renameSync(tmp, file(id));
}

/** The same size, one byte changed, the times set back. */
function changeInPlace(id: string): void {
  const before = statSync(file(id));
  const text = readFileSync(file(id), 'utf8');
  const i = text.indexOf('"stdout": "') + 11;
  const fd = openSync(file(id), 'r+');
  writeSync(fd, text[i] === 'x' ? 'y' : 'x', i);
  closeSync(fd);
  utimesSync(file(id), before.atime, before.mtime);
}

describe('the sweep after a restart', () => {
  it('finds a result forged and one changed in place with its times set back while the host was stopped, and leaves the host\'s own files as they were', async () => {
    const record = await firstProcess();
    expect(record.complete).not.toBeNull();
    expect(record.current).toBeNull();
    const untouched = IDS.filter((id) => id !== 'r010' && id !== 'r140');
    const before = new Map(untouched.map((id) => [id, statSync(file(id), { bigint: true }).ctimeNs]));
    forge('r010');
    changeInPlace('r140');

    host = new Host();
    host.start();
    await eventually('both to be repaired', () => (repairsOf('r010').length && repairsOf('r140').length ? true : undefined));
    expect(repairsOf('r010')[0]!.message).toMatch(/was an unsigned file/);
    expect(repairsOf('r140')[0]!.message).toMatch(/was a file whose signature does not match/);
    expect(hostsOwn('r010') && hostsOwn('r140')).toBe(true);
    // Not rewritten: the same inode, never changed since.
    for (const id of untouched) expect(statSync(file(id), { bigint: true }).ctimeNs).toBe(before.get(id));
    expect(untouched.flatMap(repairsOf)).toEqual([]);
  });

  it('does not read what a complete sweep proved: a wrong file older than the record\'s horizon is left (a record planted to show it)', async () => {
    host = new Host();
    for (const id of IDS) expect(host.writer.publish(ledger.add(id, { key_id: keyId, state: 'succeeded' }))).toBe(true);
    forge('r020');
    const planted = later(horizonNow());
    store.save({ folder: folderIdentity(paths.results)!, boot: readBoot(), complete: planted, current: null });
    const forged = readFileSync(file('r020'), 'utf8');

    host.watch.close();
    host = new Host();
    host.start();
    await eventually('the sweep to complete again', () => (store.load()?.complete?.before_ns !== planted.before_ns ? true : undefined));
    expect(readFileSync(file('r020'), 'utf8')).toBe(forged);
    expect(repairsOf('r020')).toEqual([]);
  });

  it('compares every file again when the record was made for another results/ folder, or its clock has since stepped back', async () => {
    const record = await firstProcess();
    forge('r030');
    // Records that would trust the forgery (a horizon after it) if they were trusted: one of another
    // folder, and one taken before the clock stepped back an hour (its wall-minus-monotonic offset larger).
    const after = later(record.complete!);
    for (const planted of [
      { ...record, folder: '0:0', complete: after },
      { ...record, complete: { ...after, offset_ms: after.offset_ms + 3_600_000 } },
    ]) {
      expect(trusted(planted, folderIdentity(paths.results))).toBeNull();
      ledger.db.prepare("DELETE FROM audit WHERE kind = 'result_repaired'").run();
      forge('r030');
      store.save(planted);
      host = new Host();
      host.start();
      await eventually('r030 to be repaired', () => (repairsOf('r030').length ? true : undefined));
      expect(hostsOwn('r030')).toBe(true);
      host.watch.close();
      host = null;
    }
  });
});

function readBoot(): string {
  return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
}

/** The horizon a minute later: every file written so far is older. */
function later(h: Horizon): Horizon {
  return { ...h, before_ns: h.before_ns + 60_000_000_000n };
}

describe('the periodic sweep', () => {
  afterEach(() => vi.useRealTimers());

  it('comes every minute, but every 30th only while file events bring every change and nothing is backed off', () => {
    expect(sweepDue(1, false, false)).toBe(true);
    for (let m = 1; m < 30; m++) expect(sweepDue(m, false, true)).toBe(false);
    expect(sweepDue(30, false, true)).toBe(true);
    expect(sweepDue(1, true, true)).toBe(true); // a backed-off file is written again only by the sweep
  });

  it('finds a forgery at the 30th minute while events work, and at the next minute once they do not', async () => {
    const first = await firstProcess();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] }); // the minutes; the steps yield for real
    let events = true;
    host = new Host(() => events);
    host.start();
    /** The horizon of the last complete sweep: a new one once the next sweep has completed. */
    const completed = (before: HorizonRecord) => eventually('a sweep to complete', () => (store.load()!.complete!.before_ns !== before.complete!.before_ns ? store.load()! : undefined));
    const started = await completed(first);
    forge(IDS[0]!);
    vi.advanceTimersByTime(30 * 60_000);
    await eventually('the forgery written again by the sweep', () => (repairsOf(IDS[0]!).length === 1 ? true : undefined));
    await completed(started);
    events = false;
    forge(IDS[1]!);
    vi.advanceTimersByTime(60_000);
    await eventually('the next forgery written again a minute later', () => (repairsOf(IDS[1]!).length === 1 ? true : undefined));
    expect(hostsOwn(IDS[0]!) && hostsOwn(IDS[1]!)).toBe(true);
  });
});
