// `dumbwaiter approvals watch`: the app's approval card on a terminal. Each request that waits for a
// person is printed whole (approvalCard.ts), then asked about: approve, approve for a while (the app's
// durations, and for each argument this value, any value, or values matching a pattern), deny with a
// reason, or skip. The answers are read from stdin, a line each, so a terminal and a pipe both work.
//
// A person approves only what was fully on their screen: a line that comes while no question is open
// (typed ahead, before a card was printed) is dropped, with a word, never kept as an answer; and before an
// approval the request is read again, and approved only if it still waits exactly as shown (else its
// card is shown again), as the app's in-place approval does (core/app/approvalInPlace.ts).
import { createInterface } from 'node:readline';
import type { Host } from '../../core/host/host';
import { cliActor } from '../../core/ledger/audit';
import { parseDuration, formatDuration } from '../../core/duration';
import type { Widen } from '../../core/policy/grantRules';
import { GRANT_MINUTES, type PendingApprovalView } from '../../../shared/ipc/views';
import { visible } from '../../../shared/text/visible';
import { say, warn } from '../output';
import { approvalCardText, approvedText, cardComplete } from './approvalCard';
import { onInterrupt, type Interrupt } from './interrupt';

export const WATCH_USAGE = 'usage: dumbwaiter approvals watch [--spool NAME]';

/** How often the ledger is asked for new requests while none is on screen. */
const POLL_MS = 500;
const DEFAULT_MINUTES = 30;

/** stdin, a line at a time; null once it is closed (or Ctrl-C came). */
class Answers {
  private waiter: ((line: string | null) => void) | null = null;
  private readonly rl;
  closed = false;

  constructor(private readonly interrupt: Interrupt) {
    const rl = (this.rl = createInterface({ input: process.stdin, terminal: false }));
    rl.on('line', (line) => {
      if (this.waiter) this.take(line);
      else warn(`(no question is open: the line "${visible(line)}" was ignored)`);
    });
    rl.on('close', () => {
      this.closed = true;
      this.take(null);
    });
    void interrupt.signalled.then(() => {
      rl.close();
      this.take(null);
    });
  }

  private take(line: string | null): void {
    const w = this.waiter;
    this.waiter = null;
    w?.(line);
  }

  /** Stops reading stdin (which would keep the process alive). */
  close(): void {
    this.rl.close();
  }

  /** Asks, and waits for the next line (trimmed). */
  ask(question: string): Promise<string | null> {
    process.stdout.write(`${question} `);
    if (this.closed || this.interrupt.stopped) return Promise.resolve(null);
    return new Promise((resolve) => (this.waiter = (l) => resolve(l === null ? null : l.trim())));
  }
}

type Outcome = 'decided' | 'skipped' | 'changed' | 'end';

/** `spool`: only the requests of that spool (--spool), else every spool's. */
export async function watchApprovals(svc: Host, spool?: string): Promise<void> {
  const interrupt = onInterrupt();
  const answers = new Answers(interrupt);
  if (!process.stdin.isTTY) warn('stdin is not a terminal: answers are read from its lines, each taken only once its card is shown.');
  /** Cards skipped, as they were shown: asked again only once they change. */
  const skipped = new Set<string>();
  let idleSaid = false;
  try {
    while (!interrupt.stopped && !answers.closed) {
      const next = svc.verdicts.pending().find((p) => (spool === undefined || p.spool === spool) && !skipped.has(JSON.stringify(p)));
      if (!next) {
        if (!idleSaid) say('Waiting for requests that need a person (Ctrl-C ends).');
        idleSaid = true;
        await interrupt.pause(POLL_MS);
        continue;
      }
      idleSaid = false;
      const outcome = await askAbout(svc, next, answers);
      if (outcome === 'end') break;
      if (outcome === 'skipped') skipped.add(JSON.stringify(next));
    }
  } finally {
    answers.close();
    interrupt.release();
  }
}

