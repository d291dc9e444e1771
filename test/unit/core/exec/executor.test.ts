// The executor with real processes: the run is its own process group and a timeout or terminate()
// takes the whole group down; what the run leaves behind when it exits (in its group, or carrying its
// marker after setsid) is ended before the result, unless the operation says it leaves processes
// running; the output is capped (tail kept for the result, head for the live log, which is the file the
// run was given, whatever is put at its name);
// the environment, working folder and argv are the plan's and nothing else, and no shell sees the args.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, fstatSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { startRun, type RunHandle } from '../../../../main/core/exec/executor';
import type { RunPlan } from '../../../../main/core/allowlist/plan';
import { OUTPUT_EXCERPT_BYTES } from '../../../../shared/protocol/types';
import { eventually } from '../../../helpers/host';
import { alive, procStat, stopGroups, track, trackGroup, UNREAD_NOTE } from '../../../helpers/processes';

const NODE = process.execPath;
const GRACE_MS = 200;

let dir: string;
let logFile: string;
/** Process groups the test started: killed afterwards whatever happened. */

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-exec-'));
  logFile = path.join(dir, 'req-1.log');
});

afterEach(() => {
  stopGroups();
  rmSync(dir, { recursive: true, force: true });
});

function plan(argv: string[], o: Partial<RunPlan> = {}): RunPlan {
  return { op: 'test', argv, cwd: dir, env: {}, timeout_s: 60, max_output_bytes: 64 * 1024, concurrency: 1, cost: 1, scope: 'read', approval: 'never', ...o };
}

/** The run's log as the daemon makes it: an empty file, open for writing (the run owns it). */
const newLog = () => openSync(logFile, 'w');

function run(argv: string[], o: Partial<RunPlan> = {}): RunHandle {
  const h = startRun('req-1', plan(argv, o), newLog(), GRACE_MS);
  if (h.pid !== null) trackGroup(h.pid);
  return h;
}

/** A node one-liner as argv (args after `--` reach the script as process.argv[1...]). */
const nodeScript = (code: string, ...args: string[]) => [NODE, '-e', code, '--', ...args];

/**
 * A run that leaves a grandchild behind it and writes both pids to files (`trap` may make both ignore
 * SIGTERM: an ignored signal stays ignored in the children).
 */
function startTree(o: Partial<RunPlan> = {}, trap = ''): RunHandle {
  return run(['/bin/sh', '-c', `${trap} sleep 300 & echo $! > "$0.child"; echo $$ > "$0.parent"; wait`, path.join(dir, 'tree')], o);
}

function pidIn(file: string): number | undefined {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  return text.endsWith('\n') ? Number(text) : undefined; // a complete line: the write is finished
}

async function treePids(): Promise<{ parent: number; child: number }> {
  const parent = await eventually('the run to write its pid', () => pidIn(path.join(dir, 'tree.parent')));
  const child = await eventually('the run to write its child pid', () => pidIn(path.join(dir, 'tree.child')));
  return { parent, child };
}

const gone = (pids: number[]) => eventually(`processes ${pids.join(', ')} to be gone`, () => (pids.every((p) => !alive(p)) ? true : undefined));

