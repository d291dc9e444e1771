// What the sandbox clients' unit tests share: a result document to start from, and dw.py's own
// functions, called through one python3 for a batch of cases, to show that dw.py says what dw.cjs says.
import { spawnSync } from 'node:child_process';
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
        if c[0] == "notes":
            return {"ok": dw.run_notes(c[1])}
        if c[0] == "waiting":
            return {"ok": dw.waiting_note(c[1], c[2])}
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
 *  ['constants'], ['plan_lines', result], ['notes', result], ['waiting', result, now in ms]. */
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