async function askAbout(svc: Host, p: PendingApprovalView, answers: Answers): Promise<Outcome> {
  say(`\n${approvalCardText(p, svc.context.settings.spools.length > 1)}`);
  const complete = cardComplete(p);
  const plan = p.approval.steps !== undefined;
  if (!complete) say('The host did not say all that decides this run (its environment and limits): it cannot be approved here.');
  const choices = [...(complete ? ['[a]pprove'] : []), ...(complete && !plan ? ['approve for a [w]hile'] : []), '[d]eny', '[s]kip'];
  for (;;) {
    const answer = await answers.ask(`${choices.join(', ')}?`);
    if (answer === null) return 'end';
    const a = answer.toLowerCase();
    if (a === 'a' && complete) return approveAsShown(svc, p);
    if (a === 'w' && complete && !plan) {
      const grant = await askGrant(p, answers);
      return grant === null ? 'end' : approveAsShown(svc, p, grant.seconds, grant.widen);
    }
    if (a === 'd') {
      const reason = await answers.ask('Reason for denying (the agent sees it; empty for none):');
      if (reason === null) return 'end';
      return decide(() => {
        svc.verdicts.deny(p.id, cliActor(), reason);
        return `Denied ${p.id}.`;
      });
    }
    if (a === 's') return 'skipped';
    say(`Answer ${choices.map((c) => c.replace(/.*\[(.)\].*/, '$1')).join(', ')}.`);
  }
}

/** A decision the host may refuse (the request moved on meanwhile): said in a line, and the watch goes on. */
function decide(act: () => string): Outcome {
  try {
    say(act());
  } catch (e) {
    warn(`Not done: ${e instanceof Error ? e.message : String(e)}`);
  }
  return 'decided';
}

/** Approves `p` only if it still waits exactly as its card showed it; else says so ('changed': shown again). */
function approveAsShown(svc: Host, p: PendingApprovalView, seconds?: number, widen?: Widen): Outcome {
  const now = svc.verdicts.pending().find((x) => x.id === p.id);
  if (!now) {
    const row = svc.requests.get(p.id);
    warn(`${p.id} is no longer waiting${row ? `: it is ${row.state}${row.decided_by ? `, decided by ${visible(row.decided_by)}` : ''}` : ''}. Nothing approved.`);
    return 'decided';
  }
  if (JSON.stringify(now) !== JSON.stringify(p)) {
    warn(`${p.id} changed since its card was printed: nothing approved; here it is again.`);
    return 'changed';
  }
  return decide(() => approvedText(p.id, svc.verdicts.approve(p.id, cliActor(), seconds, widen)));
}

/** The app's choices for a time-boxed approval: how long, and what later calls may give as each argument. */
async function askGrant(p: PendingApprovalView, answers: Answers): Promise<{ seconds: number; widen: Widen | undefined } | null> {
  let seconds: number | null = null;
  while (seconds === null) {
    const answer = await answers.ask(`For how long? ${GRANT_MINUTES.map((m) => formatDuration(m * 60)).join(', ')} or any duration such as 45m [${formatDuration(DEFAULT_MINUTES * 60)}]:`);
    if (answer === null) return null;
    try {
      seconds = answer === '' ? DEFAULT_MINUTES * 60 : parseDuration(answer.replace(/\s+/g, '').replace(/min$/, 'm'));
    } catch (e) {
      say((e as Error).message);
    }
  }
  const widen: Widen = {};
  for (const name of Object.keys(p.args)) {
    for (;;) {
      const answer = await answers.ask(`Later calls may give as ${visible(name)}: [t]his value, [a]ny value, values [m]atching a pattern [t]:`);
      if (answer === null) return null;
      if (answer === '' || answer === 't') break;
      if (answer === 'a') {
        widen[name] = { any: true };
        break;
      }
      if (answer === 'm') {
        const pattern = await answers.ask(`Pattern for ${visible(name)} (RE2; the whole value must match):`);
        if (pattern === null) return null;
        if (pattern !== '') {
          widen[name] = { match: pattern };
          break;
        }
      }
    }
  }
  return { seconds, widen: Object.keys(widen).length ? widen : undefined };
}
