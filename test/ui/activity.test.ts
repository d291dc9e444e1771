// The Activity screen in real Chromium against the real host and daemon: runs in progress with their
// live output, cancelling one (and two at once), the paused banner, the queue, approvals and results,
// filters by key and operation, an uncertain run (made for real by killing the daemon mid-run) resolved
// by a human, and live output that stops being asked for once the run ends.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ui } from './harness';
import type { KeyFile } from '../../shared/protocol/types';

/** Created by the test to end the 'brief' run: it runs as long as the test needs, however slow the machine. */
const END_BRIEF = path.join(mkdtempSync(path.join(os.tmpdir(), 'dw-ui-activity-')), 'end-brief');

const ALLOWLIST = `version: 1
operations:
  - name: hello
    description: Say hello
    command: [/bin/echo, "hello {name}"]
    args:
      name: {type: string, max_length: 50}
    scope: read
    approval: never
    timeout_s: 10
  - name: slow
    description: Something that takes a while
    command: [/bin/sh, -c, "echo start; sleep 30"]
    scope: read
    approval: never
    timeout_s: 60
    concurrency: 4
  - name: brief
    description: Runs until the test lets it end
    command: [/bin/sh, -c, "echo begin; while [ ! -e '${END_BRIEF}' ]; do sleep 0.05; done; echo end"]
    scope: read
    approval: never
    timeout_s: 120
    concurrency: 4
  - name: ship
    description: Ship it (asks first)
    command: [/bin/echo, shipped]
    scope: write
    approval: always
    timeout_s: 10
`;

let ui: Ui;
let alice: KeyFile;
let bob: KeyFile;
beforeAll(async () => {
  ui = await Ui.start({ allowlist: ALLOWLIST });
  alice = ui.host.createKey('alice', 'write');
  bob = ui.host.createKey('bob', 'write');
});
afterAll(async () => {
  await ui?.close();
  rmSync(path.dirname(END_BRIEF), { recursive: true, force: true });
});

const state = (id: string) => ui.svc.requests.get(id)?.state;
const section = (name: string | RegExp) => ui.page.getByRole('region', { name });

