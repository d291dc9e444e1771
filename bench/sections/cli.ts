// The command line: how long `dumbwaiter --version` takes against a bare `node -e ''`, and how soon a
// change it makes (approve, cancel) reaches a running daemon.
import { spawn } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Requests } from '../../main/core/ledger/requests';
import { BenchHost, CLI, NOOP_ALLOWLIST, ResultWatcher } from '../lib/host';
import { summarize, type Summary } from '../lib/stats';

/** The no-op, the same asking for approval, and a run that lasts until it is cancelled. */
export const CLI_ALLOWLIST = `${NOOP_ALLOWLIST}  - name: approved
    description: /bin/true once a human approves it
    command: [/bin/true]
    scope: read
    approval: always
  - name: sleep
    description: a run that lasts until it is cancelled
    command: [/bin/sleep, '600']
    scope: read
    approval: never
`;

/** When a process exited: `epoch` on the ledger's clock (Date.now()), `at` on performance.now(). */
interface Exit {
  epoch: number;
  at: number;
}

/** Runs a command to its exit; fails unless it exits 0. */
function runToExit(args: string[]): Promise<Exit> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    const p = spawn(args[0]!, args.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    p.on('error', reject);
    p.on('exit', (code) => {
      const t = { epoch: Date.now(), at: performance.now() };
      if (code === 0) resolve(t);
      else reject(new Error(`${args.slice(1).join(' ')} exited ${code}: ${stderr}`));
    });
  });
}

/** `dumbwaiter --version` (everything the command line loads, no work) and `node -e ''`, in turns so
 *  that both see the same noise. */
export async function measureVersion(runs: number): Promise<{ version: Summary; node: Summary }> {
  const version: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    node.push((await runToExit([process.execPath, '-e', ''])).at - t0);
    t0 = performance.now();
    version.push((await runToExit([process.execPath, CLI, '--version'])).at - t0);
  }
  return { version: summarize(version), node: summarize(node) };
}

/** ms from the change (its audit entry, written in the command's commit) to the daemon acting on it,
 *  and from the command's exit (which can come after the daemon acted: then negative). */
export interface Reached {
  from_commit: number[];
  from_exit: number[];
}

export interface CliChanges {
  /** `dumbwaiter approvals approve ID` to the run's `started_at` in the ledger. */
  approve: Reached;
  /** `dumbwaiter cancel ID` of a running sleep to its `cancelled` result in place. */
  cancel: Reached;
}

/**
 * `n` requests that wait for approval, each approved with the real command line, and `n` running
 * sleeps, each cancelled with it; the times are on the ledger's clock (Date.now(), which the command
 * and the daemon stamp with).
 */
export async function measureCliChanges(host: BenchHost, n: number): Promise<CliChanges> {
  const watcher = new ResultWatcher(host.results);
  const db = new Database(path.join(host.home, 'ledger.sqlite'), { readonly: true, fileMustExist: true });
  const requests = new Requests(db);
  const auditAt = db.prepare('SELECT at FROM audit WHERE request_id = ? AND kind = ?');
  const changedAt = (id: string, kind: string) => Date.parse((auditAt.get(id, kind) as { at: string }).at);
  const cli = (...args: string[]) => runToExit([process.execPath, CLI, ...args, '--home', host.home, '--spool', host.spool]);
  const out: CliChanges = { approve: { from_commit: [], from_exit: [] }, cancel: { from_commit: [], from_exit: [] } };
  try {
    for (let i = 0; i < n; i++) {
      const id = host.nextId('approve');
      const waiting = watcher.waitFor(id, (d) => d.state === 'awaiting_approval', 'awaiting_approval');
      host.submitFast(id, 'approved');
      await waiting;
      const ran = watcher.waitFor(id, (d) => d.state !== 'awaiting_approval' && d.state !== 'queued', 'running or final');
      const exited = await cli('approvals', 'approve', id);
      const r = await ran;
      if (r.doc.state !== 'running' && r.doc.state !== 'succeeded') throw new Error(`${id} went ${r.doc.state} once approved`);
      const started = Date.parse(requests.get(id)!.started_at!);
      out.approve.from_commit.push(started - changedAt(id, 'approved'));
      out.approve.from_exit.push(started - exited.epoch);
    }
    for (let i = 0; i < n; i++) {
      const id = host.nextId('cancel');
      const running = watcher.waitFor(id, (d) => d.state === 'running', 'running');
      host.submitFast(id, 'sleep');
      await running;
      const final = watcher.waitFinal(id);
      const exited = await cli('cancel', id);
      const r = await final;
      if (r.doc.state !== 'cancelled') throw new Error(`${id} ended ${r.doc.state} when cancelled`);
      out.cancel.from_commit.push(r.epoch - changedAt(id, 'cancel_requested'));
      out.cancel.from_exit.push(r.epoch - exited.epoch);
    }
  } finally {
    db.close();
    watcher.close();
  }
  return out;
}
