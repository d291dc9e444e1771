// The host's reserve for its ledger: which write failures stop it taking requests, the free-space floor
// as statfs measures it, and that it says each stop and each return once, returning by itself.
import { describe, expect, it } from 'vitest';
import os from 'node:os';
import { LedgerRoom, RESERVE_BYTES, freeBytes, reserveProblem, writeFailureCode } from '../../../../main/core/ledger/room';

const err = (code: string) => Object.assign(new Error(code), { code });

describe('write failures', () => {
  it('are a full or failing disk, in errno or SQLite words, and nothing else', () => {
    for (const c of ['ENOSPC', 'EDQUOT', 'EIO', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_IOERR_WRITE', 'SQLITE_IOERR_FSYNC']) expect(writeFailureCode(err(c))).toBe(c);
    for (const c of ['EACCES', 'ENOENT', 'SQLITE_BUSY', 'SQLITE_CONSTRAINT']) expect(writeFailureCode(err(c))).toBeNull();
    expect(writeFailureCode(new Error('no code'))).toBeNull();
    expect(writeFailureCode(null)).toBeNull();
  });
});

describe('the free-space floor', () => {
  it('is 64 MiB of what an ordinary user may write', () => {
    expect(RESERVE_BYTES).toBe(64 * 1024 * 1024);
    expect(freeBytes(os.tmpdir())).toBeGreaterThan(0);
    expect(freeBytes('/no/such/folder')).toBeNull();
  });

  it('says why, with the free space and the floor, only under the floor', () => {
    const free = freeBytes(os.tmpdir())!;
    expect(reserveProblem(os.tmpdir(), free + 1024 ** 3)).toMatch(/^the home's filesystem has [\d.]+ [MG]iB free, under the [\d.]+ GiB the host keeps for its ledger: new requests wait in queue\//);
    expect(reserveProblem(os.tmpdir(), 1)).toBeNull();
    expect(reserveProblem('/no/such/folder', Infinity)).toBeNull(); // not measurable: the writes themselves say
  });
});

describe('the room the host watches', () => {
  function room(reserve: number, retry: () => boolean = () => true) {
    const said: string[] = [];
    const r = new LedgerRoom(os.tmpdir(), { lost: (why) => said.push(`lost: ${why}`), back: () => said.push('back') }, retry, reserve);
    return { r, said };
  }

  it('stops below the floor and comes back by itself once a check finds room', () => {
    const free = freeBytes(os.tmpdir())!;
    const low = room(free + 1024 ** 3);
    expect(low.r.check()).toBe(false);
    expect(low.r.check()).toBe(false);
    expect(low.said).toHaveLength(1); // said once
    expect(low.said[0]).toContain('new requests wait in queue/');
    const ok = room(1);
    expect(ok.r.check()).toBe(true);
    expect(ok.said).toEqual([]);
  });

  it('stops after a failed write until the held writes go through', () => {
    let writes = false;
    const { r, said } = room(1, () => writes);
    expect(r.failed(err('EACCES'), 'ledger')).toBe(false);
    expect(r.ok).toBe(true);
    expect(r.failed(err('SQLITE_FULL'), 'audit log')).toBe(true);
    expect(r.problem).toBe('a write of the audit log failed (SQLITE_FULL): new requests wait in queue/ until it succeeds again');
    expect(r.check()).toBe(false); // room by statfs, but what was held back is not written yet
    writes = true;
    expect(r.check()).toBe(true);
    expect(said).toEqual([`lost: a write of the audit log failed (SQLITE_FULL): new requests wait in queue/ until it succeeds again`, 'back']);
  });
});
