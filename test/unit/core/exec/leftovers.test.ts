// Finding and ending what a run left behind, with real processes: the members of its process group
// once the leader is gone, and on Linux every process carrying its marker, also after setsid; never a
// process of another run, even one with the same request id, and never a process that was running
// before the run, even one with its marker (nor a thread it starts during the run); TERM first, KILL
// after the grace period. Each search three ways: through every process, and through the pids the pid
// counter allows (pidWindow.ts), by listing /proc and by trying each pid.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENV_READ_DEADLINE_MS, RunProcesses, type PidSearch } from '../../../../main/core/exec/leftovers';
import { procStat, readPidCounter } from '../../../../main/core/exec/procfs';
import { eventually } from '../../../helpers/host';
import { alive, leftoversNote, stopGroups, track, trackGroup, UNREAD_NOTE } from '../../../helpers/processes';
import { stallerCommand } from '../../../helpers/staller';

/** Random: a search for a fixed marker would find (and end) the processes of another test file, or of
 *  another run of the suite, that use the same one. */
const MARKER = randomBytes(16).toString('hex');
const OTHER = randomBytes(16).toString('hex');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-left-'));
});
afterEach(() => {
  stopGroups();
  rmSync(dir, { recursive: true, force: true });
});

/** The environment of a stand-in for a run: `marker` as its marker, or these variables instead. */
const runEnv = (marker: Record<string, string> | string) => ({ PATH: process.env.PATH, TMPDIR: process.env.TMPDIR, DUMBWAITER_REQUEST_ID: 'req-1', ...(typeof marker === 'string' ? { DUMBWAITER_RUN_MARKER: marker } : marker) });

/** Up to how many pids of the window a search made by leaderLeaving tries in turn; null: it has no
 *  reading of the pid counter (every process is looked at). */
let probeMost: number | null = null;

/**
 * A stand-in for a run: a detached shell (leader of its own group) with `marker` in its environment,
 * running `script`; it prints the pids of what it leaves, one a line, then exits. `procs` is made right
 * after the spawn, as the executor does, and looks for `lookFor` (by default the marker it was given).
 */
async function leaderLeaving(
  script: string,
  marker: Record<string, string> | string = MARKER,
  lookFor: string | null = typeof marker === 'string' ? marker : MARKER,
): Promise<{ left: number[]; procs: RunProcesses }> {
  const counter = probeMost === null ? null : readPidCounter();
  if (probeMost !== null) expect(counter).not.toBeNull();
  const search: PidSearch | null = counter && { counter, probeMost: probeMost! };
  const child = track(spawn('/bin/sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'], env: runEnv(marker) }));
  const procs = new RunProcesses(child.pid!, lookFor, undefined, search);
  trackGroup(child.pid!);
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((r) => child.on('close', r));
  const left = out.trim().split('\n').filter(Boolean).map(Number);
  for (const pid of left) trackGroup(pid); // a setsid one leads a group of its own
  return { left, procs };
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'latin1' }).stdout);
/** The time since boot in clock ticks, as /proc/<pid>/stat counts a start (rounded down). */
const ticksNow = () => Math.floor(Number(readFileSync('/proc/uptime', 'latin1').split(' ')[0]) * CLK_TCK);

/** A process running before any run that follows, with `MARKER` in its environment: it is running the
 *  program with that environment, and a clock tick has passed since it started. */
async function markedBeforeTheRun(): Promise<number> {
  const child = track(spawn('/bin/sh', ['-c', 'exec sleep 300'], { detached: true, stdio: 'ignore', env: runEnv(MARKER) }));
  const pid = trackGroup(child.pid!);
  const entry = `DUMBWAITER_RUN_MARKER=${MARKER}`;
  await eventually('its environment to be the one given', () => (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry) ? true : undefined));
  const started = procStat(pid)!.started;
  await eventually('a clock tick to pass', () => (ticksNow() > started ? true : undefined));
  return pid;
}

/** Whether a process has a handler for signal number `sig` (its SigCgt mask in /proc). */
function catches(pid: number, sig: number): boolean {
  const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return mask !== undefined && (BigInt(`0x${mask}`) & (1n << BigInt(sig - 1))) !== 0n;
}

/** Output closed at once (the leftovers do not hold the pipe), so `close` means the leader exited. */
const QUIET = '>/dev/null 2>&1';
const inGroup = `sleep 300 ${QUIET} & echo $!`;
const escaped = (f = path.join(dir, 'ready')) => `setsid sh -c 'echo $$ > "$0"; exec sleep 300' "${f}" ${QUIET} & while [ ! -s "${f}" ]; do sleep 0.01; done; cat "${f}"`;

const SEARCHES = [
  ['every process', null],
  ["the pid counter's window, listed", 0],
  ["the pid counter's window, pid by pid", Infinity],
] as const;

