// Signals to a whole process group, and whether a group still has anyone running in it: after a crash
// the daemon says whether an interrupted run's group is still running, even when its leader is gone
// (and on Linux not when all that is left of it is a zombie).
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { groupAlive, signalGroup } from '../../../../main/core/exec/processGroup';
import { eventually } from '../../../helpers/host';
import { alive, procStat, stopGroups, track, trackGroup } from '../../../helpers/processes';

afterEach(stopGroups);

/** A detached child (leader of its own group); `closed` once it has exited, been reaped and its output read. */
function startGroup(script: string): { pgid: number; closed: Promise<void>; stdout: () => string } {
  const child = track(spawn('/bin/sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] }));
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const closed = new Promise<void>((r) => child.on('close', () => r()));
  trackGroup(child.pid!);
  return { pgid: child.pid!, closed, stdout: () => out };
}

describe('groupAlive', () => {
  it('is true while the leader runs, and false once the group is gone', async () => {
    const g = startGroup('exec sleep 300');
    expect(groupAlive(g.pgid)).toBe(true);
    process.kill(g.pgid, 'SIGKILL');
    await g.closed; // reaped by us: nothing of the group is left, not even a zombie
    expect(groupAlive(g.pgid)).toBe(false);
  });

  it('is true when the leader has exited but a member of its group still runs', async () => {
    // The member does not hold our pipe, so the leader's exit ends the output.
    const g = startGroup('sleep 300 >/dev/null & echo $!');
    await g.closed;
    const member = Number(g.stdout().trim());
    expect(alive(member)).toBe(true);
    if (process.platform === 'linux') expect(procStat(member)?.pgrp).toBe(g.pgid);
    expect(alive(g.pgid)).toBe(false);
    expect(groupAlive(g.pgid)).toBe(true);
  });

  it.runIf(process.platform === 'linux')('is false for a group whose only member is a zombie (ended, never reaped)', async () => {
    // Python forks a child that leads a group of its own and exits at once; the parent reaps it only
    // when told to end (TERM), so that no zombie outlives the test.
    const g = startGroup(`exec python3 -c 'import os, signal, sys, time
pid = os.fork()
if pid == 0:
    os.setsid()
    os._exit(0)
signal.signal(signal.SIGTERM, lambda *_: (os.waitpid(pid, 0), sys.exit(0)))
print(pid, flush=True)
time.sleep(300)'`);
    const zombie = await eventually('the zombie', () => {
      const pid = /^\d+\n$/.test(g.stdout()) ? Number(g.stdout()) : 0;
      return pid > 0 && procStat(pid)?.state === 'Z' ? pid : undefined;
    });
    expect(procStat(zombie)?.pgrp).toBe(zombie);
    expect(groupAlive(zombie)).toBe(false);
    process.kill(g.pgid, 'SIGTERM');
    await g.closed;
    expect(procStat(zombie)).toBeNull();
  });
});

describe('signalGroup', () => {
  it('reaches a member of the group after its leader has exited', async () => {
    const g = startGroup('sleep 300 >/dev/null & echo $!');
    await g.closed;
    const member = Number(g.stdout().trim());
    expect(alive(member)).toBe(true);
    signalGroup(g.pgid, 'SIGTERM');
    await eventually('the member to die', () => (!alive(member) ? true : undefined));
  });

  it('does nothing, and does not throw, for a group that no longer exists', async () => {
    const g = startGroup('exit 0');
    await g.closed;
    expect(groupAlive(g.pgid)).toBe(false);
    expect(() => signalGroup(g.pgid, 'SIGKILL')).not.toThrow();
  });
});
