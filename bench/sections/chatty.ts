// A chatty run across a SIGKILL of the daemon (issue 33): an operation prints numbered lines for a few
// seconds; once its log holds some of them the daemon (only the daemon: not its spawner or keeper) is
// killed with SIGKILL, and started again; then its settled result (not an interim `uncertain` whose
// reconcile check is still to come) is awaited. The run's output is complete to the byte when its log
// holds the whole printed text, every numbered line once and in order.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BenchHost, ResultWatcher } from '../lib/host';
import { sleep } from '../lib/stats';
import { isFinalState } from '../../shared/protocol/types';

/** Lines the run prints, one every 2 ms: about 3 s of output. */
const LINES = 1500;
/** The kill comes once the log holds this many. */
const KILL_AFTER = 200;

/** Node prints the lines (no fork a line, as a shell's sleep would); no braces, which an allowlist
 *  command reads as an argument's place. */
const SCRIPT = `let i=0;const t=setInterval(()=>(process.stdout.write("line "+ ++i+"\\n"),i>=${LINES}&&clearInterval(t)),2)`;

export const CHATTY_ALLOWLIST = `version: 1
operations:
  - name: chatty
    description: numbered lines for a few seconds, for the benchmark
    command: [${JSON.stringify(process.execPath)}, -e, ${JSON.stringify(SCRIPT)}]
    scope: read
    approval: never
`;

export interface ChattyRun {
  lines_expected: number;
  /** Numbered lines in the log at the kill, and at the end. */
  lines_at_kill: number;
  lines_logged: number;
  /** Numbered lines that appear more than once, and those missing. */
  duplicated: number;
  missing: number;
  /** The whole printed text is in the log, unbroken. */
  complete: boolean;
  state: string;
  exit_code: number | null;
  /** From the SIGKILL to the new daemon's "daemon running". */
  down_ms: number;
}

function numbered(log: string): string[] {
  return log.split('\n').filter((l) => /^line \d+$/.test(l));
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

export async function measureChattyKill(host: BenchHost): Promise<ChattyRun> {
  const watcher = new ResultWatcher(host.results);
  const id = host.nextId('chatty');
  const log = path.join(host.results, `${id}.log`);
  let d = host.startDaemon();
  try {
    await d.ready();
    const settled = watcher.waitFor(id, (doc) => isFinalState(doc.state) || (doc.state === 'uncertain' && !doc.reconcile_pending), 'settled', 60_000);
    host.submitFast(id, 'chatty');
    const deadline = Date.now() + 30_000;
    while (numbered(readLog(log)).length < KILL_AFTER) {
      if (Date.now() > deadline) throw new Error(`the chatty run printed fewer than ${KILL_AFTER} lines in 30 s`);
      await sleep(10);
    }
    const linesAtKill = numbered(readLog(log)).length;
    const killedAt = performance.now();
    d.proc.kill('SIGKILL');
    await d.exited;
    d = host.startDaemon();
    const up = await d.ready();
    const r = await settled.catch(() => null);
    const text = readLog(log);
    const lines = numbered(text);
    const counts = new Map<string, number>();
    for (const l of lines) counts.set(l, (counts.get(l) ?? 0) + 1);
    const expected = Array.from({ length: LINES }, (_, i) => `line ${i + 1}\n`).join('');
    return {
      lines_expected: LINES,
      lines_at_kill: linesAtKill,
      lines_logged: lines.length,
      duplicated: [...counts.values()].filter((n) => n > 1).length,
      missing: Array.from({ length: LINES }, (_, i) => `line ${i + 1}`).filter((l) => !counts.has(l)).length,
      complete: text.includes(expected) && lines.length === LINES,
      state: r ? r.doc.state : 'not settled within 60 s',
      exit_code: r ? r.doc.exit_code : null,
      down_ms: up - killedAt,
    };
  } finally {
    watcher.close();
    await d.stop();
  }
}