describe.runIf(process.platform === 'linux').each(SEARCHES)('RunProcesses.find, through %s', (_, most) => {
  beforeEach(() => {
    probeMost = most;
  });

  it('finds a member of the group after its leader has exited', async () => {
    const { left, procs } = await leaderLeaving(inGroup);
    expect((await procs.find()).found).toEqual(left);
  });

  it('finds a process that left the group with setsid by the marker, and only with the marker', async () => {
    const marked = await leaderLeaving(escaped(path.join(dir, 'marked')));
    expect((await marked.procs.find()).found).toEqual(marked.left);
    const groupOnly = await leaderLeaving(escaped(path.join(dir, 'group-only')), MARKER, null);
    expect(groupOnly.left).toHaveLength(1);
    expect((await groupOnly.procs.find()).found).toEqual([]);
  });

  it("does not find another run's process with the same request id", async () => {
    // The other run starts later, so only the marker tells its process from one of mine.
    const mine = await leaderLeaving(escaped(path.join(dir, 'mine')));
    const other = await leaderLeaving(escaped(path.join(dir, 'other')), OTHER);
    expect((await mine.procs.find()).found).toEqual(mine.left);
    expect((await other.procs.find()).found).toEqual(other.left);
  });

  it('does not take a longer marker, or a variable whose name only ends like the marker, for it', async () => {
    const longer = await leaderLeaving(escaped(path.join(dir, 'longer')), `${MARKER}0`, MARKER);
    const suffix = await leaderLeaving(escaped(path.join(dir, 'suffix')), { X_DUMBWAITER_RUN_MARKER: MARKER });
    const found = (await longer.procs.find()).found;
    expect(found).not.toContain(longer.left[0]);
    expect(found).not.toContain(suffix.left[0]);
  });

  it('never looks at a process that was running before the run, even one carrying its marker', async () => {
    const before = await markedBeforeTheRun();
    const run = await leaderLeaving(escaped());
    expect(run.left).toHaveLength(1);
    const found = (await run.procs.find()).found;
    expect(found).not.toContain(before);
    expect(found).toEqual(run.left);
  });

  it('never looks at a thread that a process running before the run started during it', async () => {
    // Its thread is forked since the run's main process, with a pid in the run's range (/proc/<tid> is
    // there, though /proc's listing shows processes only), and its environment is the older process's.
    const script = 'import sys, threading, time\nsys.stdin.readline()\nt = threading.Thread(target=time.sleep, args=(300,), daemon=True)\nt.start()\nprint(t.native_id, flush=True)\ntime.sleep(300)';
    const older = track(spawn('python3', ['-c', script], { detached: true, stdio: ['pipe', 'pipe', 'ignore'], env: runEnv(MARKER) }));
    const pid = trackGroup(older.pid!);
    const started = procStat(pid)!.started;
    await eventually('a clock tick to pass', () => (ticksNow() > started ? true : undefined));
    const run = await leaderLeaving(escaped());
    let out = '';
    older.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    older.stdin!.write('\n');
    const tid = await eventually('the thread to start', () => (out.includes('\n') ? Number(out) : undefined));
    expect(procStat(tid)).toMatchObject({ running: true, leader: false });
    expect(procStat(tid)!.started).toBeGreaterThanOrEqual(run.procs.since);
    expect((await run.procs.find()).found).toEqual(run.left);
  });

  it('finds the run again from its recorded start time, as a restarted host does', async () => {
    const { left, procs } = await leaderLeaving(`${inGroup}; ${escaped()}`);
    const pgid = procStat(left[0]!)!.pgrp; // the leader's pid: it has exited, its group lives on
    const later = new RunProcesses(pgid, MARKER, procs.since);
    expect((await later.find()).found).toEqual(left);
    expect(later.mainRuns()).toBe(false);
  });

  it('does not take a process group whose id went to another program', async () => {
    // A group leader of someone else's (a shell's job, say) under the run's recorded group id: it has
    // another start time, so the group is not the run's.
    const job = track(spawn('/bin/sh', ['-c', 'exec sleep 300'], { detached: true, stdio: 'ignore' }));
    const pgid = trackGroup(job.pid!);
    const started = procStat(pgid)!.started;
    const recorded = new RunProcesses(pgid, MARKER, started - 1);
    expect((await recorded.find()).found).toEqual([]);
    expect(recorded.mainRuns()).toBe(false);
    const ours = new RunProcesses(pgid, MARKER, started);
    expect((await ours.find()).found).toEqual([pgid]);
    expect(ours.mainRuns()).toBe(true);
  });

  it('finds nothing once everything has ended', async () => {
    const { procs } = await leaderLeaving('exit 0');
    expect((await procs.find()).found).toEqual([]);
  });
});

