// The repair's look at one result file, with a real ledger, real files and the real writer, as the
// periodic sweep makes it (no file events): what the host wrote is left alone without being read;
// a change in place (times set back), a hard link, a replay, a file another process wrote that is
// right (the command line) or wrong; a file of an unbound id; a row not yet written; a removed file.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { linkSync, lstatSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSpool, type SpoolPaths } from '../../../../main/core/spool/layout';
import { ResultRepair } from '../../../../main/core/spool/resultRepair';
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

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'dw-repair-'));
  paths = createSpool(path.join(root, 'spool'));
  ledger = new TestLedger();
  keyId = ledger.keys.create('sandbox', 'write').key_id;
  written = new WrittenResults();
  writer = new ResultWriter(paths, ledger.requests, signer, null, written);
  repair = new ResultRepair(paths, ledger.requests, writer, written, signer, ledger.audit, scopedLogger('test'));
});

afterEach(() => {
  ledger.close();
  rmSync(root, { recursive: true, force: true });
});

const file = (id: string) => resultPath(paths.results, id);
const repairs = () => ledger.audit.search({ kind: 'result_repaired' });

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
    expect(repair.check('r1')).toBe(false);
    expect(readFileSync(file('r1'), 'utf8')).toBe(text);
    expect(statSync(file('r1')).mtimeMs).toBe(mtime);
    expect(repairs()).toEqual([]);
  });

  it('finds a change in place whose times were set back (the change time cannot be) and writes the result again', () => {
    const text = published('r1');
    const before = statSync(file('r1'));
    writeFileSync(file('r1'), text.replace('"succeeded"', '"failed"   '));
    utimesSync(file('r1'), before.atime, before.mtime);
    expect(repair.check('r1')).toBe(true);
    expect(readFileSync(file('r1'), 'utf8')).toBe(text);
    expect(repairs()).toMatchObject([{ kind: 'result_repaired', request_id: 'r1', key_id: keyId, message: expect.stringMatching(/^results\/r1\.json was a file whose signature does not match \(\d+ bytes\); the host wrote its result again$/) }]);
  });

  it('replaces a result that got a second name (a hard link through which it could be changed later)', () => {
    const text = published('r1');
    linkSync(file('r1'), path.join(paths.tmp, 'handle'));
    expect(repair.check('r1')).toBe(true);
    expect(lstatSync(file('r1')).nlink).toBe(1);
    expect(readFileSync(file('r1'), 'utf8')).toBe(text);
    expect(repairs()[0]!.message).toMatch(/was the host's file with another name \(\d+ bytes, 2 names \(hard links\)\)/);
  });

  it('says a replayed older version the host signed is one, and puts the current one back', () => {
    const asked = published('r1', 'awaiting_approval');
    const done = ledger.requests.transition('r1', ['awaiting_approval'], { state: 'succeeded' })!;
    writer.publish(done);
    const tmp = path.join(paths.tmp, 'old');
    writeFileSync(tmp, asked);
    renameSync(tmp, file('r1'));
    expect(repair.check('r1')).toBe(true);
    expect(hostsOwn('r1', 'succeeded')).toBe(true);
    expect(repairs()[0]!.message).toMatch(/was another version the host signed for this key \(a replay\)/);
  });

  it('takes a right file that another process wrote (the command line) as the host\'s, without rewriting it', () => {
    const text = published('r1');
    written.forget('r1'); // as if another process had written it, or this one had just started
    writeFileSync(file('r1'), text); // another inode, the same bytes
    const ino = statSync(file('r1')).ino;
    expect(repair.check('r1')).toBe(false);
    expect(statSync(file('r1')).ino).toBe(ino);
    expect(repair.check('r1')).toBe(false);
    expect(repairs()).toEqual([]);
  });

  it('reads a file the host wrote when told it changed (an event), and leaves it when it is right', () => {
    published('r1');
    expect(repair.check('r1', true)).toBe(false);
    expect(repairs()).toEqual([]);
  });

  it('leaves alone a file for an id that is not bound, and one whose row is not written yet', () => {
    writeFileSync(file('unbound'), '{"forged": true}');
    expect(repair.check('unbound')).toBe(false);
    expect(readFileSync(file('unbound'), 'utf8')).toBe('{"forged": true}');
    published('r2', 'awaiting_approval');
    ledger.requests.transition('r2', ['awaiting_approval'], { state: 'denied' }); // not yet written by whoever made it
    writeFileSync(file('r2'), 'planted');
    expect(repair.check('r2')).toBe(false);
    expect(readFileSync(file('r2'), 'utf8')).toBe('planted');
    expect(repairs()).toEqual([]);
  });

  it('leaves a removed result of a finished request removed (retention), and writes back one that has not finished', () => {
    published('done');
    published('waiting', 'awaiting_approval');
    rmSync(file('done'));
    rmSync(file('waiting'));
    expect(repair.check('done')).toBe(false);
    expect(lstatSync(file('done'), { throwIfNoEntry: false })).toBeUndefined();
    expect(repair.check('waiting')).toBe(true);
    expect(hostsOwn('waiting', 'awaiting_approval')).toBe(true);
    expect(repairs().map((e) => e.message)).toEqual(['results/waiting.json was removed; the host wrote its result again']);
  });
});
