// Runs one planned request: no shell, its own process group, a fixed environment, a timeout, and
// output streamed to the log the daemon made for it at results/<id>.log (capped at max_output_bytes; or
// no log, for a reconcile check) while only a bounded tail of each stream is kept in memory for the
// result (OUTPUT_EXCERPT_BYTES), whatever the operation's limit. Checked paths and the working folder
// reach the program as the very objects checked (pathHandles.ts).
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, writeSync } from 'node:fs';
import type { RunPlan } from '../allowlist/plan';
import { runEnv } from './baseEnv';
import { pidSearchBefore, runProcessesOf } from './leftovers';
import { spawning, type SpawnedRun } from './nativeSpawn';
import { handOver, type HandedOver } from './pathHandles';
import { DEFAULT_CWD, ensureDefaultCwd } from '../allowlist/defaultCwd';
import { TailBuffer } from './tailBuffer';
import { OUTPUT_EXCERPT_BYTES } from '../../../shared/protocol/types';

export interface RunOutcome {
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  /** timeout or spawn_failed; a run ended by `terminate` says so in `terminated`. */
  error: { code: 'timeout' | 'spawn_failed'; message: string } | null;
  terminated: string | null;
  finished_at: string;
  duration_ms: number;
  /** What the host left in results/<id>.log (its own lines included), for the signed result; null
   *  when the run had no log. */
  log: LogDigest | null;
  /** What was done about processes the run left behind, as its log says it (none left: absent). */
  leftovers?: string;
}

export interface LogDigest {
  bytes: number;
  sha256: string;
}

export interface RunHandle {
  pid: number | null;
  /** What finds the run's processes again after a restart (leftovers.ts): the marker in its
   *  environment and its main process's start time (procfs.ts). Null when it never started. */
  marker: string | null;
  since: number | null;
  done: Promise<RunOutcome>;
  /** TERM to the whole run (its process group, and what carries its marker), KILL after the grace
   *  period. Once the main process has exited, what it left is being ended already: nothing changes. */
  terminate(reason: string): void;
}

/** After the child exits, how long its output pipes may stay open (held by a grandchild) before we stop reading. */
const DRAIN_MS = 1000;

/**
 * Appends to the live log up to the operation's limit, then writes one line saying it stopped; the
 * host's notes (what the run left behind) are written past the limit. Every byte that reaches the file
 * is counted and hashed, so the result can say what the log holds (anyone may change the file later).
 * The file is the one the daemon made for the run (sharedFile.ts), given as a descriptor the log owns
 * from then on; a log that fails is dropped: the run goes on.
 */
class CappedLog {
  /** Output bytes logged, against the limit. */
  private written = 0;
  /** Every byte in the file, the host's lines included. */
  private bytes = 0;
  private readonly hash = createHash('sha256');
  /** Whether the run has a log (its digest is then given, 0 bytes when nothing was written). */
  private readonly hasLog: boolean;
  private full = false;
  private atLineStart = true;

  /** `fd`: null for no log (nothing is written, and the digest is null). */
  constructor(
    private fd: number | null,
    private readonly limit: number,
  ) {
    this.hasLog = fd !== null;
  }

  write(chunk: Buffer): void {
    if (this.full || chunk.length === 0 || this.fd === null) return;
    try {
      const room = this.limit - this.written;
      if (room > 0) {
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        this.put(part);
        this.written += part.length;
        this.atLineStart = part[part.length - 1] === 0x0a;
      }
      if (chunk.length > room) {
        this.full = true;
        this.put(Buffer.from(`\n[dumbwaiter: output limit of ${this.limit} bytes reached; the rest is not logged]\n`));
        this.atLineStart = true;
      }
    } catch {
      this.close(); // disk full, say: the result still gets the output's tail
    }
  }

  /** A line of the host's own, on a line of its own. */
  note(text: string): void {
    if (this.fd === null) return;
    try {
      this.put(Buffer.from(`${this.atLineStart ? '' : '\n'}[dumbwaiter: ${text}]\n`));
      this.atLineStart = true;
    } catch {
      this.close();
    }
  }

  /** Writes all of `buf`, counting what reached the file even when a write fails part-way. */
  private put(buf: Buffer): void {
    for (let off = 0; off < buf.length; ) {
      const n = writeSync(this.fd!, buf, off, buf.length - off);
      this.hash.update(buf.subarray(off, off + n));
      this.bytes += n;
      off += n;
    }
  }