describe.runIf(process.platform === 'linux').each(SEARCHES)('RunProcesses.end, through %s', (_, most) => {
  beforeEach(() => {
    probeMost = most;
  });

  it('ends the members of the group and the marked processes, and says how many', async () => {
    const { left, procs } = await leaderLeaving(`${inGroup}; ${escaped()}`);
    expect(left).toHaveLength(2);
    const note = await procs.end(Date.now() + 5000, 1000);
    expect(note).toMatch(leftoversNote('2 processes left behind by the run were ended'));
    expect(left.filter(alive)).toEqual([]);
  });

  it('says nothing when nothing was left', async () => {
    const { procs } = await leaderLeaving('exit 0');
    expect(await procs.end(Date.now() + 5000, 1000)).toBeNull();
  });

  it('sends TERM first and KILL once the TERM time is over, to one that ignores TERM', async () => {
    const term = path.join(dir, 'term');
    // The trap notes the TERM; `wait` lets the shell run it at once. Then it goes on, until KILL.
    const script = `sh -c 'trap "echo > \\"$0\\"" TERM; while :; do sleep 300 & wait; done' "${term}" ${QUIET} & echo $!`;
    const { left, procs } = await leaderLeaving(script);
    await eventually('the trap to be set', () => (catches(left[0]!, 15) ? true : undefined));
    expect(await procs.end(Date.now() + 300, 1000)).toMatch(new RegExp(`^\\d+ processes left behind by the run were ended${UNREAD_NOTE}$`));
    expect(readFileSync(term, 'utf8')).toBe('\n');
    expect(alive(left[0]!)).toBe(false);
  });

  it('leaves alone what only carries the same request id', async () => {
    const mine = await leaderLeaving(escaped(path.join(dir, 'mine')));
    const other = await leaderLeaving(escaped(path.join(dir, 'other')), OTHER);
    expect(await mine.procs.end(Date.now() + 5000, 1000)).toMatch(leftoversNote('1 process left behind by the run was ended'));
    expect(alive(mine.left[0]!)).toBe(false);
    expect(alive(other.left[0]!)).toBe(true);
  });

  it('leaves alone a process that was running before the run, even one carrying its marker', async () => {
    const before = await markedBeforeTheRun();
    const run = await leaderLeaving(escaped());
    expect(await run.procs.end(Date.now() + 5000, 1000)).toMatch(leftoversNote('1 process left behind by the run was ended'));
    expect(alive(run.left[0]!)).toBe(false);
    expect(alive(before)).toBe(true);
  });
});

describe.runIf(process.platform === 'linux')('RunProcesses.signal', () => {
  it('reaches the group and the processes that left it', async () => {
    const { left, procs } = await leaderLeaving(`${inGroup}; ${escaped()}`);
    await procs.signal('SIGKILL');
    await eventually('both to end', () => (left.some(alive) ? undefined : true));
  });
});

const stall = process.platform === 'linux' ? stallerCommand() : { why: 'Linux only' };
if (!('argv' in stall)) console.warn(`leftovers: a process that stalls the reading of its environment is not tried: ${stall.why}`);
const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

describe.runIf('argv' in stall)('a process whose environment cannot be read in time', () => {
  let stuck = 0;
  afterEach(() => {
    // By pid: the net's check (test/helpers/processes.ts) would read its environment.
    if (stuck) process.kill(stuck, 'SIGKILL');
    stuck = 0;
  });

  /** A run that leaves, after setsid, a process that holds its memory map busy (test/helpers/staller.ts)
   *  and one that sleeps. */
  async function runLeavingAStaller() {
    const f = path.join(dir, 'staller');
    const argv = (stall as { argv: string[] }).argv.map(quote).join(' ');
    const run = await leaderLeaving(`setsid ${argv} > "${f}" 2>/dev/null & while [ ! -s "${f}" ]; do sleep 0.01; done; cat "${f}"; ${escaped()}`);
    stuck = run.left[0]!;
    return { ...run, stuck, sleeper: run.left[1]! };
  }

  it('is found as unread, not as the run\'s, within the deadline, and the event loop goes on meanwhile', async () => {
    const { procs, sleeper } = await runLeavingAStaller();
    let widest = 0;
    let last = performance.now();
    const tick = setInterval(() => {
      widest = Math.max(widest, performance.now() - last);
      last = performance.now();
    }, 10);
    expect(await procs.find()).toEqual({ found: [sleeper], unread: [stuck] });
    clearInterval(tick);
    expect(widest).toBeLessThan(ENV_READ_DEADLINE_MS / 2);
  });

  it('is left running and said in the note, while the rest of the run is ended', async () => {
    const { procs, sleeper } = await runLeavingAStaller();
    const note = await procs.end(Date.now() + 100, 0);
    expect(note).toBe(`1 process left behind by the run was ended; 1 process started during the run could not be looked at in time (pid ${stuck}: reading its environment waited over 1 s) and was left running: it may be the run's`);
    expect(alive(sleeper)).toBe(false);
    expect(alive(stuck)).toBe(true);
  });
});
