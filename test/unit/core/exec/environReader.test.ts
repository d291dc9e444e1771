// Reading environments in a grep child, with real processes: the entry is found exactly (not a longer
// value, not a name that only ends like it); a gone process has nothing; and a process that keeps its
// memory map busy (test/helpers/staller.ts) is said unread at the deadline, while the processes given
// before and after it are still answered and this process's event loop never waits on it, while a grep
// only slow at its deadline (not waiting on a process) is waited for; the entry looked for is not on
// grep's command line (anyone can read that).
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { procStat } from '../../../../main/core/exec/procfs';
import { readEnvEntry } from '../../../../main/core/exec/environReader';
import { stallerCommand } from '../../../helpers/staller';
import { eventually } from '../../../helpers/host';
import { stopGroups, track, trackGroup } from '../../../helpers/processes';

/** Random: another test file's search for a fixed marker, running beside this one, would find (and end) these. */
const MARKER = randomBytes(16).toString('hex');
const ENTRY = `DUMBWAITER_RUN_MARKER=${MARKER}`;
const stalling: number[] = [];

afterEach(() => {
  // Killed by pid: the net's check of a process (test/helpers/processes.ts) would read its environment.
  for (const pid of stalling.splice(0)) process.kill(pid, 'SIGKILL');
  stopGroups();
});

/** A sleeping process with these variables. */
function sleeper(env: Record<string, string>): number {
  const child = track(spawn('/bin/sh', ['-c', 'exec sleep 300'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH!, ...env } }));
  return trackGroup(child.pid!);
}

async function staller(): Promise<number> {
  const cmd = stallerCommand();
  if (!('argv' in cmd)) throw new Error(cmd.why);
  const child = track(spawn(cmd.argv[0]!, cmd.argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'], env: { PATH: process.env.PATH!, DUMBWAITER_RUN_MARKER: MARKER } }));
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const pid = await eventually('the staller to start', () => (out.includes('\n') ? Number(out) : undefined));
  stalling.push(pid);
  return pid;
}

/** The running grep children of this process. */
const grepsOfMine = () =>
  readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n) && procStat(Number(n))?.ppid === process.pid && procStat(Number(n))?.running)
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'latin1').trim() === 'grep';
      } catch {
        return false; // ended meanwhile
      }
    });

const canStall = process.platform === 'linux' ? stallerCommand() : { why: 'Linux only' };
if (!('argv' in canStall)) console.warn(`environReader: the stalled read is not tried: ${canStall.why}`);

describe.runIf(process.platform === 'linux')('readEnvEntry', () => {
  it('finds the entry exactly, and nothing in a gone process', async () => {
    const marked = sleeper({ DUMBWAITER_RUN_MARKER: MARKER });
    const longer = sleeper({ DUMBWAITER_RUN_MARKER: `${MARKER}a` });
    const suffix = sleeper({ X_DUMBWAITER_RUN_MARKER: MARKER });
    const gone = 2 ** 22 + 1; // above any pid_max
    expect(await readEnvEntry([marked, longer, suffix, gone], ENTRY, 5000)).toEqual({ has: [marked], unread: [] });
  });

  it('waits for a grep that is only slow at its deadline (stopped here, as one a busy machine starves), and says nothing unread', async () => {
    const marked = sleeper({ DUMBWAITER_RUN_MARKER: MARKER });
    const others = Array.from({ length: 5 }, () => sleeper({}));
    const gone = Array.from({ length: 5000 }, (_, i) => 2 ** 22 + 1 + i); // above any pid_max: they keep it busy a while
    const reading = readEnvEntry([...others, marked, ...gone], ENTRY, 400);
    // Stopped just after it was forked: state T, not waiting on a process.
    const grep = grepsOfMine()[0];
    expect(grep).toBeDefined();
    process.kill(grep!, 'SIGSTOP');
    await eventually('the grep stopped', () => (procStat(grep!)?.state === 'T' ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 600)); // past its first deadline
    try {
      process.kill(grep!, 'SIGCONT');
    } catch {
      /* killed at its deadline: the answer below says so */
    }
    expect(await reading).toEqual({ has: [marked], unread: [] });
  });

  it.runIf('argv' in canStall)('says a process that holds its memory map busy unread at the deadline, answers the others, and never holds the event loop', async () => {
    const before = sleeper({ DUMBWAITER_RUN_MARKER: MARKER });
    const stuck = await staller();
    const after = sleeper({ DUMBWAITER_RUN_MARKER: MARKER });
    let ticks = 0;
    let widest = 0;
    let last = performance.now();
    const tick = setInterval(() => {
      const now = performance.now();
      widest = Math.max(widest, now - last);
      last = now;
      ticks++;
    }, 10);
    const started = performance.now();
    const reading = readEnvEntry([before, stuck, after], ENTRY, 500);
    // The grep stuck on it shows its files on its command line, which anyone can read; not the entry.
    const grep = await eventually('the grep', () => grepsOfMine()[0]);
    expect(readFileSync(`/proc/${grep}/cmdline`, 'latin1').split('\0')).toContain(`/proc/${stuck}/environ`);
    expect(readFileSync(`/proc/${grep}/cmdline`, 'latin1')).not.toContain(MARKER);
    const r = await reading;
    const took = performance.now() - started;
    clearInterval(tick);
    expect(r).toEqual({ has: [before, after], unread: [stuck] });
    // Two greps: one killed at its deadline, then one for `after`. A read of its environment here
    // would have waited seconds at a time.
    expect(took).toBeLessThan(500 * 2 + 3000);
    expect(ticks).toBeGreaterThan(0);
    expect(widest).toBeLessThan(500);
  });
});
