// The repair's look at one result file, with a real ledger, real files and the real writer, as the
// periodic sweep makes it (no file events): what the host wrote is left alone without being read;
// a change in place (times set back), a hard link, a replay, a file another process wrote that is
// right (the command line) or wrong; a file of an unbound id; a row not yet written; a removed file
// (written again unless retention would have removed it); a file not of the host's size, of which only
// the start is read; a writer replacing files in a loop (repairs told within a budget, the rest counted,
// and an id repaired again and again left to the sweep).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeSync, ftruncateSync, linkSync, lstatSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSpool, type SpoolPaths } from '../../../../main/core/spool/layout';
import { BACKOFF_AFTER, DESCRIBE_MAX, ResultRepair, TOLD_PER_MINUTE, type Look } from '../../../../main/core/spool/resultRepair';
import { ResultWriter, WrittenResults, resultPath } from '../../../../main/core/spool/results';
import { scopedLogger } from '../../../../main/core/log';
import { TestLedger } from '../../../helpers/ledger';
import { openHostDoc } from '../../../../shared/protocol/hostAuth';

let root: string;
let paths: SpoolPaths;
let ledger: TestLedger;
let keyId: string;
let written: WrittenResults;
let writer: ResultWriter;
let repair: ResultRepair;
const signer = (k: string) => ledger.keys.signer(k);
const SPOOL_DAYS = 7;

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'dw-repair-'));
  paths = createSpool(path.join(root, 'spool'));
  ledger = new TestLedger();
  keyId = ledger.keys.create('sandbox', 'write').key_id;
  written = new WrittenResults();
  writer = new ResultWriter('default', paths, ledger.requests, signer, null, written);
  repair = new ResultRepair(paths, ledger.requests, writer, written, signer, ledger.audit, () => SPOOL_DAYS, scopedLogger('test'));
});

afterEach(() => {
  ledger.close();
  rmSync(root, { recursive: true, force: true });
});

const file = (id: string) => resultPath(paths.results, id);
const repairs = () => ledger.audit.search({ kind: 'result_repaired' });

/** One look, then what it repaired recorded, as a step of ResultsWatch does. */
function look(id: string, from: Look = 'sweep'): boolean {
  const wrote = repair.check(id, from) === 'repaired';
  repair.flush();
  return wrote;
}

/** Puts `content` at the result's name as a writer of the spool would: written aside, renamed over it. */
function replaceWith(id: string, content: string | Buffer): void {
  const tmp = path.join(paths.tmp, `forged-${id}`);
  writeFileSync(tmp, content);
  renameSync(tmp, file(id));
}

/** A bound request whose result the daemon wrote. */
function published(id: string, state: 'awaiting_approval' | 'succeeded' = 'succeeded') {
  const row = ledger.add(id, { key_id: keyId, state });
  expect(writer.publish(row)).toBe(true);
  return readFileSync(file(id), 'utf8');
}

/** Whether the file is the host's own, signed for the key, with this state. */
function hostsOwn(id: string, state: string): boolean {
  const opened = openHostDoc('result', readFileSync(file(id), 'utf8'), signer(keyId)!);
  return opened.ok && opened.doc.id === id && opened.doc.state === state;
}

