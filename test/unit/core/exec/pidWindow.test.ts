// Which pids can be a run's, from two readings of the pid counter: the cyclic interval from the main
// process's pid to the last pid given out, wrapping past pid_max to the low pids; every pid once the
// forks since the first reading could have taken the counter round (counting the pids held then, and
// the lower pid_max of both readings), or when the fork count went back.
import { describe, expect, it } from 'vitest';
import { inPidWindow, pidsOf, pidWindow, type PidCounter } from '../../../../main/core/exec/pidWindow';

const before: PidCounter = { last: 990, tasks: 100, forks: 50_000, pidMax: 32768 };
const later = (o: Partial<PidCounter>): PidCounter => ({ ...before, ...o });
/** Forks after which the counter may have gone round: the cycle (pid_max - 300) less 3 pids per task. */
const TURN = 32768 - 300 - 3 * 100;

describe('pidWindow', () => {
  it('is the pids from the main process to the last given out, both included', () => {
    const w = pidWindow(1000, before, later({ last: 1040, forks: 50_041 }))!;
    expect(w).toEqual({ from: 1000, to: 1040 });
    expect([999, 1000, 1020, 1040, 1041].map((p) => inPidWindow(w, p))).toEqual([false, true, true, true, false]);
  });

  it('wraps past pid_max to the low pids when the counter went round to them', () => {
    const w = pidWindow(32700, before, later({ last: 320, forks: 50_100 }))!;
    expect(w).toEqual({ from: 32700, to: 320 });
    expect([32699, 32700, 32767, 300, 320, 321, 1000].map((p) => inPidWindow(w, p))).toEqual([false, true, true, true, true, false, false]);
  });

  it('is every pid once the forks since the reading could have taken the counter round', () => {
    expect(pidWindow(1000, before, later({ last: 1040, forks: before.forks + TURN - 1 }))).not.toBeNull();
    expect(pidWindow(1000, before, later({ last: 1040, forks: before.forks + TURN }))).toBeNull();
    // More tasks held pids at the reading: the counter skips them, so fewer forks take it round.
    expect(pidWindow(1000, { ...before, tasks: 200 }, later({ last: 1040, forks: before.forks + TURN - 1 }))).toBeNull();
  });

  it('takes the lower pid_max of both readings (it can change while a run runs)', () => {
    const forks = before.forks + 4096 - 300 - 300;
    expect(pidWindow(1000, before, later({ last: 1040, forks, pidMax: 4096 }))).toBeNull();
    expect(pidWindow(1000, { ...before, pidMax: 4096 }, later({ last: 1040, forks }))).toBeNull();
    expect(pidWindow(1000, before, later({ last: 1040, forks: forks - 1, pidMax: 4096 }))).not.toBeNull();
  });

  it('is every pid when the fork count went back (not the same counter)', () => {
    expect(pidWindow(1000, before, later({ last: 1040, forks: before.forks - 1 }))).toBeNull();
  });
});

describe('pidsOf', () => {
  it('lists a short window that does not wrap, and nothing else', () => {
    expect(pidsOf({ from: 1000, to: 1003 }, 64)).toEqual([1000, 1001, 1002, 1003]);
    expect(pidsOf({ from: 1000, to: 1000 }, 64)).toEqual([1000]);
    expect(pidsOf({ from: 1000, to: 1064 }, 64)).toBeNull();
    expect(pidsOf({ from: 32700, to: 320 }, 64)).toBeNull();
  });
});
