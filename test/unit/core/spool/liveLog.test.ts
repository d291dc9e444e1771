// Reading a live log in pieces: no byte read twice, no character cut in half, a far-behind reader skips ahead.
import { afterAll, describe, expect, it } from 'vitest';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LIVE_LOG_CHUNK, readLiveLog } from '../../../../main/core/spool/liveLog';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-livelog-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readLiveLog', () => {
  it('holds back a character whose bytes are not all written yet', () => {
    const euro = Buffer.from('€', 'utf8'); // 3 bytes
    const file = path.join(dir, 'req-1.log');
    writeFileSync(file, Buffer.concat([Buffer.from('price: '), euro.subarray(0, 2)]));
    const first = readLiveLog(dir, 'req-1', 0);
    expect(first.text).toBe('price: ');
    appendFileSync(file, Buffer.concat([euro.subarray(2), Buffer.from(' 5\n')]));
    const second = readLiveLog(dir, 'req-1', first.next);
    expect(second.text).toBe('€ 5\n');
    expect(readLiveLog(dir, 'req-1', second.next).text).toBe('');
  });

  it('a reader far behind gets the last chunk and is told how much it skipped', () => {
    writeFileSync(path.join(dir, 'req-2.log'), 'x'.repeat(LIVE_LOG_CHUNK + 1000));
    const r = readLiveLog(dir, 'req-2', 0);
    expect(r.text.length).toBe(LIVE_LOG_CHUNK);
    expect(r.skipped).toBe(1000);
    expect(r.next).toBe(LIVE_LOG_CHUNK + 1000);
  });
});
