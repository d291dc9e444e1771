// The crash matrix: the daemon SIGKILLs itself at each named step (DUMBWAITER_FAULT, a test-only hook),
// is restarted, and then every request is in exactly one final state or uncertain, none ran twice
// (counted by the operation itself), and none was lost. The run keeper outlives the daemon, so a run
// it received is recorded as it ended and one it never received runs once, later; with the keeper
// killed too (the whole host crashed), a run that may have started is uncertain.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, countingCommand } from '../helpers/allowlists';
import type { KeyFile, RequestState } from '../../shared/protocol/types';
import { FAULT_STEPS, type FaultStep } from '../../main/core/faults';

let host: TestHost;
let key: KeyFile;

afterEach(async () => {
  await host.cleanup();
});

function setup(): string {
  host = new TestHost(NO_OPERATIONS);
  const counter = path.join(host.root, 'runs.txt');
  const command = countingCommand(counter, 'sleep 0.3');
  host.writeAllowlist(
    allowlistYaml(
      { name: 'record', command, concurrency: 4 },
      { name: 'guarded', command, approval: 'always', concurrency: 4 },
      { name: 'single', command: countingCommand(counter, 'sleep 1'), concurrency: 1 },
    ),
  );
  key = host.createKey('crash', 'read');
  return counter;
}

const SETTLED: RequestState[] = ['succeeded', 'failed', 'rejected', 'denied', 'expired', 'cancelled', 'uncertain'];

/** What each step must leave behind after the restart: the state of the request that was cut. */
const EXPECTED: Record<FaultStep, { state: RequestState; runs: number[] }> = {
  after_claim: { state: 'succeeded', runs: [1] }, // still only in claimed/: recovered and run
  after_ledger_insert: { state: 'succeeded', runs: [1] }, // recorded as queued (behind a busy slot): runs once
  after_start_at_once: { state: 'succeeded', runs: [1] }, // recorded as running, never sent to the keeper: queued again, runs once
  after_mark_running: { state: 'succeeded', runs: [1] }, // the same, started from the queue
  after_spawn: { state: 'succeeded', runs: [1] }, // the keeper started it: recorded as it ended
  after_exit_before_result: { state: 'succeeded', runs: [1] }, // the keeper kept its end for the next daemon
  after_result: { state: 'succeeded', runs: [1] },
  during_approval_wait: { state: 'awaiting_approval', runs: [0] }, // still waiting for a human
};

/** The same with the keeper killed as well, where that changes anything. */
const HOST_CRASH: Partial<Record<FaultStep, { state: RequestState; runs: number[] }>> = {
  after_start_at_once: { state: 'uncertain', runs: [0] }, // no keeper to say it never received it: never re-run
  after_mark_running: { state: 'uncertain', runs: [0] },
  after_spawn: { state: 'uncertain', runs: [0, 1] }, // the child may or may not have got going
  after_exit_before_result: { state: 'uncertain', runs: [1] },
};

/** Steps only a request that waits for a slot reaches (one with a free slot starts in intake's commit):
 *  the cut one queues behind a run of its operation, whose concurrency is 1. */
const QUEUED_BEHIND: readonly FaultStep[] = ['after_ledger_insert', 'after_mark_running'];

const CASES = [...FAULT_STEPS.map((step) => [step, false] as const), ...(Object.keys(HOST_CRASH) as FaultStep[]).map((step) => [step, true] as const)];

describe.each(CASES)('a daemon killed at %s (its run keeper too: %s)', (step, keeperToo) => {
  it('loses nothing and runs nothing twice', async () => {
    const counter = setup();
    const first = await host.startDaemon({ DUMBWAITER_FAULT: step });
    // Its keeper answers before anything is sent to it (the ledger names it for the next start).
    await eventually('the daemon to have its run keeper', () => host.service((s) => s.core.flags.keeper) ?? undefined);
    const cut = step === 'during_approval_wait' ? 'cut-guarded' : 'cut-1';
    const behind = QUEUED_BEHIND.includes(step);
    if (behind) {
      host.submit(key, 'blocker', 'single');
      await host.waitResult('blocker', ['running']);
    }
    host.submit(key, cut, step === 'during_approval_wait' ? 'guarded' : behind ? 'single' : 'record');
    const { signal } = await first.exited;
    expect(signal).toBe('SIGKILL');
    if (keeperToo) await host.crash(first);
    // More work arrives while the host is down.
    for (let i = 0; i < 3; i++) host.submit(key, `later-${i}`, 'record');

    await host.startDaemon();
    const { state, runs } = (keeperToo ? HOST_CRASH[step] : undefined) ?? EXPECTED[step];
    const r = await host.waitResult(cut, [state]);
    if (state === 'uncertain') expect(r.error?.code).toBe('interrupted');
    // The later ones ran: runs start in claim order (no operation here is at its concurrency limit), so
    // the cut request, had it been going to run (again), would have started first. A child the killed
    // daemon left running ends on its own.
    for (let i = 0; i < 3; i++) expect((await host.waitResult(`later-${i}`)).state).toBe('succeeded');
    await host.runGone(cut);
    expect(host.audit(cut, 'started').length).toBeLessThanOrEqual(1);

    const ran = existsSync(counter) ? readFileSync(counter, 'utf8').trim().split('\n').filter(Boolean) : [];
    expect(runs).toContain(ran.filter((x) => x === cut).length);
    for (let i = 0; i < 3; i++) expect(ran.filter((x) => x === `later-${i}`)).toHaveLength(1);
    // Exactly one state per request, and it is final (or uncertain, or still awaiting the human).
    const states = host.service((s) => [cut, 'later-0', 'later-1', 'later-2'].map((id) => s.requests.get(id)?.state));
    expect(states).toEqual([state, 'succeeded', 'succeeded', 'succeeded']);
    expect(host.result(cut)?.state).toBe(state);

    if (step === 'during_approval_wait') {
      expect(host.cli(['approvals', 'approve', cut]).status).toBe(0);
      await host.waitResult(cut, ['succeeded']);
      await eventually('its one run', () => (readFileSync(counter, 'utf8').split('\n').filter((x) => x === cut).length === 1 ? true : undefined));
    } else {
      expect(SETTLED).toContain(state);
    }
  });
});
