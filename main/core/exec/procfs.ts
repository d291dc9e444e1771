// What Linux's /proc says about other processes: which exist, their state, process group and start
// time; and the pid counter (pidWindow.ts). Never a process's environment (environReader.ts).
// A process that is gone or not ours to read is simply not there. /proc/<pid>/stat is made from the
// kernel's own bookkeeping and never waits on the process; /proc/<pid>/environ is read from its memory,
// under its memory-map lock, which the process itself can keep held (a fault on a FUSE mapping,
// or a huge MAP_POPULATE, with an mmap queued behind it): that read can wait as long as it does, so the
// host makes it only in a child process (environReader.ts).
import { closeSync, existsSync, openSync, readdirSync, readlinkSync, readSync } from 'node:fs';
import type { PidCounter } from './pidWindow';

export const HAS_PROC = process.platform === 'linux';

/** Whether /proc shows this process's pid namespace (it may be another's /proc, mounted in a container):
 *  only then are its pids and pid counter the ones this process's children are given. */
export const PROC_IS_OURS = HAS_PROC && readlinkOr('/proc/self') === String(process.pid);

function readlinkOr(file: string): string | null {
  try {
    return readlinkSync(file);
  } catch {
    return null;
  }
}

/** How much of a /proc file is read: far more than /proc/stat of a large machine. One buffer for
 *  every read, all synchronous: readFileSync of a procfs file (size 0) would allocate 64 KiB a call. */
const READ_CAP = 256 * 1024;
const buf = Buffer.allocUnsafe(READ_CAP);

/** Reads `file` into `buf`; returns the length read, or -1 when it cannot be opened or read. */
function readProc(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return -1; // gone, a kernel thread's environment, or another user's
  }
  let len = 0;
  try {
    for (let n = 1; n > 0 && len < READ_CAP; len += n) n = readSync(fd, buf, len, READ_CAP - len, null);
  } catch {
    return -1;
  } finally {
    closeSync(fd);
  }
  return len;
}

/** The pids in /proc (processes, not threads), without this one. */
export function procPids(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const n of names) if (/^\d+$/.test(n) && Number(n) !== process.pid) out.push(Number(n));
  return out;
}

/** Whether there is a process or thread `pid` (a check that throws nothing when there is none). */
export function procHas(pid: number): boolean {
  return existsSync(`/proc/${pid}`);
}

/** `running`: not ended; a zombie (ended, not yet reaped by its parent) runs nothing. `started`: when
 *  it was forked, in clock ticks since boot (field 22, starttime). */
export interface ProcStat {
  /** The state letter (R, S, D, Z, X...). */
  state: string;
  running: boolean;
  /** Its parent's pid (0 when its parent is outside this pid namespace). */
  ppid: number;
  pgrp: number;
  started: number;
  /** A process, not one of its other threads: /proc/<tid> is there for every thread (though readdir
   *  lists only processes), and the kernel's thread_group_leader() is exit_signal >= 0 (field 38). */
  leader: boolean;
}

export function procStat(pid: number): ProcStat | null {
  const len = readProc(`/proc/${pid}/stat`);
  if (len < 0) return null;
  const stat = buf.toString('latin1', 0, len);
  // "pid (comm) S ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0]!;
  return { state, running: state !== 'Z' && state !== 'X', ppid: Number(fields[1]), pgrp: Number(fields[2]), started: Number(fields[19]), leader: fields[35] !== '-1' };
}

/** Whether process group `pgid` has any member, zombies included (EPERM: one that is not ours). */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running members of a process group (Linux). */
export function groupMembers(pgid: number): number[] {
  if (!groupExists(pgid)) return [];
  return procPids().filter((pid) => {
    const st = procStat(pid);
    return st !== null && st.running && st.pgrp === pgid;
  });
}

/** The number that follows `label` at the start of a line of what `readProc` read, or null. */
function numberAfter(len: number, label: string): number | null {
  const at = buf.subarray(0, len).indexOf(`\n${label}`, 0, 'latin1');
  if (at < 0) return null;
  let n = 0;
  let i = at + 1 + label.length;
  const start = i;
  for (; i < len && buf[i]! >= 0x30 && buf[i]! <= 0x39; i++) n = n * 10 + buf[i]! - 0x30;
  return i > start ? n : null;
}

/**
 * The pid counter as this process's pid namespace sees it, or null where it cannot be read: from
 * /proc/loadavg ("0.00 0.01 0.05 1/191 31389": the tasks on the machine, the last pid given out), the
 * forks since boot (`processes` in /proc/stat, the whole machine's) and pid_max (pidWindow.ts).
 */
export function readPidCounter(): PidCounter | null {
  if (!PROC_IS_OURS) return null;
  let len = readProc('/proc/stat');
  const forks = len < 0 ? null : numberAfter(len, 'processes ');
  len = readProc('/proc/sys/kernel/pid_max');
  const pidMax = len < 0 ? NaN : Number(buf.toString('latin1', 0, len));
  len = readProc('/proc/loadavg');
  const fields = len < 0 ? [] : buf.toString('latin1', 0, len).split(' ');
  const tasks = Number(fields[3]?.split('/')[1]);
  const last = Number(fields[4]);
  if (forks === null || ![pidMax, tasks, last].every(Number.isInteger)) return null;
  return { last, tasks, forks, pidMax };
}
