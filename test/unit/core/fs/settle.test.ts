// Waiting out a write in place, on a real file: the callback comes once the file has kept its stamp for
// SETTLE_MS, a change meanwhile (seen by a hint or by the wait's own last look) starts the wait again,
// and a stopped wait calls nothing.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Settle, SETTLE_MS } from '../../../../main/core/fs/settle';

let dir: string;
let file: string;
let calls: number;
let settle: Settle;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-settle-'));
  file = path.join(dir, 'f');
  writeFileSync(file, 'a');
  calls = 0;
  settle = new Settle(file, () => calls++);
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

describe('Settle', () => {
  it('calls once the file has not changed for SETTLE_MS, and again only after a new wait', () => {
    settle.start();
    expect(settle.waiting).toBe(true);
    vi.advanceTimersByTime(SETTLE_MS - 1);
    expect(calls).toBe(0);
    settle.start(); // a hint without a change: the wait goes on as it was
    vi.advanceTimersByTime(1);
    expect([calls, settle.waiting]).toEqual([1, false]);
    vi.advanceTimersByTime(SETTLE_MS * 4);
    expect(calls).toBe(1);
  });

  it('starts again when the file changes, whether a hint says so or the last look finds it', () => {
    settle.start();
    vi.advanceTimersByTime(SETTLE_MS - 1);
    appendFileSync(file, 'b');
    settle.start();
    vi.advanceTimersByTime(SETTLE_MS - 1);
    appendFileSync(file, 'c'); // no hint: a dropped event
    vi.advanceTimersByTime(1);
    expect([calls, settle.waiting]).toEqual([0, true]);
    vi.advanceTimersByTime(SETTLE_MS);
    expect(calls).toBe(1);
  });

  it('calls nothing once stopped', () => {
    settle.start();
    settle.stop();
    vi.advanceTimersByTime(SETTLE_MS * 2);
    expect([calls, settle.waiting]).toEqual([0, false]);
  });
});