  /** What the file holds as the host left it; null when there never was a log. Once, after close(). */
  digest(): LogDigest | null {
    return this.hasLog ? { bytes: this.bytes, sha256: this.hash.digest('hex') } : null;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

function spawnFailed(program: string, e: Error): RunOutcome['error'] {
  return { code: 'spawn_failed', message: `could not start "${program}": ${e.message}` };
}

/** A run that never started: nothing to wait for or terminate; its log stays empty. */
function notStarted(program: string, e: Error, started: number, log: CappedLog): RunHandle {
  log.close();
  const at = Date.now();
  const outcome: RunOutcome = { exit_code: null, signal: null, stdout: '', stderr: '', stdout_truncated: false, stderr_truncated: false, error: spawnFailed(program, e), terminated: null, finished_at: new Date(at).toISOString(), duration_ms: at - started, log: log.digest() };
  return { pid: null, marker: null, since: null, done: Promise.resolve(outcome), terminate() {} };
}

/** `logFd`: a descriptor open for writing on the run's (new, empty) live log, which the run owns and
 *  closes from now on, even when this throws; or null for no log. */
export function startRun(requestId: string, plan: RunPlan, logFd: number | null, killGraceMs: number): RunHandle {
  const started = Date.now();
  const log = new CappedLog(logFd, plan.max_output_bytes);
  let handed: HandedOver;
  try {
    if (plan.cwd === DEFAULT_CWD) ensureDefaultCwd(); // a temporary-files cleaner may have removed it
    handed = handOver(plan.argv, plan.paths ?? [], plan.cwd, plan.cwd_shared === true);
  } catch (e) {
    return notStarted(plan.argv[0]!, e as Error, started, log); // a checked path was swapped, or the working folder is gone
  }
  const excerpt = Math.min(plan.max_output_bytes, OUTPUT_EXCERPT_BYTES);
  const out = new TailBuffer(excerpt);
  const err = new TailBuffer(excerpt);
  const [program, ...rest] = handed.argv;
  const marker = randomBytes(16).toString('hex');
  const search = pidSearchBefore();

  let child: SpawnedRun;
  try {
    // Its own session and process group, so that terminate() reaches its children too (nativeSpawn.ts).
    child = spawning().spawn(program!, rest, { cwd: handed.cwd, env: runEnv(plan.env, requestId, marker), fds: handed.fds });
  } catch (e) {
    log.close();
    throw e;
  } finally {
    handed.close(); // the child has its own copies once spawn returns
  }

  const procs = child.pid === undefined ? null : runProcessesOf(child.pid, plan, marker, undefined, search);
  let timedOut = false;
  let terminated: string | null = null;
  let exited = false;
  let killTimer: NodeJS.Timeout | null = null;
  /** When the TERM of a terminated run turns into KILL. */
  let killAt = 0;
  const kill = () => {
    if (procs === null || killTimer || exited) return;
    killAt = Date.now() + killGraceMs;
    void procs.signal('SIGTERM');
    killTimer = setTimeout(() => void procs.signal('SIGKILL'), killGraceMs);
    killTimer.unref();
  };
  const timeout = setTimeout(() => {
    timedOut = true;
    kill();
  }, plan.timeout_s * 1000);

  child.stdout.on('data', (c: Buffer) => {
    out.push(c);
    log.write(c);
  });
  child.stderr.on('data', (c: Buffer) => {
    err.push(c);
    log.write(c);
  });

  const done = new Promise<RunOutcome>((resolve) => {
    let settled = false;
    let leftovers: string | null = null;
    const finish = (exitCode: number | null, signal: string | null, spawnError: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      if (killTimer) clearTimeout(killTimer);
      log.close();
      const finishedAt = Date.now();
      let error: RunOutcome['error'] = null;
      if (spawnError) error = spawnFailed(program!, spawnError);
      else if (timedOut) error = { code: 'timeout', message: `killed after its timeout of ${plan.timeout_s} s` };
      resolve({
        exit_code: exitCode,
        signal,
        stdout: out.text(),
        stderr: err.text(),
        stdout_truncated: out.truncated,
        stderr_truncated: err.truncated,
        error,
        terminated,
        finished_at: new Date(finishedAt).toISOString(),
        duration_ms: finishedAt - started,
        log: log.digest(),
        ...(leftovers ? { leftovers } : {}),
      });
    };
    child.on('error', (e) => {
      if (child.pid === undefined) finish(null, null, e);
    });
    // No result before what the run left behind has ended (or has been given up on, saying so).
    let leftEnded: Promise<void> | null = null;
    child.on('close', (code, signal) => void leftEnded?.then(() => finish(code, signal, null)));
    child.on('exit', (code, signal) => {
      exited = true;
      // Ending what it left is not part of its run time, and a run already ended for another reason (a
      // cancel, a stop) must not turn into a timeout while that goes on.
      clearTimeout(timeout);
      // The ending below takes over from the KILL timer: it signals the group only while it finds
      // members in it (a group id can be reused once the group is gone).
      if (killTimer) clearTimeout(killTimer);
      const ending = procs !== null && (killTimer !== null || !plan.leaves_processes) ? procs.end(killTimer ? killAt : Date.now() + killGraceMs, killGraceMs) : Promise.resolve(null);
      leftEnded = ending.then((note) => {
        if (note) log.note(note);
        leftovers = note;
        // 'close' waits for the pipes; a process that keeps them open (one left running on purpose) must
        // not hold the result back.
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          finish(code, signal, null);
        }, DRAIN_MS).unref();
      });
    });
  });

  return {
    pid: child.pid ?? null,
    marker: procs ? marker : null,
    since: procs?.since ?? null,
    done,
    terminate(reason: string) {
      if (exited) return;
      terminated = reason;
      kill();
    },
  };
}
