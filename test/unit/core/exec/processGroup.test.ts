// Signals to a whole process group, and whether a group still has anyone in it: after a crash the
// daemon says whether an interrupted run's group is still running, even when its leader is gone.
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
