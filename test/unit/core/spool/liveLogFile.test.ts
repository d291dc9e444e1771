// A run's live log is made by the daemon: whatever the sandbox put at results/<id>.log is moved to
// quarantine as it was (never followed, opened or emptied) and recorded, and an empty file of the
// host's own takes the name.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeLiveLog } from '../../../../main/core/spool/liveLogFile';
import { SPOOL_DIRS, spoolPaths, type SpoolPaths } from '../../../../main/core/spool/layout';
import type { HeldFile } from '../../../../main/core/exec/sharedFile';
import type { Logger } from '../../../../main/core/log';
import { TestLedger } from '../../../helpers/ledger';

let root: string;
let spool: SpoolPaths;
let ledger: TestLedger;
let said: string[];
let precious: string;
const held: HeldFile[] = [];

const log: Logger = { error: (...p) => said.push(p.join(' ')), warn: (...p) => said.push(p.join(' ')), info: () => {} };
const logFile = (id: string) => path.join(spool.results, `${id}.log`);

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'dw-livelog-'));
  spool = spoolPaths(path.join(root, 'spool'));
  for (const d of SPOOL_DIRS) mkdirSync(spool[d], { recursive: true, mode: 0o700 });
  precious = path.join(root, 'precious.txt');
  writeFileSync(precious, 'do not touch\n');
  ledger = new TestLedger();
  said = [];
});

afterEach(() => {
  for (const f of held.splice(0)) f.close();
  ledger.close();
  rmSync(root, { recursive: true, force: true });
});

function make(id: string): HeldFile | null {
  const f = makeLiveLog({ audit: ledger.audit, log }, { io: spool, plain: spool }, ledger.add(id));
  if (f) held.push(f);
  return f;
}

const PLANTS: Record<string, { plant: (file: string) => void; is: (st: Stats) => boolean; found: string }> = {
  'a folder': { plant: (f) => (mkdirSync(f), writeFileSync(path.join(f, 'inside'), 'x')), is: (st) => st.isDirectory(), found: 'a folder' },
  'a folder of mode 000': { plant: (f) => (mkdirSync(f), chmodSync(f, 0o000)), is: (st) => st.isDirectory(), found: 'a folder' },
  'a symlink to a host file': { plant: (f) => symlinkSync(precious, f), is: (st) => st.isSymbolicLink(), found: 'a symbolic link' },
  'a FIFO': { plant: (f) => expect(spawnSync('mkfifo', [f]).status).toBe(0), is: (st) => st.isFIFO(), found: 'a FIFO' },
  'a hard link to a host file': { plant: (f) => linkSync(precious, f), is: (st) => st.isFile() && st.nlink === 2, found: 'a file of 13 bytes' },
  'a file of forged text': { plant: (f) => writeFileSync(f, 'All 128 tests PASSED\n'), is: (st) => st.isFile(), found: 'a file of 21 bytes' },
};

describe('the live log the daemon makes for a run', () => {
  it('is an empty regular file of the host, held open, with nothing recorded when the name was free', () => {
    const f = make('free')!;
    const st = lstatSync(logFile('free'));
    expect(st.isFile() && st.size === 0 && st.nlink === 1).toBe(true);
    expect(f.shared).toMatchObject({ dev: st.dev, ino: st.ino });
    expect(readdirSync(spool.quarantine)).toEqual([]);
    expect(ledger.audit.search({ kind: 'log_quarantined' })).toEqual([]);
    expect(said).toEqual([]);
  });

  it.each(Object.keys(PLANTS))('takes the place of %s, moved to quarantine as it was and recorded', (kind) => {
    const { plant, is, found } = PLANTS[kind]!;
    const id = `planted-${Object.keys(PLANTS).indexOf(kind)}`;
    plant(logFile(id));
    const f = make(id)!;
    const st = lstatSync(logFile(id));
    expect(st.isFile() && st.size === 0 && st.nlink === 1).toBe(true);
    expect(f.shared).toMatchObject({ dev: st.dev, ino: st.ino });
    const [moved, ...more] = readdirSync(spool.quarantine);
    expect(more).toEqual([]);
    expect(moved).toMatch(new RegExp(`-${id}\\.log$`));
    expect(is(lstatSync(path.join(spool.quarantine, moved!)))).toBe(true);
    expect(readFileSync(precious, 'utf8')).toBe('do not touch\n');
    const [entry, ...others] = ledger.audit.search({ kind: 'log_quarantined' });
    expect(others).toEqual([]);
    expect(entry).toMatchObject({ request_id: id, message: `results/${id}.log was ${found} the host did not make; moved to quarantine/${moved}` });
    expect(said).toEqual([`${id}: ${entry!.message}`]);
  });

  it('is none when its folder cannot be written: the run goes without, and the log says so', () => {
    rmSync(spool.results, { recursive: true });
    expect(make('nowhere')).toBeNull();
    expect(said).toEqual(['nowhere: results/nowhere.log could not be created: the run has no live log']);
  });

  it('leaves what is at its name when it cannot be moved, and is none', () => {
    mkdirSync(logFile('stuck'));
    rmSync(spool.quarantine, { recursive: true }); // nowhere to move it: each try finds it again
    expect(make('stuck')).toBeNull();
    expect(statSync(logFile('stuck')).isDirectory()).toBe(true);
    expect(said).toEqual(['stuck: results/stuck.log could not be cleared: the run has no live log']);
  });
});