describe('the Activity screen', () => {
  it('says what to do when there is nothing yet', async () => {
    await ui.open('/activity');
    await ui.page.getByRole('status').filter({ hasText: 'No requests yet' }).waitFor();
    await ui.page.getByRole('button', { name: 'Give the sandbox a key' }).click();
    await ui.page.waitForURL(/#\/keys$/);
    expect(ui.errors).toEqual([]);
  });

  it('an uncertain run (the daemon killed mid-run) is listed and resolved by a human', async () => {
    ui.host.submit(alice, 'unc-1', 'slow', {}, { intent: 'Migrate the database' });
    ui.host.submit(alice, 'unc-2', 'slow', {}, { intent: 'Rotate the logs' });
    await expect.poll(() => [state('unc-1'), state('unc-2')], { timeout: 15_000 }).toEqual(['running', 'running']);
    const pids = [await ui.host.runPid('unc-1'), await ui.host.runPid('unc-2')];
    await ui.daemon!.kill9();
    ui.daemon = await ui.host.startDaemon();
    await expect.poll(() => [state('unc-1'), state('unc-2')], { timeout: 15_000 }).toEqual(['uncertain', 'uncertain']);
    for (const pid of pids) process.kill(-pid, 'SIGKILL'); // the runs the killed daemon left: not needed any more

    await ui.open('/activity');
    const uncertain = section(/^Uncertain/);
    await uncertain.getByRole('row').filter({ hasText: 'unc-1' }).waitFor();
    expect(await uncertain.getByRole('row').filter({ hasText: 'unc-2' }).count()).toBe(1);
    await uncertain.getByRole('button', { name: 'Resolve unc-1' }).click();
    await ui.page.waitForURL(/#\/requests\/unc-1$/);
    await ui.page.getByRole('textbox', { name: 'Note' }).fill('The migration table shows it never ran');
    await ui.page.getByRole('button', { name: 'It failed' }).click();
    // Asked first: nothing is recorded until the person confirms.
    const confirm = ui.page.getByRole('dialog');
    await confirm.getByRole('heading', { name: 'Record that it failed?' }).waitFor();
    expect(state('unc-1')).toBe('uncertain');
    await confirm.getByRole('button', { name: 'It failed' }).click();
    await expect.poll(() => state('unc-1')).toBe('failed');
    const result = await ui.host.waitResult('unc-1', ['failed']);
    expect([result.resolved_by, result.note]).toEqual(['human', 'The migration table shows it never ran']);
    expect(state('unc-2')).toBe('uncertain'); // left for the overview below
    expect(ui.errors).toEqual([]);
  });

  it('shows every kind of request: running with live output, paused queue, awaiting approval, results; cancels a run', async () => {
    ui.host.submit(alice, 'hello-1', 'hello', { name: 'Alice' }, { intent: 'Say hello' });
    ui.host.submit(bob, 'hello-2', 'hello', { name: 'Bob' });
    await ui.host.waitResult('hello-1');
    await ui.host.waitResult('hello-2');
    ui.host.submit(bob, 'ship-1', 'ship', {}, { intent: 'Release 1.2' });
    ui.host.submit(alice, 'slow-1', 'slow', {}, { intent: 'Long job' });
    await expect.poll(() => [state('ship-1'), state('slow-1')]).toEqual(['awaiting_approval', 'running']);

    await ui.open('/activity');
    // Running, with the output as it is written.
    const running = section(/^Running/);
    await expect.poll(() => running.getByLabel('Live output of slow-1').textContent()).toBe('start');
    // Awaiting approval, with a way to decide.
    await section(/^Awaiting approval/).getByRole('button', { name: 'Decide on ship-1' }).waitFor();
    // Results.
    const results = section('Recent results');
    await results.getByRole('row').filter({ hasText: 'hello-1' }).waitFor();

    // Paused: a clear banner, and new requests wait in the queue.
    ui.svc.setPaused(true, 'test');
    await ui.page.getByText('The host is paused.', { exact: true }).waitFor();
    ui.host.submit(bob, 'hello-3', 'hello', { name: 'queued' });
    await section(/^Queued/).getByRole('row').filter({ hasText: 'hello-3' }).waitFor();
    expect(state('hello-3')).toBe('queued');
    // Tall enough to show every section at once.
    await ui.page.setViewportSize({ width: 1200, height: 1500 });
    await ui.screenshots('activity');
    await ui.page.setViewportSize({ width: 1200, height: 800 });

    await ui.page.getByRole('button', { name: 'Unpause host' }).click();
    await expect.poll(() => ui.svc.flags.paused).toBe(false);
    expect((await ui.host.waitResult('hello-3')).state).toBe('succeeded');
    await expect.poll(() => ui.page.getByText('The host is paused.', { exact: true }).count()).toBe(0);

    // Cancel the running one (after a confirmation).
    await running.getByRole('button', { name: 'Cancel slow-1' }).click();
    await ui.page.getByRole('dialog').getByRole('button', { name: 'Stop it' }).click();
    const cancelled = await ui.host.waitResult('slow-1', ['cancelled']);
    expect(cancelled.state).toBe('cancelled');
    expect(cancelled.stdout).toBe('start\n');
    await results.getByRole('row').filter({ hasText: 'slow-1' }).getByText('Cancelled').waitFor();
    await running.getByText('No run in progress').waitFor();
    expect(ui.errors).toEqual([]);
  });

  it('filters by key and by operation', async () => {
    // A second approval, from alice: the key filter must take it out of the waiting list.
    ui.host.submit(alice, 'ship-2', 'ship', {}, { intent: 'Release 1.3' });
    await expect.poll(() => state('ship-2')).toBe('awaiting_approval');
    await ui.open('/activity');
    const results = section('Recent results');
    const rowIds = (list: ReturnType<typeof section>) => async () => (await list.locator('tbody tr td:first-child a').allTextContents()).sort();
    const ids = rowIds(results);
    const awaiting = rowIds(section(/^Awaiting approval/));
    const uncertain = rowIds(section(/^Uncertain/));
    await expect.poll(ids).toEqual(['hello-1', 'hello-2', 'hello-3', 'slow-1', 'unc-1']);
    await expect.poll(awaiting).toEqual(['ship-1', 'ship-2']);
    await expect.poll(uncertain).toEqual(['unc-2']);

    await ui.page.getByLabel('Key', { exact: true }).selectOption({ label: `bob (${bob.key_id})` });
    await expect.poll(ids).toEqual(['hello-2', 'hello-3']);
    // The filter applies to every list: bob's approval stays, alice's approval and uncertain run go.
    await expect.poll(awaiting).toEqual(['ship-1']);
    await expect.poll(() => section(/^Uncertain/).count()).toBe(0);

    await ui.page.getByLabel('Operation', { exact: true }).selectOption('ship');
    await expect.poll(() => results.getByText('No finished request matches these filters.').count()).toBe(1);
    await expect.poll(awaiting).toEqual(['ship-1']);

    await ui.page.getByLabel('Key', { exact: true }).selectOption({ label: 'All keys' });
    await ui.page.getByLabel('Operation', { exact: true }).selectOption('slow');
    await expect.poll(ids).toEqual(['slow-1', 'unc-1']);
    await expect.poll(uncertain).toEqual(['unc-2']);
    await expect.poll(() => section(/^Awaiting approval/).getByText('Nothing is waiting for your decision').count()).toBe(1);

    await ui.page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(ids).toEqual(['hello-1', 'hello-2', 'hello-3', 'slow-1', 'unc-1']);
    await expect.poll(awaiting).toEqual(['ship-1', 'ship-2']);
    expect(ui.errors).toEqual([]);
  });

  it('a request opens its detail', async () => {
    await ui.open('/activity');
    await section('Recent results').getByRole('row').filter({ hasText: 'hello-1' }).getByRole('cell').nth(1).click();
    await ui.page.waitForURL(/#\/requests\/hello-1$/);
    await ui.page.getByLabel('Standard output').getByText('hello Alice').waitFor();
    await ui.screenshots('request-detail');
    expect(ui.errors).toEqual([]);
  });

  it('cancels two runs at once: each button stays busy until its own cancel is done', async () => {
    ui.host.submit(alice, 'two-1', 'slow', {});
    ui.host.submit(alice, 'two-2', 'slow', {});
    await expect.poll(() => [state('two-1'), state('two-2')], { timeout: 15_000 }).toEqual(['running', 'running']);
    await ui.open('/activity');
    // The host answers cancels only when the test lets it: both are in flight together.
    await ui.page.evaluate(() => {
      const w = window as unknown as { __dwInvoke: (c: string, a: unknown) => Promise<unknown>; __release: () => void };
      const invoke = w.__dwInvoke;
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      w.__release = open;
      w.__dwInvoke = async (c, a) => {
        if (c.endsWith('requests.cancel')) await gate;
        return invoke(c, a);
      };
    });
    const running = section(/^Running/);
    const button = (id: string) => running.getByRole('button', { name: `Cancel ${id}` });
    for (const id of ['two-1', 'two-2']) {
      await button(id).click();
      await ui.page.getByRole('dialog').getByRole('button', { name: 'Stop it' }).click();
      await expect.poll(() => button(id).textContent()).toBe('Cancelling…');
    }
    expect([await button('two-1').isDisabled(), await button('two-2').isDisabled()]).toEqual([true, true]);
    expect([state('two-1'), state('two-2')]).toEqual(['running', 'running']);

    await ui.page.evaluate(() => (window as unknown as { __release: () => void }).__release());
    expect((await ui.host.waitResult('two-1', ['cancelled'])).state).toBe('cancelled');
    expect((await ui.host.waitResult('two-2', ['cancelled'])).state).toBe('cancelled');
    await running.getByText('No run in progress').waitFor();
    expect(ui.errors).toEqual([]);
  });

  it('live output is asked for while the run goes, and no more once it has ended', async () => {
    const asked: string[] = [];
    const liveOutput = ui.svc.liveOutput.bind(ui.svc);
    ui.svc.liveOutput = (id, from) => {
      asked.push(id);
      return liveOutput(id, from);
    };
    try {
      await ui.open('/activity');
      ui.host.submit(bob, 'brief-1', 'brief', {});
      const running = section(/^Running/);
      await expect.poll(() => running.getByLabel('Live output of brief-1').textContent()).toBe('begin');
      // Asked again and again while it runs.
      await expect.poll(() => asked.filter((id) => id === 'brief-1').length).toBeGreaterThan(1);
      expect(state('brief-1')).toBe('running');
      writeFileSync(END_BRIEF, '');
      expect((await ui.host.waitResult('brief-1')).stdout).toBe('begin\nend\n');
      await section('Recent results').getByRole('row').filter({ hasText: 'brief-1' }).waitFor();
      await running.getByText('No run in progress').waitFor();
      const during = asked.filter((id) => id === 'brief-1').length;
      // Several poll intervals (0.5 s) later, nothing more was asked: counted on the page's own clock, by
      // its polls of another run, started after this one ended.
      rmSync(END_BRIEF);
      ui.host.submit(bob, 'brief-2', 'brief', {});
      await expect.poll(() => asked.filter((id) => id === 'brief-2').length).toBeGreaterThanOrEqual(4);
      expect(asked.filter((id) => id === 'brief-1').length).toBe(during);
      writeFileSync(END_BRIEF, '');
      expect((await ui.host.waitResult('brief-2')).state).toBe('succeeded');
    } finally {
      ui.svc.liveOutput = liveOutput;
      writeFileSync(END_BRIEF, ''); // never left running
    }
    expect(ui.errors).toEqual([]);
  });
});
