// What /proc says, read for real: the pid counter (the last pid given out covers a process just forked,
// the forks since boot went up, pid_max is the kernel's), and a process's stat (a process is a thread
// group's leader; its state, group and start time).
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { PROC_IS_OURS, procStat, readPidCounter } from '../../../../main/core/exec/procfs';
import { inPidWindow, pidWindow } from '../../../../main/core/exec/pidWindow';
import { stopGroups, track, trackGroup } from '../../../helpers/processes';

afterEach(stopGroups);

describe.runIf(process.platform === 'linux')('procfs', () => {
  it('reads the pid counter: a process forked since a reading is in the window of the next', () => {
    expect(PROC_IS_OURS).toBe(true);
    const before = readPidCounter()!;
    expect(before).not.toBeNull();
    const child = track(spawn('/bin/sh', ['-c', 'exec sleep 300'], { detached: true, stdio: 'ignore' }));
    trackGroup(child.pid!);
    const after = readPidCounter()!;
    expect(after.forks).toBeGreaterThan(before.forks);
    expect(after.pidMax).toBe(Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1')));
    expect(after.tasks).toBeGreaterThan(0);
    const w = pidWindow(child.pid!, before, after);
    expect(w).not.toBeNull();
    expect(inPidWindow(w!, child.pid!)).toBe(true);
  });

  it("reads a process's stat: running, its own group's leader, started after this process", () => {
    const child = track(spawn('/bin/sh', ['-c', 'exec sleep 300'], { detached: true, stdio: 'ignore' }));
    const pid = trackGroup(child.pid!);
    expect(procStat(pid)).toMatchObject({ running: true, pgrp: pid, leader: true });
    expect(procStat(pid)!.started).toBeGreaterThanOrEqual(procStat(process.pid)!.started);
    expect(procStat(2 ** 22 + 1)).toBeNull(); // above any pid_max: no such process
  });
});
