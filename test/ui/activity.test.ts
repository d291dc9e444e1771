// The Activity screen in real Chromium against the real host and daemon: runs in progress with their
// live output, cancelling one (and two at once), the paused banner, the queue, approvals and results,
// filters by key and operation, an uncertain run (made for real by killing the daemon mid-run) resolved
// by a human, a run that outlives a killed daemon (orphaned: shown as such, and killed from the screen),
// an uncertain run whose reconcile check is shown and run again, and live output that stops being
// asked for once the run ends.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ui } from './harness';
import { eventually } from '../helpers/host';
import { groupRunning } from '../helpers/processes';
import type { KeyFile } from '../../shared/protocol/types';

const TMP = mkdtempSync(path.join(os.tmpdir(), 'dw-ui-activity-'));
/** Created by the test to end the 'brief' run: it runs as long as the test needs, however slow the machine. */
const END_BRIEF = path.join(TMP, 'end-brief');
/** What the 'publish' operation's reconcile check looks for: <id>.published (it took effect) or <id>.lost (it did not). */
const PUBLISHED = path.join(TMP, 'published');

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
  - name: lingering
    description: Runs until it is killed
    command: [/bin/sh, -c, "echo working; sleep 120"]
    scope: read
    approval: never
    timeout_s: 300
    concurrency: 4
  - name: publish
    description: Publish (its reconcile check looks the release up)
    command: [/bin/sh, -c, "echo publishing; sleep 120"]
    reconcile:
      command: [/bin/sh, -c, 'echo "looked up $1"; test -e "$0.published" && exit 0; test -e "$0.lost" && exit 1; echo "the registry did not answer" >&2; exit 3', "${PUBLISHED}/{request_id}", "{request_id}"]
      timeout_s: 20
    scope: read
    approval: never
    timeout_s: 300
    concurrency: 4
  - name: tag
    description: Tags things
    command: [/bin/echo, "{tags}"]
    args:
      tags: {type: array, items: {type: string}}
    scope: read
    approval: never
    timeout_s: 10
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
  rmSync(TMP, { recursive: true, force: true });
});

const state = (id: string) => ui.svc.requests.get(id)?.state;
const section = (name: string | RegExp) => ui.page.getByRole('region', { name });

/**
 * Kills the host (the daemon and its run keeper) with SIGKILL while `ids` run, then starts it again. `orphans`: their runs outlive
 * it (the new daemon finds them running); else they are killed before it starts (interrupted).
 * Returns the runs' process groups.
 */