describe('ResultRepair.check', () => {
  it('leaves what the host wrote alone', () => {
    const text = published('r1');
    const mtime = statSync(file('r1')).mtimeMs;
    expect(look('r1')).toBe(false);
    expect(readFileSync(file('r1'), 'utf8')).toBe(text);
    expect(statSync(file('r1')).mtimeMs).toBe(mtime);
    expect(repairs()).toEqual([]);
  });

  it('finds a change in place whose times were set back (the change time cannot be) and writes the result again', () => {
    const text = published('r1');
    const before = statSync(file('r1'));
    writeFileSync(file('r1'), text.replace('"succeeded"', '"failed"   '));
    utimesSync(file('r1'), before.atime, before.mtime);
    expect(look('r1')).toBe(true);
    expect(readFileSync(file('r1'), 'utf8')).toBe(text);
    expect(repairs()).toMatchObject([{ kind: 'result_repaired', request_id: 'r1', key_id: keyId, message: expect.stringMatching(/^results\/r1\.json was a file whose signature does not match \(\d+ bytes\); the host wrote its result again$/) }]);
  });

  it('replaces a result that got a second name (a hard link through which it could be changed later)', () => {
    const text = published('r1');
    linkSync(file('r1'), path.join(paths.tmp, 'handle'));
    expect(look('r1')).toBe(true);
    expect(lstatSync(file('r1')).nlink).toBe(1);
    expect(readFileSync(file('r1'), 'utf8')).toBe(text);
    expect(repairs()[0]!.message).toMatch(/was the host's file with another name \(\d+ bytes, 2 names \(hard links\)\)/);
  });

  it('says a replayed older version the host signed is one, and puts the current one back', () => {
    const asked = published('r1', 'awaiting_approval');
    const done = ledger.move('r1', 'succeeded');
    writer.publish(done);
    const tmp = path.join(paths.tmp, 'old');
    writeFileSync(tmp, asked);
    renameSync(tmp, file('r1'));
    expect(look('r1')).toBe(true);
    expect(hostsOwn('r1', 'succeeded')).toBe(true);
    expect(repairs()[0]!.message).toMatch(/was another version the host signed for this key \(a replay\)/);
  });

  it('takes a right file that another process wrote (the command line) as the host\'s, without rewriting it', () => {
    const text = published('r1');
    written.forget('r1'); // as if another process had written it, or this one had just started
    writeFileSync(file('r1'), text); // another inode, the same bytes
    const ino = statSync(file('r1')).ino;
    expect(look('r1')).toBe(false);
    expect(statSync(file('r1')).ino).toBe(ino);
    expect(look('r1')).toBe(false);
    expect(repairs()).toEqual([]);
  });

  it('reads a file the host wrote when told it changed (an event), and leaves it when it is right', () => {
    published('r1');
    expect(look('r1', 'change')).toBe(false);
    expect(repairs()).toEqual([]);
  });

  it('leaves alone a file for an id that is not bound, and one whose row is not written yet', () => {
    writeFileSync(file('unbound'), '{"forged": true}');
    expect(look('unbound')).toBe(false);
    expect(readFileSync(file('unbound'), 'utf8')).toBe('{"forged": true}');
    published('r2', 'awaiting_approval');
    ledger.move('r2', 'denied'); // not yet written by whoever made it
    writeFileSync(file('r2'), 'planted');
    expect(look('r2')).toBe(false);
    expect(readFileSync(file('r2'), 'utf8')).toBe('planted');
    expect(repairs()).toEqual([]);
  });

  it('writes back a removed result, finished or not, and leaves one removed that retention would have removed (its last change older than retention_spool_days)', () => {
    published('done');
    published('waiting', 'awaiting_approval');
    published('aged');
    const aged = new Date(Date.now() - (SPOOL_DAYS + 1) * 86_400_000).toISOString();
    ledger.db.prepare('UPDATE requests SET updated_at = ? WHERE id = ?').run(aged, 'aged');
    for (const id of ['done', 'waiting', 'aged']) rmSync(file(id));
    expect(look('done')).toBe(true);
    expect(hostsOwn('done', 'succeeded')).toBe(true);
    expect(look('waiting')).toBe(true);
    expect(hostsOwn('waiting', 'awaiting_approval')).toBe(true);
    expect(look('aged')).toBe(false);
    expect(lstatSync(file('aged'), { throwIfNoEntry: false })).toBeUndefined();
    expect(repairs().map((e) => e.message).sort()).toEqual([
      'results/done.json was removed; the host wrote its result again',
      'results/waiting.json was removed; the host wrote its result again',
    ]);
  });

  it('reads no more than the start of a file not of the host\'s size: a sparse 64 MiB file, and a replay larger than that start', () => {
    published('big');
    const sparse = path.join(paths.tmp, 'sparse');
    const fd = openSync(sparse, 'w');
    writeSync(fd, '{"forged": true, "pad": "');
    ftruncateSync(fd, 64 * 1024 * 1024);
    closeSync(fd);
    renameSync(sparse, file('big'));
    expect(look('big')).toBe(true);
    expect(repairs()[0]!.message).toBe(`results/big.json was an unsigned file (${64 * 1024 * 1024} bytes); the host wrote its result again`);

    // A version the host signed, larger than what is read of a file of another size: not checked, said so.
    ledger.add('replayed', { key_id: keyId, state: 'running' });
    writer.publish(ledger.move('replayed', 'running', { stdout: 'x'.repeat(2 * DESCRIBE_MAX) }));
    const older = readFileSync(file('replayed'));
    writer.publish(ledger.move('replayed', 'succeeded', { stdout: 'done\n' }));
    replaceWith('replayed', older);
    expect(look('replayed')).toBe(true);
    expect(hostsOwn('replayed', 'succeeded')).toBe(true);
    expect(repairs()[0]!.message).toBe(
      `results/replayed.json was a file marked as signed for this key, not of the host's size (only its first ${DESCRIBE_MAX} bytes were read) (${older.length} bytes); the host wrote its result again`,
    );
  });
});

describe("another spool's requests", () => {
  it("are never written here: not by the writer, nor by the repair of a file planted under such an id", () => {
    const other = ledger.add('of-work', { key_id: keyId, state: 'succeeded', spool: 'work' });
    expect(writer.publish(other)).toBe(false);
    expect(lstatSync(file('of-work'), { throwIfNoEntry: false })).toBeUndefined();
    // A sandbox of this spool plants a result under the other spool's id, hoping for its signed copy.
    writeFileSync(file('of-work'), '{"forged": true}');
    expect(look('of-work')).toBe(false);
    expect(readFileSync(file('of-work'), 'utf8')).toBe('{"forged": true}');
    expect(ledger.requests.get('of-work')!.synced).toBe(0); // still for its own spool's writer to write
  });
});

describe('ResultRepair against a writer replacing results in a loop', () => {
  const IDS = Array.from({ length: 30 }, (_, i) => `loop-${i}`);
  /** Every repair on a file event the audit log accounts for, by id: told one by one, or counted. */
  const accounted = () => {
    const n: Record<string, number> = {};
    for (const e of repairs()) for (const id of e.request_id ? [e.request_id] : (e.details as { by_event: string[] }).by_event) n[id] = (n[id] ?? 0) + 1;
    return n;
  };
  /** The ids whose back-off the audit log says, once per saying. */
  const backOffsSaid = () =>
    repairs().flatMap((e) => (e.request_id ? ((e.details as { backed_off?: boolean }).backed_off ? [e.request_id] : []) : (e.details as { backed_off: string[] }).backed_off));

  it('tells the first repairs of a minute one by one and counts the rest in one entry per step; an id repaired again and again is left to the sweep, said once', () => {
    for (const id of IDS) published(id);
    for (let round = 1; round <= BACKOFF_AFTER; round++) {
      for (const id of IDS) {
        replaceWith(id, '{}');
        expect(repair.check(id, 'event')).toBe('repaired');
      }
      repair.flush(); // one step
    }
    const told = repairs().filter((e) => e.request_id);
    const counted = repairs().filter((e) => !e.request_id);
    expect(told).toHaveLength(TOLD_PER_MINUTE);
    expect(counted).toHaveLength(BACKOFF_AFTER); // one per step
    expect(counted.reduce((n, e) => n + (e.details as { count: number }).count, 0)).toBe(IDS.length * BACKOFF_AFTER - TOLD_PER_MINUTE);
    expect(counted[0]!.message).toMatch(/^\d+ more result files were not the host's and were written again \(\d+ was an unsigned file\): loop-/);
    expect(accounted()).toEqual(Object.fromEntries(IDS.map((id) => [id, BACKOFF_AFTER])));
    expect(backOffsSaid().sort()).toEqual([...IDS].sort());

    // Backed off: file events on them are not acted on; the sweep still writes each again, saying nothing new.
    const entries = repairs().length;
    for (const id of IDS) {
      replaceWith(id, '{}');
      expect(repair.check(id, 'event')).toBe('none');
      expect(repair.check(id, 'change')).toBe('none');
    }
    repair.flush();
    expect(repairs()).toHaveLength(entries);
    for (const id of IDS) expect(repair.check(id, 'sweep')).toBe('repaired');
    repair.flush();
    for (const id of IDS) expect(hostsOwn(id, 'succeeded')).toBe(true);
    expect(backOffsSaid()).toHaveLength(IDS.length);
    expect(repairs().length - entries).toBe(1); // the budget of the minute is spent: counted, one entry

    // A sweep that finds the host's file left alone ends the back-off: events count again.
    expect(repair.check('loop-0', 'sweep')).toBe('host');
    replaceWith('loop-0', '{}');
    expect(repair.check('loop-0', 'event')).toBe('repaired');
    replaceWith('loop-1', '{}');
    expect(repair.check('loop-1', 'event')).toBe('none');
  });

  it('starts the budget of told repairs again each minute', () => {
    for (const id of IDS) published(id);
    for (const id of IDS) {
      replaceWith(id, '{}');
      look(id, 'event');
    }
    repair.endMinute();
    replaceWith('loop-0', '{}');
    expect(look('loop-0', 'event')).toBe(true);
    expect(repairs()[0]).toMatchObject({ request_id: 'loop-0', message: expect.stringMatching(/^results\/loop-0\.json was an unsigned file \(2 bytes\)/) });
  });
});
