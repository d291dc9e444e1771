// What the sandbox clients' unit tests share: a result document to start from, and dw.py's own
// functions, called through one python3 for a batch of cases, to show that dw.py says what dw.cjs says.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ResultDoc } from '../../shared/protocol/types';
import { waitingText } from '../../shared/client/approvalWait';

/** A finished request's result as the host writes it, with `over` on top. */
export function resultDoc(over: Partial<ResultDoc>): ResultDoc {
  return {
    v: 1, id: 'r-1', op: 'deploy', state: 'succeeded', updated_at: '', exit_code: null, signal: null, stdout: '', stderr: '', stdout_truncated: false,
    stderr_truncated: false, started_at: null, finished_at: null, duration_ms: null, error: null, ...over,
  };
}

const DW_PY_DIR = path.resolve(import.meta.dirname, '../../shared/client');
const HARNESS = `
import json, sys
sys.path.insert(0, sys.argv[1])
import dw
def call(c):
    try:
        if c[0] == "plan":
            return {"ok": dw.check_plan_steps(dw.parse_json_text(c[1], "the plan"), c[2])}
        if c[0] == "whole":
            o = dw.Opts()
            o.flags = {c[1]: c[2]}
            return {"ok": dw.positive_int(o, c[1], c[3])}
        if c[0] == "duration":
            return {"ok": dw.duration_seconds(c[1], c[2], c[3])}
        if c[0] == "constants":
            return {"ok": [dw.PLAN_OP, dw.MAX_PLAN_STEPS, dw.MAX_PLAN_LIFETIME_S, dw.MAX_REQUEST_LIMIT]}
        if c[0] == "plan_lines":
            return {"ok": [dw.plan_head(c[1])] + dw.plan_body(c[1])}
        if c[0] == "outcome":
            return {"ok": dw.outcome_lines(c[1])}
        if c[0] == "status_lines":
            return {"ok": dw.status_lines(c[1])}
        if c[0] == "pending":
            return {"ok": dw.pending_notes(c[1])}
        if c[0] == "without_hint":
            return {"ok": dw.without_settle_hint(c[1])}
        if c[0] == "waiting":
            return {"ok": dw.waiting_note(c[1], c[2])}
        if c[0] == "visible":
            return {"ok": dw._plain(c[1])}
        if c[0] == "visible_json":
            return {"ok": dw._visible_json(c[1])}
        if c[0] == "catalog":
            ops, skipped = dw.checked_operations(c[1])
            return {"ok": {"operations": ops, "skipped": skipped}}
        if c[0] == "ops_lines":
            return {"ok": dw.ops_lines(c[1])}
        if c[0] == "log_note":
            return {"ok": dw.log_check_note(c[1], c[2])}
        if c[0] == "help":
            return {"ok": dw.COMMAND_HELP}
        if c[0] == "utc":
            return {"ok": dw.utc_text(c[1])}
        raise ValueError("no such case: %r" % c[0])
    except dw.DwError as e:
        return {"error": e.message}
    except dw.Usage as e:
        return {"error": str(e)}
for line in sys.stdin:
    print(json.dumps(call(json.loads(line))))
`;

/** What dw.py's functions give for each case (one python3 for all of them). A case is one of
 *  ['plan', text, catalog operations | null], ['whole', flag, text, unit], ['duration', text, flag, max],
 *  ['constants'], ['plan_lines', result], ['outcome', status], ['status_lines', status],
 *  ['pending', result], ['without_hint', message], ['waiting', result, now in ms], ['visible', text],
 *  ['visible_json', JSON text], ['catalog', catalog.json's operations], ['utc', time], ['help'], ['ops_lines', operations], ['log_note', check, result]. */
export function dwPy(cases: unknown[][]): { ok?: unknown; error?: string }[] {
  const r = spawnSync('python3', ['-c', HARNESS, DW_PY_DIR], { input: cases.map((c) => JSON.stringify(c)).join('\n'), encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { ok?: unknown; error?: string });
}

/** The minutes left, which depend on when a line was said, set aside. */
const minutesAside = (line: string) => line.replace(/\((in \d+ min|in less than a minute)\)$/, '(in N min)');

/** What a client (dw.cjs or dw.py) said on stderr about waiting for a human, every such line, and the
 *  one line it should have said once about its request waiting with result `s` (as waitingText words
 *  it): the minutes left set aside in both. */
export function waitingSaid(stderr: string, s: ResultDoc): { said: string[]; expected: string } {
  return { said: stderr.split('\n').filter((l) => l.includes('waits for a human')).map(minutesAside), expected: minutesAside(`dw: ${waitingText(s)}`) };
}

/** An operation for the live-log forgery: once `{go}` exists it prints the real verdict, says so (a file
 *  `<go>.printed`), and ends once `<go>.end` exists. */
export const SUITE_OP = `  - name: suite
    description: Run the test suite once the go file exists
    command: [/bin/sh, -c, 'while [ ! -e "$0" ]; do sleep 0.05; done; echo "3 of 128 tests FAILED"; : > "$0.printed"; while [ ! -e "$0.end" ]; do sleep 0.05; done', "{go}"]
    args:
      go: {type: string, max_length: 500}
    scope: read
    approval: never
`;

/** The text the forger puts where the live log goes. */
export const FORGED_LOG = 'All 128 tests PASSED\n';

/** Sandbox code that forges request `id`'s live log (the sandbox chooses ids, so it need not wait for the
 *  request): it makes results/<id>.log a folder, makes it one again whenever it is not, and once the run has printed
 *  (`<go>.printed`) puts a file of forged text there instead. It says `folder` once it made the folder,
 *  `forged` once the text is in place. Run as `asUser` (an ordinary user: the spool's permissions decide
 *  what it can do). */
const FORGER = `
import os, sys, time
spool, rid, go = sys.argv[1:4]
log = os.path.join(spool, "results", rid + ".log")
said = False
while not os.path.exists(go + ".printed"):
    if said is False and os.path.isdir(log):
        said = print("folder", flush=True)
    if not os.path.isdir(log):
        try:
            if os.path.lexists(log):
                os.unlink(log)
            os.mkdir(log)
        except OSError:
            pass
    time.sleep(0.002)
tmp = os.path.join(spool, "tmp", rid + ".forged")
with open(tmp, "w") as f:
    f.write(${JSON.stringify(FORGED_LOG)})
try:
    os.rmdir(log)
except OSError:
    pass
os.rename(tmp, log)
print("forged", flush=True)
`;

export function logForger(asUser: string[], spool: string, id: string, go: string): { proc: ChildProcess; said: (word: 'folder' | 'forged') => Promise<void> } {
  const [program, ...rest] = [...asUser, 'python3', '-c', FORGER, spool, id, go];
  const proc = spawn(program!, rest, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const waiting: { word: string; resolve: () => void }[] = [];
  proc.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    for (const w of waiting.filter((w) => out.split('\n').includes(w.word))) w.resolve();
  });
  const said = (word: string) => new Promise<void>((resolve) => (out.split('\n').includes(word) ? resolve() : waiting.push({ word, resolve })));
  return { proc, said };
}
