// Which processes carry an entry in their environment, read by a grep child, never in this process:
// reading /proc/<pid>/environ takes that process's memory-map lock (procfs.ts), which the process can
// keep busy for as long as it likes (an mmap with MAP_POPULATE of a huge range in one thread, mmap and
// munmap in another: tens of seconds a read), and a read blocks the thread doing it. Not a worker thread
// nor libuv's pool either: Node waits for those at exit, so a stuck read would hold the keeper's exit
// and the daemon's stop. A child is killed when its deadline passes (the wait for that lock is killable),
// and it holds nobody up meanwhile. grep reads the files in the order given and says each as it goes,
// so the one it was stuck on is known: that one is unread, and the rest are read again by another grep.
// Stuck means waiting in the kernel (state D) at the deadline; a grep that is only slow (a busy machine,
// where spawning it can take longer than the deadline) is given a few more, so that load alone does
// not make a process unread.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { procStat } from './procfs';

export interface EnvReading {
  /** The pids whose environment holds the entry. */
  has: number[];
  /** The pids whose environment could not be read by the deadline: nobody can say whether they hold it. */
  unread: number[];
}

/** How many stuck reads one look waits out before it calls what is left unread: a run that makes many
 *  processes stall costs its own end at most this many deadlines, and nobody else's anything. */
const MOST_STALLS = 4;

/** How many more deadlines a grep that is not waiting in the kernel at its deadline is given. */
const MOST_SLOW = 3;

let grep: string | null | undefined;
function grepPath(): string | null {
  grep ??= ['/usr/bin/grep', '/bin/grep'].find((p) => existsSync(p)) ?? null;
  return grep;
}

/** Whether each of `pids` has the entry `NAME=value` exactly in its environment; each grep is given
 *  `deadlineMs`. A process that is gone or not ours to read does not have it. */
export async function readEnvEntry(pids: readonly number[], entry: string, deadlineMs: number): Promise<EnvReading> {
  const has: number[] = [];
  const unread: number[] = [];
  let rest = [...pids];
  for (let stalls = 0; rest.length > 0; stalls++) {
    if (stalls === MOST_STALLS) return { has, unread: [...unread, ...rest] };
    const r = await grepOnce(rest, entry, deadlineMs);
    has.push(...r.has);
    // A grep that ended without a word on some pid could not do its job (a grep without -z, say):
    // those are unread, never taken as not having the entry.
    if (!r.stuck) return { has, unread: [...unread, ...r.unanswered] };
    unread.push(...r.unanswered.slice(0, 1));
    rest = r.unanswered.slice(1);
  }
  return { has, unread };
}

interface GrepEnd {
  has: number[];
  /** The pids it said nothing about, in the order given. */
  unanswered: number[];
  /** Whether it was killed at its deadline (else it ended by itself). */
  stuck: boolean;
}

const FILE = /\/proc\/(\d+)\/environ/;

function grepOnce(pids: number[], entry: string, deadlineMs: number): Promise<GrepEnd> {
  const program = grepPath();
  if (program === null) return Promise.resolve({ has: [], unanswered: pids, stuck: false });
  // -c with -H: "<file>:<count>" for each file read, at once (--line-buffered); a file that cannot be
  // read: "grep: <file>: <why>" on stderr, unbuffered. -z: NUL ends an entry, -x -F: the whole entry,
  // given on stdin (-f -): a command line is anyone's to read, and the marker is the run's.
  const args = ['-c', '-H', '--line-buffered', '-z', '-x', '-F', '-f', '-', '--', ...pids.map((p) => `/proc/${p}/environ`)];
  return new Promise((resolve) => {
    const answered = new Set<number>();
    const has: number[] = [];
    let stuck = false;
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { LC_ALL: 'C' } });
    child.stdin.on('error', () => {}); // EPIPE: it ended first (then it said nothing, and all are unread)
    child.stdin.end(`${entry}\n`);
    const lines = (stream: NodeJS.ReadableStream, counts: boolean) => {
      let part = '';
      stream.setEncoding('latin1');
      stream.on('data', (c: string) => {
        const all = (part + c).split('\n');
        part = all.pop()!;
        for (const line of all) {
          const pid = Number(FILE.exec(line)?.[1]);
          if (!Number.isInteger(pid)) continue;
          answered.add(pid);
          if (counts && /:[1-9]\d*$/.test(line)) has.push(pid);
        }
      });
    };
    lines(child.stdout, true);
    lines(child.stderr, false);
    let settled = false;
    let timer: NodeJS.Timeout | undefined = undefined;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ has, unanswered: pids.filter((p) => !answered.has(p)), stuck });
    };
    // At its deadline a grep waiting in the kernel (state D: on a process's memory-map lock) is stuck;
    // one that is not is only slow, and is given another deadline (MOST_SLOW at most). Killed, it ends
    // at once and its pipes close with what it said. Should the kernel not let it go (an older one
    // whose wait for that lock is not killable), it is left behind, no longer waited for.
    const due = (slow: number) => {
      if (slow < MOST_SLOW && child.pid !== undefined && procStat(child.pid)?.state !== 'D') {
        timer = setTimeout(() => due(slow + 1), deadlineMs);
        return;
      }
      stuck = true;
      child.kill('SIGKILL');
      setTimeout(() => {
        child.unref();
        child.stdout.destroy();
        child.stderr.destroy();
        settle();
      }, deadlineMs).unref();
    };
    timer = setTimeout(() => due(0), deadlineMs);
    child.on('close', settle);
    child.on('error', settle); // could not be started: nothing was said
  });
}