async function crashDaemon(ids: string[], orphans: boolean): Promise<number[]> {
  await expect.poll(() => ids.map(state), { timeout: 15_000 }).toEqual(ids.map(() => 'running'));
  const pids = await Promise.all(ids.map((id) => ui.host.runPid(id)));
  await ui.host.crash(ui.daemon!);
  if (!orphans) {
    for (const pid of pids) process.kill(-pid, 'SIGKILL');
    await eventually('the interrupted runs to end', () => (pids.some(groupRunning) ? undefined : true));
  }
  ui.daemon = await ui.host.startDaemon();
  return pids;
}

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
    await crashDaemon(['unc-1', 'unc-2'], false);
    await expect.poll(() => [state('unc-1'), state('unc-2')], { timeout: 15_000 }).toEqual(['uncertain', 'uncertain']);

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
    ui.svc.settings.setPaused(true, 'test');
    await ui.page.getByText('The host is paused.', { exact: true }).waitFor();
    ui.host.submit(bob, 'hello-3', 'hello', { name: 'queued' });
    await section(/^Queued/).getByRole('row').filter({ hasText: 'hello-3' }).waitFor();
    expect(state('hello-3')).toBe('queued');
    // Tall enough to show every section at once.
    await ui.page.setViewportSize({ width: 1200, height: 1500 });
    await ui.screenshots('activity');
    await ui.page.setViewportSize({ width: 1200, height: 800 });

    // The banner's button says what the sidebar's does.
    await ui.page.locator('.callout', { hasText: 'The host is paused.' }).getByRole('button', { name: 'Resume', exact: true }).click();
    await expect.poll(() => ui.svc.core.flags.paused).toBe(false);
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
    const release = await ui.holdChannel('requests.cancel');
    const running = section(/^Running/);
    const button = (id: string) => running.getByRole('button', { name: `Cancel ${id}` });
    for (const id of ['two-1', 'two-2']) {
      await button(id).click();
      await ui.page.getByRole('dialog').getByRole('button', { name: 'Stop it' }).click();
      await expect.poll(() => button(id).textContent()).toBe('Cancelling…');
    }
    expect([await button('two-1').isDisabled(), await button('two-2').isDisabled()]).toEqual([true, true]);
    expect([state('two-1'), state('two-2')]).toEqual(['running', 'running']);

    await release();
    expect((await ui.host.waitResult('two-1', ['cancelled'])).state).toBe('cancelled');
    expect((await ui.host.waitResult('two-2', ['cancelled'])).state).toBe('cancelled');
    await running.getByText('No run in progress').waitFor();
    expect(ui.errors).toEqual([]);
  });

  it('live output is asked for while the run goes, and no more once it has ended', async () => {
    const asked: string[] = [];
    const liveOutput = ui.svc.requests.liveOutput.bind(ui.svc.requests);
    ui.svc.requests.liveOutput = (id, from) => {
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
      ui.svc.requests.liveOutput = liveOutput;
      writeFileSync(END_BRIEF, ''); // never left running
    }
    expect(ui.errors).toEqual([]);
  });

  it('a run that outlived a killed daemon is shown running, marked as outliving the restart, and Kill kills it', async () => {
    ui.host.submit(bob, 'orph-1', 'lingering', {}, { intent: 'Index the archive' });
    // Its output reaches the log through the host that started it: what it writes after that host is gone is lost.
    await eventually('its first output', () => (existsSync(path.join(ui.host.spool, 'results', 'orph-1.log')) && ui.host.logOf('orph-1') === 'working\n' ? true : undefined));
    const [pid] = await crashDaemon(['orph-1'], true);
    await expect.poll(() => ui.svc.requests.get('orph-1')?.orphaned, { timeout: 15_000 }).toBe(1);
    expect(groupRunning(pid!)).toBe(true);

    await ui.open('/activity');
    const card = section(/^Running/).getByRole('listitem').filter({ hasText: 'orph-1' });
    await card.getByText('Outlived a host restart: still running, watched').waitFor();
    await expect.poll(() => card.getByLabel('Live output of orph-1').textContent()).toBe('working');
    expect(await card.getByRole('button', { name: 'Cancel orph-1' }).count()).toBe(0);
    await ui.screenshots('activity-orphaned');

    // Its page says so too, with Kill.
    await card.getByRole('link', { name: 'orph-1' }).click();
    await ui.page.waitForURL(/#\/requests\/orph-1$/);
    await ui.page.getByRole('note').getByText('Outlived a host restart: still running, watched').waitFor();
    await ui.page.goBack();

    // Kill asks first; then every process of the run is ended and the agent sees it cancelled.
    await card.getByRole('button', { name: 'Kill orph-1' }).click();
    const confirm = ui.page.getByRole('dialog');
    await confirm.getByRole('heading', { name: 'Kill lingering?' }).waitFor();
    expect(groupRunning(pid!)).toBe(true);
    await confirm.getByRole('button', { name: 'Kill it' }).click();
    expect((await ui.host.waitResult('orph-1', ['cancelled'])).state).toBe('cancelled');
    await eventually('the orphaned run to be killed', () => (groupRunning(pid!) ? undefined : true));
    await section('Recent results').getByRole('row').filter({ hasText: 'orph-1' }).getByText('Cancelled').waitFor();
    expect((await ui.host.sentinel(alice)).state).toBe('succeeded');
    expect(ui.errors).toEqual([]);
  });

  it('an uncertain run shows its last reconcile check; Check again runs it, says so while it runs, and settles the run as its verdict says', async () => {
    mkdirSync(PUBLISHED, { recursive: true });
    ui.host.submit(alice, 'pub-1', 'publish', {}, { intent: 'Publish 2.0' });
    ui.host.submit(alice, 'pub-2', 'publish', {}, { intent: 'Publish 2.1' });
    await crashDaemon(['pub-1', 'pub-2'], false);
    // The restarted host looked both up, and could not tell.
    for (const id of ['pub-1', 'pub-2']) {
      expect(await eventually(`the check of ${id} at the restart`, () => ui.host.result(id)?.reconcile)).toMatchObject({ verdict: 'unknown', exit_code: 3 });
      expect(state(id)).toBe('uncertain');
    }

    await ui.open('/activity');
    const uncertain = section(/^Uncertain/);
    const row = (id: string) => uncertain.getByRole('row').filter({ hasText: id });
    const attempt = row('pub-1').getByRole('group', { name: 'Last reconcile check' });
    await attempt.getByText('Could not tell').waitFor();
    await expect.poll(() => attempt.textContent()).toMatch(/exit code 3 · checked .* by daemon/);
    expect(await attempt.getByLabel('Reconcile check output').textContent()).toBe('looked up pub-1\nthe registry did not answer');
    // An uncertain run of an operation without a reconcile check offers none (unc-2, from above).
    await row('unc-2').waitFor();
    expect(await row('unc-2').getByRole('button', { name: /again/ }).count()).toBe(0);
    await ui.page.setViewportSize({ width: 1200, height: 1100 });
    await ui.screenshots('activity-uncertain-reconcile');
    await ui.page.setViewportSize({ width: 1200, height: 800 });

    // The host answers the check only when the test lets it: the button says it is checking meanwhile.
    const release = await ui.holdChannel('requests.checkReconcile');
    writeFileSync(path.join(PUBLISHED, 'pub-1.published'), '');
    await row('pub-1').getByRole('button', { name: 'Check again: pub-1' }).click();
    const checking = row('pub-1').getByRole('button', { name: 'Checking…: pub-1' });
    await checking.waitFor();
    expect(await checking.isDisabled()).toBe(true);
    await row('pub-1').getByRole('status').getByText('Running the reconcile check…').waitFor();
    expect(state('pub-1')).toBe('uncertain');
    await release();
    const settled = await ui.host.waitResult('pub-1', ['succeeded']);
    expect([settled.resolved_by, settled.reconcile?.verdict, settled.reconcile?.by]).toEqual(['reconcile', 'applied', 'app']);
    await ui.page.getByText('Checked again. Took effect (exit code 0): pub-1 is succeeded').waitFor();
    await expect.poll(() => row('pub-1').count()).toBe(0);

    // Not applied: failed as not_applied, marked so among the results.
    writeFileSync(path.join(PUBLISHED, 'pub-2.lost'), '');
    await row('pub-2').getByRole('button', { name: 'Check again: pub-2' }).click();
    const failed = await ui.host.waitResult('pub-2', ['failed']);
    expect(failed.error?.code).toBe('not_applied');
    await section('Recent results').getByRole('row').filter({ hasText: 'pub-2' }).getByText('reconciled: did not take effect').waitFor();
    await section('Recent results').getByRole('row').filter({ hasText: 'pub-1' }).getByText('reconciled: took effect').waitFor();
    await section('Recent results').getByRole('row').filter({ hasText: 'pub-2' }).scrollIntoViewIfNeeded();
    await ui.screenshots('activity-reconciled');

    // Its page: who settled it, and the check that did.
    await ui.open('/requests/pub-1');
    await ui.page.getByText('its operation’s reconcile check').waitFor();
    const check = ui.page.getByRole('group', { name: 'Last reconcile check' });
    await check.getByText('Took effect').waitFor();
    expect(await check.getByLabel('Command that runs').locator('code').allTextContents()).toEqual([
      '/bin/sh',
      '-c',
      'echo "looked up $1"; test -e "$0.published" && exit 0; test -e "$0.lost" && exit 1; echo "the registry did not answer" >&2; exit 3',
      path.join(PUBLISHED, 'pub-1'),
      'pub-1',
    ]);
    expect(ui.host.audit('pub-1', 'started')).toHaveLength(1); // never re-run
    await ui.screenshots('request-detail-reconciled');
    expect(ui.errors).toEqual([]);
  });

  it("the list and a request's page show the sandbox's text escaped, and each element of an array argument apart", async () => {
    // An override that would make "gpj.exe" read "exe.jpg", and an element holding ", " that a joined
    // list would show as two.
    ui.host.submit(alice, 'tag-1', 'tag', { tags: ['a, b', 'c', 'x\u202egpj.exe'] }, { intent: 'Tidy up \u202egpj.exe' });
    await ui.host.waitResult('tag-1');
    await ui.open('/activity');
    const listed = section('Recent results').getByRole('row').filter({ hasText: 'tag-1' });
    await listed.getByText('Tidy up \\u202egpj.exe', { exact: true }).waitFor();
    await ui.open('/requests/tag-1');
    await ui.page.getByText('Tidy up \\u202egpj.exe', { exact: true }).waitFor();
    const tags = ui.page.getByRole('row', { name: /^tags/ }).getByRole('listitem');
    expect(await tags.allTextContents()).toEqual(['a, b', 'c', 'x\\u202egpj.exe']);
    expect((await ui.page.locator('dl.facts, table.kv').allTextContents()).join('')).not.toMatch(/\u202e/);
    await ui.screenshots('request-detail-escaped');
    expect(ui.errors).toEqual([]);
  });
});
