// What Linux's /proc says about other processes: which exist, their state, process group and start
// time, and whether one carries a given variable in its environment. A process that is gone or not
// ours to read is simply not there. /proc/<pid>/stat is made from the kernel's own bookkeeping and
// never waits on the process; /proc/<pid>/environ is read from its memory, under its memory-map lock,
// which a process of the same user can keep held (a fault on a FUSE mapping, say, with an mmap queued
// behind it): that read can wait as long as it does.
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

export const HAS_PROC = process.platform === 'linux';

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

/** `running`: not ended; a zombie (ended, not yet reaped by its parent) runs nothing. `started`: when
 *  it was forked, in clock ticks since boot (field 22, starttime). */
export interface ProcStat {
  /** The state letter (R, S, D, Z, X...). */
  state: string;
  running: boolean;
  pgrp: number;
  started: number;
}

export function procStat(pid: number): ProcStat | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  // "pid (comm) S ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0]!;
  return { state, running: state !== 'Z' && state !== 'X', pgrp: Number(fields[2]), started: Number(fields[19]) };
}

/** The running members of a process group (Linux). */
export function groupMembers(pgid: number): number[] {
  return procPids().filter((pid) => {
    const st = procStat(pid);
    return st !== null && st.running && st.pgrp === pgid;
  });
}

/** How much of an environment is read: far more than any real one; a program that pads its own to
 *  hide a variable past this could as well have removed it. */
const ENVIRON_CAP = 256 * 1024;
const environBuf = Buffer.alloc(ENVIRON_CAP);

/** Whether the environment of `pid` holds the entry `NAME=value` exactly. Can wait on `pid` (see the
 *  top of this file): read only the environment of processes that must be looked at. */
export function hasEnvEntry(pid: number, entry: string): boolean {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/environ`, 'r');
  } catch {
    return false; // gone, a kernel thread, or another user's
  }
  let len = 0;
  try {
    for (let n = 1; n > 0 && len < ENVIRON_CAP; len += n) n = readSync(fd, environBuf, len, ENVIRON_CAP - len, null);
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
  // Entries are NUL-terminated: the entry must start the block or follow a NUL, and end with one.
  const env = environBuf.subarray(0, len);
  const needle = Buffer.from(`${entry}\0`, 'latin1');
  for (let at = env.indexOf(needle); at !== -1; at = env.indexOf(needle, at + 1)) if (at === 0 || env[at - 1] === 0) return true;
  return false;
}