/** `1\n2\n...n\n`: output whose every byte position is recognisable. */
const numbers = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join('');
/** What the outcome must say about the log: the bytes of the file as the run left it. */
const digestOfLog = () => {
  const bytes = readFileSync(logFile);
  return { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
};
const limitLine = (n: number) => `\n[dumbwaiter: output limit of ${n} bytes reached; the rest is not logged]\n`;

describe('process groups', () => {
  it.runIf(process.platform === 'linux')('starts the run as the leader of its own process group, with its children in it', async () => {
    const h = startTree();
    const { parent, child } = await treePids();
    expect(parent).toBe(h.pid);
    expect(procStat(parent)?.pgrp).toBe(h.pid);
    expect(procStat(child)?.pgrp).toBe(h.pid);
    expect(procStat(process.pid)?.pgrp).not.toBe(h.pid);
    h.terminate('test');
    await h.done;
  });

  it('kills the whole process group when the timeout passes', async () => {
    const h = startTree({ timeout_s: 2 });
    const { parent, child } = await treePids();
    const o = await h.done;
    expect(o.error).toEqual({ code: 'timeout', message: 'killed after its timeout of 2 s' });
    expect(o).toMatchObject({ exit_code: null, signal: 'SIGTERM', terminated: null });
    await gone([parent, child]);
  });

  it('terminate() ends the run and its grandchild, and says why', async () => {
    const h = startTree();
    const { parent, child } = await treePids();
    h.terminate('cancel');
    const o = await h.done;
    expect(o).toMatchObject({ exit_code: null, signal: 'SIGTERM', terminated: 'cancel', error: null });
    await gone([parent, child]);
  });

  it('follows SIGTERM with SIGKILL after the grace period when the run ignores SIGTERM', async () => {
    const h = startTree({}, 'trap "" TERM;');
    const { parent, child } = await treePids();
    h.terminate('shutdown');
    const o = await h.done;
    expect(o).toMatchObject({ signal: 'SIGKILL', terminated: 'shutdown', error: null });
    await gone([parent, child]);
  });

  it('a timeout of a run that ignores SIGTERM ends in SIGKILL of the whole group too', async () => {
    const h = startTree({ timeout_s: 2 }, 'trap "" TERM;');
    const { parent, child } = await treePids();
    const o = await h.done;
    expect(o).toMatchObject({ signal: 'SIGKILL', error: { code: 'timeout' } });
    await gone([parent, child]);
  });

  it('does not hold the result back for a grandchild that keeps the output pipes open', async () => {
    // The run exits at once; `sleep` inherited its stdout and would keep the pipe open for 300 s.
    const h = run(['/bin/sh', '-c', 'echo started; sleep 300 & exit 0']);
    const o = await h.done;
    expect(o).toMatchObject({ exit_code: 0, signal: null, stdout: 'started\n', error: null });
  });
});

describe('what a run leaves behind', () => {
  const file = (ext: string) => path.join(dir, `left.${ext}`);
  /** A pid the run wrote (a complete line), once it is there. */
  const pidFrom = (ext: string) => eventually(`left.${ext}`, () => pidIn(file(ext)));
  /** The log's last line, where the host says what it ended, as a pattern's source. */
  const endedLine = (n: number) => `\\[dumbwaiter: ${n} process${n === 1 ? '' : 'es'} left behind by the run ${n === 1 ? 'was' : 'were'} ended${UNREAD_NOTE}\\]\\n`;
  /**
   * `sh -c script base`: a leftover that leaves the run's process group (setsid) and writes its pid and
   * its process group before the run's main process goes on, so that it is really out when that exits.
   */
  const ESCAPE = `setsid sh -c 'echo $$ > "$0.pid"; cut -d" " -f5 /proc/$$/stat > "$0.pgrp"; exec sleep 300' "$0" & while [ ! -s "$0.pgrp" ]; do sleep 0.01; done;`;
  const escaped = async (h: RunHandle) => {
    const pid = await pidFrom('pid');
    trackGroup(pid); // its own group now: killed after the test whatever happens
    return { pid, pgrp: await pidFrom('pgrp'), run: h.pid };
  };

  it('ends a background child of a run that exited 0 before the result, and the log says so', async () => {
    // Written before the main process exits; it would write left.x after 300 s.
    const h = run(['/bin/sh', '-c', '(sleep 300; touch "$0.x") & echo $! > "$0.bg"; echo started', path.join(dir, 'left')]);
    const o = await h.done;
    expect(o).toMatchObject({ exit_code: 0, signal: null, stdout: 'started\n', error: null });
    const bg = pidIn(file('bg'))!;
    expect(alive(bg)).toBe(false); // already when the result is there: not eventually
    expect(existsSync(file('x'))).toBe(false);
    expect(readFileSync(logFile, 'utf8')).toMatch(new RegExp(`^started\\n\\[dumbwaiter: [12] process(es)? left behind by the run (was|were) ended${UNREAD_NOTE}\\]\\n$`));
    expect(o.log).toEqual(digestOfLog()); // the host's line counted and hashed too
  });

  it('finds and ends a child that left the process group with setsid (by the run marker)', async () => {
    const h = run(['/bin/sh', '-c', `${ESCAPE} echo started`, path.join(dir, 'left')]);
    const { pid, pgrp, run: leader } = await escaped(h);
    expect(pgrp).toBe(pid);
    expect(pgrp).not.toBe(leader);
    const o = await h.done;
    expect(o).toMatchObject({ exit_code: 0, error: null });
    expect(alive(pid)).toBe(false);
    expect(readFileSync(logFile, 'utf8')).toMatch(new RegExp(`^started\\n${endedLine(1)}$`));
  });

  it('gives a leftover the grace period after TERM, then KILLs it', async () => {
    // A node process that notes the TERM and carries on.
    const code = `const fs = require('fs'); const f = process.argv[1]; process.on('SIGTERM', () => fs.writeFileSync(f + '.term', '')); fs.writeFileSync(f + '.ready', ''); setInterval(() => {}, 1e6);`;
    const h = run(['/bin/sh', '-c', '"$0" -e "$1" -- "$2" & echo $! > "$2.bg"; while [ ! -e "$2.ready" ]; do sleep 0.01; done', NODE, code, path.join(dir, 'left')]);
    const o = await h.done;
    expect(o).toMatchObject({ exit_code: 0, error: null });
    expect(existsSync(file('term'))).toBe(true);
    expect(alive(pidIn(file('bg'))!)).toBe(false);
    expect(readFileSync(logFile, 'utf8')).toMatch(new RegExp(`^${endedLine(1)}$`));
  });

  it('ends a setsid child when the run times out', async () => {
    const h = run(['/bin/sh', '-c', `${ESCAPE} sleep 300`, path.join(dir, 'left')], { timeout_s: 1 });
    const { pid } = await escaped(h);
    const o = await h.done;
    expect(o.error?.code).toBe('timeout');
    expect(alive(pid)).toBe(false);
  });

  it('ends a setsid child when the run is terminated', async () => {
    const h = run(['/bin/sh', '-c', `${ESCAPE} sleep 300`, path.join(dir, 'left')]);
    const { pid } = await escaped(h);
    h.terminate('cancel');
    const o = await h.done;
    expect(o).toMatchObject({ terminated: 'cancel', signal: 'SIGTERM' });
    expect(alive(pid)).toBe(false);
  });

  it('leaves_processes: what the run started keeps running after it exits', async () => {
    const h = run(['/bin/sh', '-c', `${ESCAPE} sleep 300 >/dev/null 2>&1 & echo $! > "$0.bg"`, path.join(dir, 'left')], { leaves_processes: true });
    const { pid } = await escaped(h);
    const o = await h.done;
    expect(o).toMatchObject({ exit_code: 0, error: null });
    const bg = pidIn(file('bg'))!;
    expect(alive(pid) && alive(bg)).toBe(true);
    expect(readFileSync(logFile, 'utf8')).toBe(''); // nothing was written
    process.kill(pid, 'SIGKILL');
    process.kill(bg, 'SIGKILL');
    await gone([pid, bg]);
  });

  it('leaves alone a process with the same request id that is not of this run', async () => {
    // Another host's run, or another test's, with the same request id and its own marker.
    const other = track(spawn('sleep', ['300'], { detached: true, stdio: 'ignore', env: { ...process.env, DUMBWAITER_REQUEST_ID: 'req-1', DUMBWAITER_RUN_MARKER: 'f'.repeat(32) } }));
    trackGroup(other.pid!);
    const h = run(['/bin/sh', '-c', `${ESCAPE} echo started`, path.join(dir, 'left')]);
    const { pid } = await escaped(h);
    await h.done;
    expect(alive(pid)).toBe(false);
    expect(alive(other.pid!)).toBe(true);
    other.kill('SIGKILL');
    await gone([other.pid!]);
  });
});

describe('exit codes and failures to start', () => {
  it('reports the exit code, with stdout and stderr kept apart', async () => {
    const o = await run(['/bin/sh', '-c', 'echo out; echo err >&2; exit 3']).done;
    expect(o).toMatchObject({ exit_code: 3, signal: null, stdout: 'out\n', stderr: 'err\n', error: null, terminated: null });
    expect(o.stdout_truncated || o.stderr_truncated).toBe(false);
    expect(new Date(o.finished_at).toISOString()).toBe(o.finished_at);
    expect(o.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('reports success as exit code 0', async () => {
    expect(await run(['true']).done).toMatchObject({ exit_code: 0, signal: null, error: null });
  });

  it('reports a run killed by a signal from elsewhere as that signal, not as a timeout', async () => {
    const o = await run(['/bin/sh', '-c', 'kill -USR1 $$']).done;
    expect(o).toMatchObject({ exit_code: null, signal: 'SIGUSR1', error: null, terminated: null });
  });

  it('a program that does not exist is a spawn failure, with no pid', async () => {
    const h = run([path.join(dir, 'no-such-program')]);
    expect(h.pid).toBeNull();
    const o = await h.done;
    expect(o).toMatchObject({ exit_code: null, signal: null, stdout: '', stderr: '' });
    expect(o.error?.code).toBe('spawn_failed');
    expect(o.error?.message).toContain('no-such-program');
  });

  it('a working folder that does not exist is a spawn failure', async () => {
    const o = await run(['true'], { cwd: path.join(dir, 'missing') }).done;
    expect(o.error?.code).toBe('spawn_failed');
  });

  it('gives the run no input: a program that reads stdin sees its end at once', async () => {
    expect(await run(['/bin/cat']).done).toMatchObject({ exit_code: 0, stdout: '' });
  });
});

describe('what runs: argv, working folder, environment', () => {
  it('passes every argument as it is, without a shell', async () => {
    const sentinel = path.join(dir, 'pwned');
    const args = [`$(touch ${sentinel})`, `\`touch ${sentinel}\``, `; touch ${sentinel}`, '*', '$HOME', "it's \"quoted\"", 'a b\nc', '', '--version'];
    const o = await run(nodeScript('process.stdout.write(JSON.stringify(process.argv.slice(1)))', ...args)).done;
    expect(JSON.parse(o.stdout)).toEqual(args);
    expect(existsSync(sentinel)).toBe(false);
  });

  it("runs in the plan's working folder", async () => {
    const cwd = path.join(dir, 'work');
    mkdirSync(cwd);
    const o = await run(nodeScript('process.stdout.write(process.cwd())'), { cwd }).done;
    expect(o.stdout).toBe(realpathSync(cwd));
  });

  describe('the environment', () => {
    const saved = { ...process.env };
    afterEach(() => {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    });

    const envOf = async (opEnv: Record<string, string>) =>
      JSON.parse((await run(nodeScript('process.stdout.write(JSON.stringify(process.env))'), { env: opEnv }).done).stdout) as Record<string, string>;

    it("is exactly the host's base variables, the operation's env, the request id and the run's marker: nothing else leaks", async () => {
      process.env.DW_TEST_SECRET = 'must not leak';
      process.env.DUMBWAITER_RUN_MARKER = 'the daemon’s own, if it has one';
      process.env.LANG = 'C.UTF-8';
      process.env.TZ = 'Europe/Paris';
      const base: Record<string, string> = {};
      for (const k of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'USER', 'LOGNAME', 'TMPDIR', 'TZ']) if (process.env[k] !== undefined) base[k] = process.env[k]!;
      const env = await envOf({ GREETING: 'hello' });
      expect(env).toEqual({ ...base, GREETING: 'hello', DUMBWAITER_REQUEST_ID: 'req-1', DUMBWAITER_RUN_MARKER: env.DUMBWAITER_RUN_MARKER });
      expect(env.DUMBWAITER_RUN_MARKER).toMatch(/^[0-9a-f]{32}$/);
    });

    it('gives each run a marker of its own, even for the same request id', async () => {
      const [a, b] = await Promise.all([envOf({}), envOf({})]);
      expect(a!.DUMBWAITER_REQUEST_ID).toBe(b!.DUMBWAITER_REQUEST_ID);
      expect(a!.DUMBWAITER_RUN_MARKER).not.toBe(b!.DUMBWAITER_RUN_MARKER);
    });

    it("lets the operation's env override a base variable, but never the request id or the run's marker", async () => {
      const env = await envOf({ PATH: '/opt/tools/bin:/usr/bin', DUMBWAITER_REQUEST_ID: 'spoofed', DUMBWAITER_RUN_MARKER: 'spoofed' });
      expect(env.PATH).toBe('/opt/tools/bin:/usr/bin');
      expect(env.DUMBWAITER_REQUEST_ID).toBe('req-1');
      expect(env.DUMBWAITER_RUN_MARKER).toMatch(/^[0-9a-f]{32}$/);
    });

    it('gives a standard PATH when the host has none', async () => {
      delete process.env.PATH;
      expect((await envOf({})).PATH).toBe('/usr/local/bin:/usr/bin:/bin');
    });
  });
});

describe('output caps', () => {
  it('keeps the last max_output_bytes of stdout for the result, and says it was truncated', async () => {
    const o = await run(['seq', '1', '5000'], { max_output_bytes: 1000 }).done;
    expect(o.stdout).toBe(numbers(5000).slice(-1000));
    expect(o).toMatchObject({ stdout_truncated: true, stderr: '', stderr_truncated: false, exit_code: 0 });
  });

  it('logs the first max_output_bytes, then one line saying the rest is not logged', async () => {
    const o = await run(['seq', '1', '5000'], { max_output_bytes: 1000 }).done;
    expect(readFileSync(logFile, 'utf8')).toBe(numbers(5000).slice(0, 1000) + limitLine(1000));
    expect(o.log).toEqual(digestOfLog());
    expect(o.log!.bytes).toBe(1000 + limitLine(1000).length);
  });

  it('caps stderr on its own', async () => {
    const o = await run(['/bin/sh', '-c', 'echo fine; seq 1 5000 >&2'], { max_output_bytes: 1000 }).done;
    expect(o).toMatchObject({ stdout: 'fine\n', stdout_truncated: false, stderr_truncated: true });
    expect(o.stderr).toBe(numbers(5000).slice(-1000));
  });

  it('keeps an output of exactly the limit whole: not truncated, fully logged', async () => {
    const o = await run(nodeScript('process.stdout.write("x".repeat(1000))'), { max_output_bytes: 1000 }).done;
    expect(o).toMatchObject({ stdout: 'x'.repeat(1000), stdout_truncated: false });
    expect(readFileSync(logFile, 'utf8')).toBe('x'.repeat(1000));
  });

  it('keeps only the last OUTPUT_EXCERPT_BYTES of each stream for the result under a larger limit, and logs all of it', async () => {
    const total = 3 * OUTPUT_EXCERPT_BYTES;
    const script = `const z = Buffer.alloc(${total}); process.stdout.write(z); process.stderr.write(z)`;
    const o = await run(nodeScript(script), { max_output_bytes: 64 * 1024 * 1024 }).done;
    expect(o).toMatchObject({ exit_code: 0, stdout_truncated: true, stderr_truncated: true });
    expect(o.stdout).toBe('\0'.repeat(OUTPUT_EXCERPT_BYTES));
    expect(o.stderr).toBe('\0'.repeat(OUTPUT_EXCERPT_BYTES));
    expect(o.log).toEqual(digestOfLog());
    expect(o.log!.bytes).toBe(2 * total);
  });

  it("counts stdout and stderr together against the log's limit", async () => {
    const o = await run(nodeScript('process.stdout.write("o".repeat(600)); process.stderr.write("e".repeat(600))'), { max_output_bytes: 1000 }).done;
    expect(o).toMatchObject({ stdout: 'o'.repeat(600), stderr: 'e'.repeat(600), stdout_truncated: false, stderr_truncated: false });
    const log = readFileSync(logFile, 'utf8');
    expect(log.endsWith(limitLine(1000))).toBe(true);
    expect(log.slice(0, -limitLine(1000).length)).toMatch(/^[oe]{1000}$/);
  });
});

describe('the live log file', () => {
  const victim = () => path.join(dir, 'precious.txt');
  const EMPTY = { bytes: 0, sha256: createHash('sha256').digest('hex') };

  it("gives the log's length and SHA-256 in the outcome, as the file holds them", async () => {
    const o = await run(nodeScript('process.stdout.write("out\\n"); process.stderr.write("é\\n")')).done;
    expect(o.log).toEqual(digestOfLog());
    expect(o.log!.bytes).toBe(Buffer.byteLength('out\né\n'));
  });

  it('gives an empty log its length and hash: a run with no output', async () => {
    const o = await run(['/bin/true']).done;
    expect(o.log).toEqual(EMPTY);
    expect(readFileSync(logFile, 'utf8')).toBe('');
  });

  it('writes only to the file it was given, whatever is renamed or put at its name meanwhile', async () => {
    writeFileSync(victim(), 'do not touch\n');
    const go = path.join(dir, 'go');
    const h = run(['/bin/sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.02; done; echo late', go]);
    const moved = path.join(dir, 'moved.log');
    renameSync(logFile, moved);
    symlinkSync(victim(), logFile);
    writeFileSync(go, '');
    const o = await h.done;
    expect(readFileSync(moved, 'utf8')).toBe('late\n');
    expect(readFileSync(victim(), 'utf8')).toBe('do not touch\n');
    expect(lstatSync(logFile).isSymbolicLink()).toBe(true);
    expect(o.log).toEqual({ bytes: 5, sha256: createHash('sha256').update('late\n').digest('hex') });
  });

  it.runIf(process.platform === 'linux')("keeps the log's descriptor from the run's processes (they could write to it uncounted)", async () => {
    const o = await run(['/bin/sh', '-c', 'ls -l /proc/$$/fd/']).done;
    expect(o.exit_code).toBe(0);
    expect(o.stdout).toContain('pipe:');
    expect(o.stdout).not.toContain(logFile);
  });

  it('closes the log it was given when the run never starts, and says it is empty', async () => {
    const fd = newLog();
    const o = await startRun('req-1', plan(['/bin/true'], { cwd: path.join(dir, 'missing') }), fd, GRACE_MS).done;
    expect(o.error?.code).toBe('spawn_failed');
    expect(o.log).toEqual(EMPTY);
    expect(() => fstatSync(fd)).toThrow(/EBADF/);
  });

  it('writes no log at all when given none, and keeps the output for the result', async () => {
    writeFileSync(logFile, 'the run before\n');
    const h = startRun('req-1', plan(['/bin/echo', 'checked']), null, GRACE_MS);
    const o = await h.done;
    expect(o).toMatchObject({ exit_code: 0, stdout: 'checked\n', log: null });
    expect(readFileSync(logFile, 'utf8')).toBe('the run before\n');
  });
});

describe('what finds the run again after a restart', () => {
  it("gives the marker in the run's environment and its main process's start time", async () => {
    const h = run(['/bin/sh', '-c', 'echo "$DUMBWAITER_RUN_MARKER"; sleep 300']);
    const since = procStat(h.pid!)!.started;
    await eventually('the marker to be printed', () => (h.marker !== null && existsSync(logFile) && readFileSync(logFile, 'utf8') === `${h.marker}\n` ? true : undefined));
    expect(h.marker).toMatch(/^[0-9a-f]{32}$/);
    expect(h.since).toBe(since);
    h.terminate('test');
    await h.done;
  });

  it('gives neither for a run that never started', () => {
    expect(run(['/nonexistent/program'])).toMatchObject({ pid: null, marker: null, since: null });
  });
});
