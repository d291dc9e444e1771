// The Approvals screen and the approval window in real Chromium against the real host: requests the
// sandbox writes into the spool wait for a human, who approves, denies with a reason, or approves for
// some minutes (a grant the next request uses without asking, for the arguments the person chose); by
// mouse and by keyboard. Nothing is approved that the person has not had on screen, all of it, for a
// moment: not by a second A after a decision, not by Enter in a window that just appeared, not by a card
// whose argv, environment or intent was never scrolled to, not by a card that changed under the pointer.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator } from 'playwright-core';
import { Ui, description } from './harness';
import type { KeyFile } from '../../shared/protocol/types';

const ALLOWLIST = `version: 1
operations:
  - name: greet
    description: Say hello (asks first)
    command: [/bin/echo, "hello {name}"]
    args:
      name: {type: string, max_length: 50}
    scope: write
    approval: always
    timeout_s: 10
  - name: deploy
    description: Pretend to deploy (asks first)
    command: [/bin/echo, "deployed {target}"]
    args:
      target: {type: string, enum: [staging, production]}
    scope: write
    approval: always
    timeout_s: 10
  - name: tidy
    description: Work in a folder the sandbox can write (stand-in)
    command: [/bin/ls, "{dir}"]
    args:
      dir: {type: path, within: [/usr/share], shared_with_sandbox: true}
    scope: write
    approval: always
    timeout_s: 10
  - name: many
    description: Echo many words, with an environment (asks first)
    command: [/bin/echo, "{words}"]
    env:
      GIT_SSH_COMMAND: "sh -c 'id > /tmp/dw-owned'"
      LC_ALL: C
    args:
      words: {type: array, items: {type: string, max_length: 6000}, max_items: 400}
    scope: write
    approval: always
    timeout_s: 10
    max_output_bytes: 65536
  - name: canary
    description: Deploy a build to a target (asks first)
    command: [/bin/echo, "deploy {target}", "note {note}"]
    args:
      target: {type: string, max_length: 100}
      note: {type: string, max_length: 100}
    scope: write
    approval: always
    timeout_s: 10
`;

/**
 * Installed in every page of this file: the arming delays (600 ms on the screen, 1 s in the window:
 * ARM_MS in ApprovalsScreen.tsx and approval.tsx) can be held, so that "too soon to approve" is the
 * test's decision and not a race with a slow machine. `__arming.hold()` holds the delays started from
 * then on (a page whose `__dwHoldArming` is set holds them from its start); `release()` lets them run.
 * Every other timer runs as usual.
 */
function armingGate(delays: number[]): void {
  type Timeout = (handler: TimerHandler, ms?: number, ...args: unknown[]) => number;
  const w = window as unknown as {
    setTimeout: Timeout;
    clearTimeout: (id?: number) => void;
    __dwHoldArming?: boolean;
    __arming: { hold(): void; release(): void };
  };
  const realSet = w.setTimeout.bind(window);
  const realClear = w.clearTimeout.bind(window);
  const held = new Map<number, { handler: TimerHandler; ms: number; args: unknown[] }>();
  let holding: boolean | null = null;
  let nextId = -1; // never a real timer's id
  w.setTimeout = (handler, ms, ...args) => {
    if (!(holding ?? w.__dwHoldArming === true) || ms === undefined || !delays.includes(ms)) return realSet(handler, ms, ...args);
    const id = nextId--;
    held.set(id, { handler, ms, args });
    return id;
  };
  w.clearTimeout = (id) => {
    if (id === undefined || !held.delete(id)) realClear(id);
  };
  w.__arming = {
    hold: () => void (holding = true),
    release: () => {
      holding = false;
      for (const { handler, ms, args } of held.values()) realSet(handler, ms, ...args);
      held.clear();
    },
  };
}
const holdArming = () => ui.page.evaluate(() => (window as unknown as { __arming: { hold(): void } }).__arming.hold());
const releaseArming = () => ui.page.evaluate(() => (window as unknown as { __arming: { release(): void } }).__arming.release());

let ui: Ui;
let key: KeyFile;
beforeAll(async () => {
  ui = await Ui.start({ allowlist: ALLOWLIST });
  await ui.page.addInitScript(armingGate, [600, 1000]);
  key = ui.host.createKey('agent', 'write');
});
afterAll(async () => {
  await ui?.close();
});

const state = (id: string) => ui.svc.requests.get(id)?.state;
const card = () => ui.page.getByRole('article');
const approveButton = () => card().getByRole('button', { name: 'Approve', exact: true });
/** The shown request can be approved (all of it has been on screen, long enough). */
const armed = () => approveButton().isEnabled();
/** The card's body: all that decides the run, which scrolls above the decisions. */
const body = () => card().getByRole('group', { name: 'The request in full' });
/** Scrolls the card's body through from its top, a half box at a time, a frame or two each: as a
 *  person reading it would. */
const scrollThrough = () =>
  body().evaluate(async (el) => {
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    el.scrollTop = 0;
    await frames();
    while (el.scrollTop + el.clientHeight < el.scrollHeight - 1) {
      el.scrollTop += Math.max(1, Math.floor(el.clientHeight / 2));
      await frames();
    }
  });
/** Scrolls the card's body to its end at once (skipping what is in between), and waits until it is there. */
async function jumpToEnd(): Promise<void> {
  await body().evaluate((el) => void (el.scrollTop = el.scrollHeight));
  await expect.poll(() => body().evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 1)).toBe(true);
}
/** Waits until the page's own clock shows that the card has been on screen longer than any arming delay. */
async function pastArming(): Promise<void> {
  const from = await ui.page.evaluate(() => performance.now());
  await expect.poll(() => ui.page.evaluate((t) => performance.now() - t > 1500, from)).toBe(true);
}
/** Whether all of `l` is inside the window (its bounding box within the viewport). */
async function inViewport(l: Locator): Promise<boolean> {
  const box = await l.boundingBox();
  const size = ui.page.viewportSize()!;
  return box !== null && box.x >= 0 && box.y >= 0 && box.x + box.width <= size.width && box.y + box.height <= size.height;
}
/** The decisions are in the window, and on top there (nothing drawn over their middle takes the click). */
async function decisionsInView(): Promise<void> {
  for (const name of [/^Approve/, /^Deny/]) {
    for (const b of await card().getByRole('button', { name }).all()) {
      expect(await inViewport(b)).toBe(true);
      expect(await b.evaluate((el) => {
        const r = el.getBoundingClientRect();
        return el.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
      })).toBe(true);
    }
  }
}
/** Runs `size` with the page at that size, then back at the usual size. */
async function sized(size: { width: number; height: number }, run: () => Promise<void>): Promise<void> {
  await ui.page.setViewportSize(size);
  try {
    await run();
  } finally {
    await ui.page.setViewportSize({ width: 1200, height: 800 });
  }
}
/** Waits until the card's animations (the highlight, the filling bar) are over: for a steady screenshot. */
const settled = () => card().evaluate((el) => Promise.all(el.getAnimations({ subtree: true }).map((x) => x.finished)));

describe('the Approvals screen', () => {
  it('shows a waiting request in full; Approve runs it', async () => {
    ui.host.submit(key, 'req-0001', 'greet', { name: 'world' }, { intent: 'Check that greetings work' });
    await expect.poll(() => state('req-0001')).toBe('awaiting_approval');
    await ui.open('/approvals');
    await card().getByRole('heading', { name: 'Run greet?' }).waitFor();
    // The details a decision needs: key, intent, the exact argv (one box per element), the request id.
    const command = card().getByLabel('Command that runs');
    expect(await command.locator('code').allTextContents()).toEqual(['/bin/echo', 'hello world']);
    await expect.poll(() => card().textContent()).toContain('Check that greetings work');
    expect(await card().textContent()).toContain(key.key_id);
    expect(await card().textContent()).toContain('agent');
    expect(await card().textContent()).toMatch(/Auto-denied in (60 min|1 h)/);

    await card().getByRole('button', { name: 'Approve', exact: true }).click();
    const result = await ui.host.waitResult('req-0001');
    expect(result.state).toBe('succeeded');
    expect(result.stdout).toBe('hello world\n');
    expect(ui.svc.requests.get('req-0001')?.decided_by).toBe('app');
    await ui.page.getByRole('status').filter({ hasText: 'Nothing is waiting for you' }).waitFor();
    expect(ui.errors).toEqual([]);
  });

  it('shows controls and bidi overrides the sandbox wrote escaped, so the card reads as what runs', async () => {
    // U+202E would make "txt.exe" read backwards; ESC could start a sequence in a copied terminal line.
    ui.host.submit(key, 'req-bidi', 'greet', { name: 'cat\u202etxt.exe' }, { intent: 'Safe\u202e: harmless\x1b[2K' });
    await expect.poll(() => state('req-bidi')).toBe('awaiting_approval');
    await ui.open('/approvals/req-bidi');
    await card().getByRole('heading', { name: 'Run greet?' }).waitFor();
    expect(await card().getByLabel('Command that runs').locator('code').allTextContents()).toEqual(['/bin/echo', 'hello cat\\u202etxt.exe']);
    const text = (await card().textContent())!;
    expect(text).toContain('Safe\\u202e: harmless\\x1b[2K');
    expect(text.includes('\u202e') || text.includes('\x1b')).toBe(false);
    await card().getByRole('textbox', { name: 'Reason for denying' }).fill('not now');
    await card().getByRole('button', { name: 'Deny' }).click();
    expect((await ui.host.waitResult('req-bidi')).state).toBe('denied');
  });

  it('warns when the command works on a folder shared with the sandbox, naming it; not otherwise', async () => {
    ui.host.submit(key, 'req-shared', 'tidy', { dir: '/usr/share' });
    await expect.poll(() => state('req-shared')).toBe('awaiting_approval');
    await ui.open('/approvals/req-shared');
    await card().getByRole('heading', { name: 'Run tidy?' }).waitFor();
    const note = card().getByRole('note');
    await expect.poll(() => note.textContent()).toMatch(/works on folders the sandbox can write.*Shared with the sandbox: \/usr\/share\./);
    await card().getByRole('textbox', { name: 'Reason for denying' }).fill('not now');
    await card().getByRole('button', { name: 'Deny' }).click();
    expect((await ui.host.waitResult('req-shared')).state).toBe('denied');

    ui.host.submit(key, 'req-unshared', 'deploy', { target: 'staging' });
    await expect.poll(() => state('req-unshared')).toBe('awaiting_approval');
    await ui.open('/approvals/req-unshared');
    await card().getByRole('heading', { name: 'Run deploy?' }).waitFor();
    expect(await card().getByRole('note').count()).toBe(0);
    await card().getByRole('textbox', { name: 'Reason for denying' }).fill('not now');
    await card().getByRole('button', { name: 'Deny' }).click();
    expect((await ui.host.waitResult('req-unshared')).state).toBe('denied');
    expect(ui.errors).toEqual([]);
  });

  it('denies with a reason: the result says denied and the reason is in the ledger and audit', async () => {
    ui.host.submit(key, 'req-0002', 'deploy', { target: 'production' });
    await expect.poll(() => state('req-0002')).toBe('awaiting_approval');
    await ui.open('/approvals/req-0002');
    await card().getByRole('heading', { name: 'Run deploy?' }).waitFor();
    await card().getByRole('textbox', { name: 'Reason for denying' }).fill('Not on a Friday');
    await card().getByRole('button', { name: 'Deny' }).click();
    const result = await ui.host.waitResult('req-0002');
    expect(result.state).toBe('denied');
    expect(result.error?.message).toBe('denied by app: Not on a Friday');
    expect(ui.svc.requests.get('req-0002')?.error_message).toContain('Not on a Friday');
    const audit = ui.svc.audit.search({ requestId: 'req-0002', kind: 'denied' });
    expect(audit.map((a) => a.message)).toEqual(['denied by app: Not on a Friday']);
    // The route still names it: the screen says what became of it.
    await ui.page.getByText('is no longer waiting').waitFor();
    expect(await ui.page.locator('.approvals-gone [data-state]').getAttribute('data-state')).toBe('denied');
    expect(ui.errors).toEqual([]);
  });

  it('approves for N minutes: a grant is listed, the next request of that op and key runs without asking, and it can be revoked', async () => {
    ui.host.submit(key, 'req-0003', 'deploy', { target: 'staging' });
    await expect.poll(() => state('req-0003')).toBe('awaiting_approval');
    await ui.open('/approvals');
    await card().getByRole('heading', { name: 'Run deploy?' }).waitFor();
    await card().getByRole('combobox', { name: 'Minutes to approve for' }).selectOption('15');
    await card().getByRole('button', { name: 'Approve for 15 min' }).click();
    expect((await ui.host.waitResult('req-0003')).state).toBe('succeeded');

    const grants = ui.svc.verdicts.grants();
    expect(grants).toHaveLength(1);
    const g = grants[0]!;
    expect([g.op, g.key_id]).toEqual(['deploy', key.key_id]);
    const minutes = (Date.parse(g.expires_at) - Date.parse(g.created_at)) / 60_000;
    expect(minutes).toBe(15);

    // The same key and operation again: no question asked.
    ui.host.submit(key, 'req-0004', 'deploy', { target: 'staging' });
    const second = await ui.host.waitResult('req-0004');
    expect(second.state).toBe('succeeded');
    expect(ui.svc.requests.get('req-0004')?.decided_by).toBe(`grant ${g.id}`);

    // Listed with its uses (one so far); revoked from the screen, after a confirmation.
    const grantsTable = ui.page.getByRole('table', { name: 'Time-boxed approvals' });
    const row = grantsTable.getByRole('row').filter({ hasText: 'deploy' });
    await expect.poll(() => row.textContent()).toMatch(/in 15 min1Revoke$/);
    await row.getByRole('button', { name: 'Revoke the approval of deploy for agent' }).click();
    await ui.page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await ui.page.getByRole('status').filter({ hasText: 'No time-boxed approvals in force' }).waitFor();
    expect(ui.svc.verdicts.grants()).toEqual([]);
    ui.host.submit(key, 'req-0005', 'deploy', { target: 'staging' });
    await expect.poll(() => state('req-0005')).toBe('awaiting_approval');
    ui.svc.verdicts.deny('req-0005', 'test', 'cleanup');
    expect(ui.errors).toEqual([]);
  });

  it('works from the keyboard: J/K move, A approves, D goes to the reason (Enter denies), T approves for the chosen time', async () => {
    const kbd = ui.host.createKey('keyboard-agent', 'write');
    ui.host.submit(kbd, 'kbd-1', 'greet', { name: 'one' }, { intent: 'First of three' });
    ui.host.submit(kbd, 'kbd-2', 'greet', { name: 'two' }, { intent: 'Second of three' });
    ui.host.submit(kbd, 'kbd-3', 'deploy', { target: 'staging' }, { intent: 'Ship the staging build' });
    for (const id of ['kbd-1', 'kbd-2', 'kbd-3']) await expect.poll(() => state(id)).toBe('awaiting_approval');
    await ui.open('/approvals');
    const options = ui.page.getByRole('listbox', { name: /Waiting/ }).getByRole('option');
    await expect.poll(() => options.count()).toBe(3);
    const selected = () => ui.page.getByRole('option', { selected: true }).locator('.approvals-id').textContent();
    expect(await selected()).toBe('kbd-1');
    // The shortcuts are shown on the screen.
    expect(await ui.page.getByRole('definition').filter({ hasText: 'approve for the chosen time' }).count()).toBe(1);
    await expect.poll(armed).toBe(true);
    await settled();
    await ui.screenshots('approvals');

    await ui.page.keyboard.press('j');
    await expect.poll(selected).toBe('kbd-2');
    await ui.page.keyboard.press('j');
    await expect.poll(selected).toBe('kbd-3');
    await ui.page.keyboard.press('k');
    await ui.page.keyboard.press('k');
    await expect.poll(selected).toBe('kbd-1');

    await expect.poll(armed).toBe(true);
    // The next card's moment on screen lasts until the test says so (however slow the machine is).
    await holdArming();
    await ui.page.keyboard.press('a');
    expect((await ui.host.waitResult('kbd-1')).state).toBe('succeeded');
    await expect.poll(selected).toBe('kbd-2');
    // A second A right away would approve a request nobody has looked at: it is ignored, and the new
    // card is highlighted while its Approve button fills up.
    await ui.page.keyboard.press('a');
    expect(await card().evaluate((el) => el.classList.contains('approval-fresh'))).toBe(true);
    expect(await approveButton().isDisabled()).toBe(true);
    await releaseArming();
    await expect.poll(armed).toBe(true);
    expect(state('kbd-2')).toBe('awaiting_approval');

    await ui.page.keyboard.press('d');
    const reason = card().getByRole('textbox', { name: 'Reason for denying' });
    await expect.poll(() => reason.evaluate((el) => el === document.activeElement)).toBe(true);
    await ui.page.keyboard.type('Not this one');
    await ui.page.keyboard.press('Enter');
    const denied = await ui.host.waitResult('kbd-2');
    expect([denied.state, denied.error?.message]).toEqual(['denied', 'denied by app: Not this one']);
    await expect.poll(selected).toBe('kbd-3');

    // Back on the screen (Enter left the focus in the list): T approves for the chosen 30 minutes.
    await expect.poll(armed).toBe(true);
    await ui.page.keyboard.press('t');
    expect((await ui.host.waitResult('kbd-3')).state).toBe('succeeded');
    const grant = ui.svc.verdicts.grants().find((x) => x.key_id === kbd.key_id);
    expect(grant?.op).toBe('deploy');
    expect((Date.parse(grant!.expires_at) - Date.parse(grant!.created_at)) / 60_000).toBe(30);
    await ui.page.getByRole('status').filter({ hasText: 'Nothing is waiting for you' }).waitFor();
    ui.svc.verdicts.revokeGrant(grant!.id, 'test');
    expect(ui.errors).toEqual([]);
  });

  it('a key pressed the moment Approve turns on approves, on a machine too busy to finish a render in one go', async () => {
    ui.host.submit(key, 'now-1', 'greet', { name: 'at once' });
    await expect.poll(() => state('now-1')).toBe('awaiting_approval');
    // The card's moment on screen lasts until the test says so.
    const holdFromLoad = await ui.page.addInitScript(() => void ((window as unknown as { __dwHoldArming: boolean }).__dwHoldArming = true));
    await ui.open('/approvals/now-1');
    await holdFromLoad.dispose();
    await card().getByRole('heading', { name: 'Run greet?' }).waitFor();
    await approveButton().evaluate((approve: HTMLButtonElement) => {
      // Every look at the clock finds React's time slice spent, so it yields between steps (as on a
      // starved machine) and an input event can come between showing Approve on and the next step.
      const now = performance.now.bind(performance);
      let late = 0;
      performance.now = () => now() + (late += 10);
      // The press, at the very moment the button turns on (before any other task).
      new MutationObserver((_, seen) => {
        if (approve.disabled) return;
        seen.disconnect();
        document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'a', bubbles: true, cancelable: true }));
      }).observe(approve, { attributes: true, attributeFilter: ['disabled'] });
    });
    await releaseArming();
    expect((await ui.host.waitResult('now-1')).state).toBe('succeeded');
    await ui.page.evaluate(() => delete (performance as unknown as { now?: unknown }).now); // the prototype's again
    expect(ui.errors).toEqual([]);
  });

  it("shortcuts are the focused control's own: not on Revoke, not in a field; arrows move the list only from the list", async () => {
    const kbd = ui.host.createKey('focus-agent', 'write');
    ui.host.submit(kbd, 'foc-1', 'deploy', { target: 'staging' });
    await expect.poll(() => state('foc-1')).toBe('awaiting_approval');
    // A grant in force, so the page has a Revoke button.
    ui.svc.verdicts.approve('foc-1', 'test', 600);
    await expect.poll(() => ui.svc.verdicts.grants().length).toBe(1);
    ui.host.submit(kbd, 'foc-2', 'greet', { name: 'two' });
    ui.host.submit(kbd, 'foc-3', 'greet', { name: 'three' });
    for (const id of ['foc-2', 'foc-3']) await expect.poll(() => state(id)).toBe('awaiting_approval');
    await ui.open('/approvals');
    const selected = () => ui.page.getByRole('option', { selected: true }).locator('.approvals-id').textContent();
    await expect.poll(selected).toBe('foc-2');
    await expect.poll(armed).toBe(true);

    // On Revoke: A and the arrows are not the card's.
    const revoke = ui.page.getByRole('button', { name: /^Revoke the approval of deploy/ });
    await revoke.focus();
    await ui.page.keyboard.press('a');
    await ui.page.keyboard.press('ArrowDown');
    // In the reason field: letters are typed, not shortcuts.
    await card().getByRole('textbox', { name: 'Reason for denying' }).focus();
    await ui.page.keyboard.type('a t j');
    expect(await card().getByRole('textbox', { name: 'Reason for denying' }).inputValue()).toBe('a t j');
    expect(await selected()).toBe('foc-2');
    // From the list, the arrows move the selection.
    await ui.page.getByRole('listbox', { name: /Waiting/ }).focus();
    await ui.page.keyboard.press('ArrowDown');
    await expect.poll(selected).toBe('foc-3');
    expect([state('foc-2'), state('foc-3')]).toEqual(['awaiting_approval', 'awaiting_approval']);
    expect(ui.svc.verdicts.grants()).toHaveLength(1);

    for (const id of ['foc-2', 'foc-3']) ui.svc.verdicts.deny(id, 'test', 'cleanup');
    for (const g of ui.svc.verdicts.grants()) ui.svc.verdicts.revokeGrant(g.id, 'test');
    expect(ui.errors).toEqual([]);
  });
});

/** Proposes a plan of `steps` for `key`, usable for an hour, and waits until it waits for a human. */
async function proposePlan(id: string, steps: { op: string; args: Record<string, unknown> }[], intent: string): Promise<void> {
  ui.host.submit(key, id, 'dumbwaiter.plan', { steps }, { intent, expiresAt: new Date(Date.now() + 3600_000).toISOString() });
  await expect.poll(() => state(id)).toBe('awaiting_approval');
}
/** The plan's steps (not the list items inside a step, such as its environment). */
const planSteps = () => card().getByRole('list', { name: 'Plan steps' }).locator(':scope > li');

describe('a plan', () => {
  it('shows every step with its exact argv, folder and scope; cannot be approved until each step was on screen; approved, its steps run without asking, each once', async () => {
    const guests = Array.from({ length: 30 }, (_, i) => `guest ${i + 1}`);
    const steps: { op: string; args: Record<string, unknown> }[] = [...guests.map((name) => ({ op: 'greet', args: { name } })), { op: 'deploy', args: { target: 'staging' } }];
    const argvs = [...guests.map((name) => ['/bin/echo', `hello ${name}`]), ['/bin/echo', 'deployed staging']];
    await proposePlan('plan-1', steps, 'Greet every guest, then deploy staging');
    await ui.open('/approvals/plan-1');
    await card().getByRole('heading', { name: 'Approve a plan of 31 steps?' }).waitFor();
    await expect.poll(() => planSteps().count()).toBe(31);
    for (const [i, s] of steps.entries()) {
      const item = planSteps().nth(i);
      expect(await item.getByLabel('Command that runs').locator('code').allTextContents()).toEqual(argvs[i]);
      expect(await item.getByLabel('Command that runs').locator('.argv-cwd').textContent()).toMatch(/^in \//);
      expect([await item.getAttribute('aria-label'), await item.locator('.badge').textContent()]).toEqual([`Step ${i + 1}: ${s.op}`, 'write']);
    }
    expect(await card().textContent()).toContain('Greet every guest, then deploy staging');
    // A plan cannot be approved for a while: that would approve the next plans unseen.
    expect(await card().getByRole('button', { name: /^Approve for/ }).count()).toBe(0);

    // Long past the moment a request needs on screen, the steps below the fold were not shown: A does nothing.
    await pastArming();
    expect(await approveButton().isDisabled()).toBe(true);
    await expect.poll(() => description(approveButton())).toMatch(/Scroll through every step to approve: \d+ of 31 seen so far\./);
    await ui.page.keyboard.press('a');
    await ui.page.keyboard.press('d');
    await expect.poll(() => card().getByRole('textbox', { name: 'Reason for denying' }).evaluate((el) => el === document.activeElement)).toBe(true);
    expect(state('plan-1')).toBe('awaiting_approval');
    // Jumping to the end skips the steps in between: they were never on screen.
    await jumpToEnd();
    await pastArming();
    expect(await approveButton().isDisabled()).toBe(true);
    // Scrolled through from the top, every step has been shown: Approve arms after its moment.
    await scrollThrough();
    await expect.poll(() => description(approveButton())).toBe('All 31 steps have been on screen.');
    expect(await card().textContent()).toMatch(/Each step runs once, without asking again, until the plan expires in (60 min|1 h)\./); // the plan's own expiry
    await expect.poll(armed).toBe(true);
    await settled();
    await body().evaluate((el) => void (el.scrollTop = 0));
    await card().getByRole('heading').click(); // the focus off the reason field
    await ui.screenshots('approvals-plan');

    await approveButton().click();
    const plan = await ui.host.waitResult('plan-1', ['succeeded']);
    expect(plan.plan?.steps).toHaveLength(31);
    // A step of the plan runs without asking, once; the same again, or anything else, asks.
    ui.host.submit(key, 'plan-step-1', 'greet', { name: 'guest 1' }, { extra: { plan_id: 'plan-1' } });
    expect((await ui.host.waitResult('plan-step-1')).stdout).toBe('hello guest 1\n');
    expect(ui.svc.requests.get('plan-step-1')?.decided_by).toBe('plan plan-1');
    ui.host.submit(key, 'plan-step-1-again', 'greet', { name: 'guest 1' }, { extra: { plan_id: 'plan-1' } });
    await expect.poll(() => state('plan-step-1-again')).toBe('awaiting_approval');
    ui.svc.verdicts.deny('plan-step-1-again', 'test', 'cleanup');

    // The plan's page lists its steps and the request that used one.
    await ui.open('/requests/plan-1');
    const used = ui.page.getByRole('list', { name: 'Plan steps' }).getByRole('listitem').first();
    await used.getByRole('link', { name: 'plan-step-1' }).waitFor();
    await expect.poll(() => used.locator('[data-state]').getAttribute('data-state')).toBe('succeeded');
    await ui.page.getByText('1 of 31 used.').waitFor();
    expect(await ui.page.getByRole('list', { name: 'Plan steps' }).getByText('not used yet').count()).toBe(30);
    await ui.screenshots('request-detail-plan');
    expect(ui.errors).toEqual([]);
  });

  it('in the approval window: all steps in the small window, Enter does nothing until each was shown, then approves', async () => {
    const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf'];
    const steps = names.map((name) => ({ op: 'greet', args: { name } }));
    await proposePlan('plan-2', steps, 'Greet the team');
    await ui.page.setViewportSize({ width: 480, height: 420 });
    try {
      await ui.open('plan-2', 'approval.html');
      await card().getByRole('heading', { name: 'Approve a plan of 7 steps?' }).waitFor();
      await expect.poll(() => planSteps().count()).toBe(7);
      expect(await planSteps().nth(6).getByLabel('Command that runs').locator('code').allTextContents()).toEqual(['/bin/echo', 'hello golf']);
      // The body scrolls in the small window: not everything is on screen at first.
      expect(await body().evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
      await pastArming();
      await ui.page.keyboard.press('Enter');
      await ui.page.keyboard.press('d');
      await expect.poll(() => card().getByRole('textbox', { name: 'Reason for denying' }).evaluate((el) => el === document.activeElement)).toBe(true);
      await card().getByRole('heading').click();
      expect(await approveButton().isDisabled()).toBe(true);
      expect(state('plan-2')).toBe('awaiting_approval');

      await scrollThrough();
      await expect.poll(armed).toBe(true);
      await settled();
      // The decisions are in reach below the body, above the footer.
      const deny = await card().getByRole('button', { name: 'Deny' }).boundingBox();
      const footer = await ui.page.locator('.aw-footer').boundingBox();
      expect(deny!.y + deny!.height).toBeLessThanOrEqual(footer!.y);
      await body().evaluate((el) => void (el.scrollTop = 0));
      expect(await body().textContent()).toMatch(/Each step runs once, without asking again, until the plan expires in (60 min|1 h)\./);
      await ui.screenshots('approval-window-plan');
      await ui.page.keyboard.press('Enter');
      expect((await ui.host.waitResult('plan-2', ['succeeded'])).plan?.steps.map((s) => s.argv[1])).toEqual(names.map((name) => `hello ${name}`));
      await ui.page.getByRole('status').filter({ hasText: 'Approved.' }).waitFor();
    } finally {
      await ui.page.setViewportSize({ width: 1200, height: 800 });
    }
    expect(ui.errors).toEqual([]);
  });
});

describe('the approval window', () => {
  it('shows the one request compactly; Enter approves; afterwards it says the request is no longer waiting', async () => {
    ui.host.submit(key, 'win-1', 'deploy', { target: 'production' }, { intent: 'Release 2.4.1 to production' });
    ui.host.submit(key, 'win-2', 'greet', { name: 'later' });
    for (const id of ['win-1', 'win-2']) await expect.poll(() => state(id)).toBe('awaiting_approval');
    await ui.page.setViewportSize({ width: 480, height: 420 });
    try {
      await ui.open('win-1', 'approval.html');
      await card().getByRole('heading', { name: 'Run deploy?' }).waitFor();
      // The window's one h1 says what it is about, whatever it shows.
      const h1 = () => ui.page.getByRole('heading', { level: 1 }).allTextContents();
      expect(await h1()).toEqual(['Run deploy?']);
      expect(await card().getByLabel('Command that runs').locator('code').allTextContents()).toEqual(['/bin/echo', 'deployed production']);
      expect(await card().textContent()).toContain('Release 2.4.1 to production');
      expect(await ui.page.getByRole('button', { name: '1 more waiting · next' }).count()).toBe(1);
      // The decisions are in view at once; the body scrolls above them, and is read through first.
      await decisionsInView();
      await scrollThrough();
      await expect.poll(armed).toBe(true);
      await settled();
      await body().evaluate((el) => void (el.scrollTop = 0));
      await ui.screenshots('approval-window');

      // D focuses the reason; a click elsewhere leaves it.
      await ui.page.keyboard.press('d');
      await expect.poll(() => card().getByRole('textbox', { name: 'Reason for denying' }).evaluate((el) => el === document.activeElement)).toBe(true);
      await card().getByRole('heading').click();

      await expect.poll(armed).toBe(true);
      await ui.page.keyboard.press('Enter');
      expect((await ui.host.waitResult('win-1')).state).toBe('succeeded');
      expect(ui.svc.requests.get('win-1')?.decided_by).toBe('app');
      await ui.page.getByRole('status').filter({ hasText: 'Approved.' }).waitFor();
      expect(await h1()).toEqual(['Approved.']);
      expect(state('win-2')).toBe('awaiting_approval');

      // The next one in the same window (the app reuses it by changing the hash); decided elsewhere
      // meanwhile, the window says so.
      await ui.page.getByRole('button', { name: '1 more waiting · next' }).click();
      await card().getByRole('heading', { name: 'Run greet?' }).waitFor();
      ui.svc.verdicts.deny('win-2', 'test', 'decided elsewhere');
      await ui.page.getByText('is no longer waiting for you').waitFor();
      expect(await h1()).toEqual(['greet is no longer waiting for you.']);
      expect(await ui.page.locator('[data-state]').getAttribute('data-state')).toBe('denied');
      expect(await ui.page.getByRole('status').filter({ hasText: 'decided by test' }).count()).toBe(1);

      // Opened again for the request approved above: it says so too.
      await ui.open('win-1', 'approval.html');
      await ui.page.getByText('is no longer waiting for you').waitFor();
      expect(await ui.page.locator('[data-state]').getAttribute('data-state')).toBe('succeeded');
    } finally {
      await ui.page.setViewportSize({ width: 1200, height: 800 });
    }
    expect(ui.errors).toEqual([]);
  });

  it('approves nothing before it is armed, never swaps the request under the person, and Esc in the reason keeps it', async () => {
    ui.host.submit(key, 'win-3', 'deploy', { target: 'staging' }, { intent: 'Try the staging build' });
    await expect.poll(() => state('win-3')).toBe('awaiting_approval');
    await ui.page.setViewportSize({ width: 480, height: 420 });
    try {
      // The window's first moment on screen lasts until the test says so (however slow the machine is).
      const holdFromLoad = await ui.page.addInitScript(() => void ((window as unknown as { __dwHoldArming: boolean }).__dwHoldArming = true));
      await ui.open('win-3', 'approval.html');
      await holdFromLoad.dispose();
      await card().getByRole('heading', { name: 'Run deploy?' }).waitFor();
      await scrollThrough();
      // Someone typing in another app presses Enter as the window appears: nothing is approved.
      await ui.page.keyboard.press('Enter');
      expect(await approveButton().isDisabled()).toBe(true);
      await ui.screenshots('approval-window-arming');
      await releaseArming();
      await expect.poll(armed).toBe(true);
      expect(state('win-3')).toBe('awaiting_approval');

      // A new request arrives and the app points the window at it (a new hash): the undecided one stays.
      ui.host.submit(key, 'win-4', 'greet', { name: 'newcomer' });
      await expect.poll(() => state('win-4')).toBe('awaiting_approval');
      await ui.page.evaluate(() => (location.hash = '#win-4'));
      await ui.page.getByRole('button', { name: '1 more waiting · next' }).waitFor();
      expect(await card().getByRole('heading', { name: 'Run deploy?' }).count()).toBe(1);
      expect(await armed()).toBe(true);

      // Esc while typing the reason leaves the field, keeps the reason, and keeps the window open.
      await ui.page.evaluate(() => {
        const w = window as unknown as { closed_: boolean };
        w.closed_ = false;
        window.close = () => void (w.closed_ = true);
      });
      const closed = () => ui.page.evaluate(() => (window as unknown as { closed_: boolean }).closed_);
      const reason = card().getByRole('textbox', { name: 'Reason for denying' });
      await ui.page.keyboard.press('d');
      await expect.poll(() => reason.evaluate((el) => el === document.activeElement)).toBe(true);
      await ui.page.keyboard.type('Wrong build');
      await ui.page.keyboard.press('Escape');
      await expect.poll(() => reason.evaluate((el) => el === document.activeElement)).toBe(false);
      expect(await reason.inputValue()).toBe('Wrong build');
      expect(await closed()).toBe(false);

      // The window gains focus again (coming back from another app): not approvable for a moment again
      // (a moment that lasts until the test says so).
      await holdArming();
      await ui.page.evaluate(() => window.dispatchEvent(new Event('focus')));
      await expect.poll(() => approveButton().isDisabled()).toBe(true);
      await ui.page.keyboard.press('Enter');
      expect(await approveButton().isDisabled()).toBe(true);
      await releaseArming();
      await expect.poll(armed).toBe(true);
      expect(state('win-3')).toBe('awaiting_approval');

      // Denied with the reason typed above; then the request the app asked about follows, armed anew.
      await card().getByRole('button', { name: 'Deny' }).click();
      const denied = await ui.host.waitResult('win-3');
      expect([denied.state, denied.error?.message]).toEqual(['denied', 'denied by app: Wrong build']);
      await ui.page.getByRole('status').filter({ hasText: 'Denied.' }).waitFor();
      await card().getByRole('heading', { name: 'Run greet?' }).waitFor();
      expect(await closed()).toBe(false);
      await scrollThrough();
      await expect.poll(armed).toBe(true);
      expect(state('win-4')).toBe('awaiting_approval');
      // Esc outside a field closes the window (the request keeps waiting).
      await ui.page.keyboard.press('Escape');
      await expect.poll(closed).toBe(true);
      ui.svc.verdicts.deny('win-4', 'test', 'cleanup');
    } finally {
      await ui.page.setViewportSize({ width: 1200, height: 800 });
    }
    expect(ui.errors).toEqual([]);
  });

  it('an error shows until the next answer comes', async () => {
    ui.host.submit(key, 'win-5', 'greet', { name: 'gone' });
    await expect.poll(() => state('win-5')).toBe('awaiting_approval');
    ui.svc.verdicts.deny('win-5', 'test', 'decided elsewhere');
    await ui.open('win-5', 'approval.html');
    await ui.page.getByText('is no longer waiting for you').waitFor();
    // The host fails to answer for a while (the window looks the request up again on every change).
    type Failing = { __dwInvoke: (c: string, a: unknown) => Promise<unknown>; failing: boolean };
    await ui.page.evaluate(() => {
      const w = window as unknown as Failing;
      const invoke = w.__dwInvoke;
      w.failing = true;
      w.__dwInvoke = async (c, a) => {
        if (c.endsWith('requests.get') && w.failing) throw new Error('the host went away');
        return invoke(c, a);
      };
    });
    ui.host.submit(key, 'win-6', 'greet', { name: 'trigger' });
    await ui.page.getByRole('alert').filter({ hasText: 'the host went away' }).waitFor();
    await expect.poll(() => state('win-6')).toBe('awaiting_approval');
    // The host answers again: the next change of state asks again, and the answer replaces the error.
    await ui.page.evaluate(() => void ((window as unknown as Failing).failing = false));
    ui.svc.verdicts.deny('win-6', 'test', 'cleanup');
    await ui.page.getByText('is no longer waiting for you').waitFor();
    expect(await ui.page.getByRole('alert').count()).toBe(0);
    expect(ui.errors).toEqual([]);
  });
});

describe('seen before approved', () => {
  const words = (n: number, prefix = 'word') => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);

  it('in the window, Enter approves nothing while argv elements, the environment or the intent were never on screen; scrolled through, it does', async () => {
    const argv = words(40);
    const intent = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of a long reason, which pushes the command down.`).join('\n');
    ui.host.submit(key, 'seen-win', 'many', { words: argv }, { intent });
    await expect.poll(() => state('seen-win')).toBe('awaiting_approval');
    await sized({ width: 480, height: 360 }, async () => {
      await ui.open('seen-win', 'approval.html');
      await card().getByRole('heading', { name: 'Run many?' }).waitFor();
      // Long past the moment a request needs on screen, the command and its environment were below the
      // fold: Enter does nothing.
      await pastArming();
      await ui.page.keyboard.press('Enter');
      expect(await approveButton().isDisabled()).toBe(true);
      expect(await description(approveButton())).toBe('Scroll through the whole request to approve it.');
      expect(await inViewport(body().getByRole('list', { name: 'Environment added' }))).toBe(false);
      await decisionsInView();
      await settled();
      await ui.screenshots('approval-window-unseen');
      expect(state('seen-win')).toBe('awaiting_approval');

      // All of it is in the card: each argv element apart, the environment by name and value, the limits.
      expect(await body().getByLabel('Command that runs').locator('code').allTextContents()).toEqual(['/bin/echo', ...argv]);
      expect(await body().getByRole('list', { name: 'Environment added' }).getByRole('listitem').allTextContents()).toEqual([`GIT_SSH_COMMAND=sh -c 'id > /tmp/dw-owned'`, 'LC_ALL=C']);
      expect(await body().textContent()).toContain('runs at most 10 s · logs at most 65,536 bytes of output');
      // Jumping to the end skips what is in between.
      await jumpToEnd();
      await pastArming();
      await ui.page.keyboard.press('Enter');
      expect(await approveButton().isDisabled()).toBe(true);
      expect(state('seen-win')).toBe('awaiting_approval');
      // Read through from the top with the keyboard (the window shows without the focus: the first key
      // gives it to the body): Approve arms after its moment, and Enter approves.
      await ui.page.keyboard.press('Home');
      await expect.poll(() => body().evaluate((el) => el.scrollTop)).toBe(0);
      // At the end within the card's 1 px of rounding (a fractional layout can leave the last scroll a
      // pixel short of scrollHeight, where PageDown moves no further).
      const atEnd = () => body().evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 1.5);
      const top = () => body().evaluate((el) => el.scrollTop);
      for (let presses = 0; !(await atEnd()); presses++) {
        expect(presses).toBeLessThan(40);
        const before = await top();
        await ui.page.keyboard.press('PageDown');
        // Until the body moved, or reached its end.
        await expect.poll(async () => (await top()) > before || (await atEnd())).toBe(true);
      }
      await expect.poll(armed).toBe(true);
      expect(await description(approveButton())).toBe('All of the request has been on screen.');
      await ui.page.keyboard.press('Enter');
      expect((await ui.host.waitResult('seen-win')).state).toBe('succeeded');
    });
    expect(ui.errors).toEqual([]);
  });

  it('on the Approvals screen, A and T approve nothing while argv elements were never on screen; a 300-element argv keeps the decisions in view', async () => {
    const argv = words(300, 'w');
    ui.host.submit(key, 'seen-screen', 'many', { words: argv }, { intent: 'Echo three hundred words' });
    await expect.poll(() => state('seen-screen')).toBe('awaiting_approval');
    await sized({ width: 720, height: 480 }, async () => {
      await ui.open('/approvals/seen-screen');
      await card().getByRole('heading', { name: 'Run many?' }).waitFor();
      // The whole card fits the window once scrolled to (the queue is above it in a narrow window).
      await card().evaluate((el) => el.scrollIntoView({ block: 'end' }));
      await decisionsInView();
      await pastArming();
      await ui.page.keyboard.press('a');
      await ui.page.keyboard.press('t');
      expect(await approveButton().isDisabled()).toBe(true);
      expect(await body().getByLabel('Command that runs').locator('code').count()).toBe(301);
      await settled();
      await ui.screenshots('approvals-unseen');
      expect(state('seen-screen')).toBe('awaiting_approval');
      expect(ui.svc.verdicts.grants().filter((g) => g.op === 'many')).toEqual([]);

      await scrollThrough();
      await expect.poll(armed).toBe(true);
      await decisionsInView();
      await ui.page.keyboard.press('a');
      expect((await ui.host.waitResult('seen-screen')).stdout).toBe(`${argv.join(' ')}\n`);
    });
    expect(ui.errors).toEqual([]);
  });

  it('very long or wide content (a 5,000-character word, a letter under 4,999 combining marks) wraps in the card: the decisions and the next step stay in it', async () => {
    const long = 'x'.repeat(5000);
    const marks = `a${'\u0301'.repeat(4999)}`;
    ui.host.submit(key, 'seen-wide', 'many', { words: [long, marks, 'after'] });
    await proposePlan('plan-wide', [{ op: 'many', args: { words: [marks, long] } }, { op: 'greet', args: { name: 'next' } }], 'A wide step, then the next');
    /** Nothing in the body is wider than the body: it scrolls only down. */
    const noSideways = () =>
      body().evaluate((el) => {
        const right = el.getBoundingClientRect().right;
        return el.scrollWidth <= el.clientWidth && Array.from(el.querySelectorAll('*')).every((x) => x.getBoundingClientRect().right <= right + 1);
      });
    for (const [size, open] of [
      [{ width: 480, height: 360 }, () => ui.open('seen-wide', 'approval.html')],
      [{ width: 720, height: 480 }, () => ui.open('/approvals/seen-wide')],
    ] as const) {
      await sized(size, async () => {
        await open();
        await card().getByRole('heading', { name: 'Run many?' }).waitFor();
        await card().evaluate((el) => el.scrollIntoView({ block: 'end' }));
        expect(await noSideways()).toBe(true);
        await decisionsInView();
        await scrollThrough();
        await expect.poll(armed).toBe(true);
        await decisionsInView();
        expect(await body().getByLabel('Command that runs').locator('code').allTextContents()).toEqual(['/bin/echo', long, marks, 'after']);
      });
    }
    await ui.page.setViewportSize({ width: 480, height: 360 });
    try {
      await card().getByRole('textbox', { name: 'Reason for denying' }).fill('too wide');
      await card().getByRole('button', { name: 'Deny' }).click();
      expect((await ui.host.waitResult('seen-wide')).state).toBe('denied');
      // A plan: the wide step stays in its place, the next step follows it, inside the card.
      await ui.open('plan-wide', 'approval.html');
      await card().getByRole('heading', { name: 'Approve a plan of 2 steps?' }).waitFor();
      expect(await noSideways()).toBe(true);
      // Each step with its own environment, by name and value.
      expect(await planSteps().nth(0).getByRole('list', { name: 'Environment added' }).getByRole('listitem').allTextContents()).toEqual([`GIT_SSH_COMMAND=sh -c 'id > /tmp/dw-owned'`, 'LC_ALL=C']);
      expect(await planSteps().nth(1).getByRole('list', { name: 'Environment added' }).count()).toBe(0);
      const [first, second] = await planSteps().evaluateAll((steps) => steps.map((s) => s.getBoundingClientRect().toJSON() as DOMRect));
      expect(second!.top).toBeGreaterThanOrEqual(first!.bottom);
      await planSteps().nth(1).scrollIntoViewIfNeeded();
      expect(await inViewport(planSteps().nth(1))).toBe(true);
      await decisionsInView();
      await settled();
      // On screen: the end of the wide step (the letter under its marks, then the long word) and the next.
      await planSteps().nth(0).getByLabel('Command that runs').locator('code').nth(1).evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await ui.screenshots('approval-window-wide-plan');
      ui.svc.verdicts.deny('plan-wide', 'test', 'cleanup');
    } finally {
      await ui.page.setViewportSize({ width: 1200, height: 800 });
    }
    expect(ui.errors).toEqual([]);
  });
});

describe('approving for a while', () => {
  /** Records what the page asks approvals.approve, from now until the page loads again. */
  const recordApprovals = () =>
    ui.page.evaluate(() => {
      const w = window as unknown as { __dwInvoke: (c: string, a: unknown) => Promise<unknown>; approveCalls: unknown[] };
      const invoke = w.__dwInvoke;
      w.approveCalls = [];
      w.__dwInvoke = (c, a) => {
        if (c.endsWith('approvals.approve')) w.approveCalls.push(a);
        return invoke(c, a);
      };
    });
  const approveCalls = () => ui.page.evaluate(() => (window as unknown as { approveCalls: unknown[] }).approveCalls);

  it('covers later calls with the same arguments by default; the card lets each argument be any value or match a typed pattern, and sends that', async () => {
    const agent = ui.host.createKey('canary-agent', 'write');
    ui.host.submit(agent, 'wid-1', 'canary', { target: 'canary', note: 'first' });
    await expect.poll(() => state('wid-1')).toBe('awaiting_approval');
    await ui.open('/approvals/wid-1');
    await card().getByRole('heading', { name: 'Run canary?' }).waitFor();
    await recordApprovals();
    const args = card().getByRole('group', { name: 'Arguments' });
    expect(await args.getByRole('rowheader').allTextContents()).toEqual(['target', 'note']);
    await expect.poll(armed).toBe(true);

    // A pattern chosen but not typed yet: Approve for waits for it (Approve does not).
    await args.getByRole('combobox', { name: 'What later calls may give as target' }).selectOption('match');
    const approveFor = card().getByRole('button', { name: 'Approve for 30 min' });
    expect(await approveFor.isDisabled()).toBe(true);
    expect(await card().locator('.approval-seen').textContent()).toContain('Type the pattern for target to approve for a while.');
    expect(await approveButton().isEnabled()).toBe(true);
    await args.getByRole('textbox', { name: 'Pattern for target (the whole value must match)' }).fill('^canary$');
    await args.getByRole('combobox', { name: 'What later calls may give as note' }).selectOption('any');
    await card().getByRole('heading').click();
    await settled();
    await ui.screenshots('approvals-widen');
    await ui.page.keyboard.press('t');
    await expect.poll(approveCalls).toEqual([{ id: 'wid-1', forSeconds: 1800, widen: { target: { match: '^canary$' }, note: { any: true } } }]);
    expect((await ui.host.waitResult('wid-1')).state).toBe('succeeded');
    const grant = ui.svc.verdicts.grants().find((g) => g.key_id === agent.key_id)!;
    const table = ui.page.getByRole('table', { name: 'Time-boxed approvals' });
    await table.getByRole('row').filter({ hasText: 'canary' }).waitFor();
    expect(await table.getByRole('columnheader').allTextContents()).toContain('Arguments');
    await ui.screenshots('approvals-grants');
    ui.svc.verdicts.revokeGrant(grant.id, 'test');

    // Nothing changed on the card: the grant covers the same values only (no widen sent).
    ui.host.submit(agent, 'wid-2', 'canary', { target: 'canary', note: 'second' });
    await expect.poll(() => state('wid-2')).toBe('awaiting_approval');
    await ui.open('/approvals/wid-2');
    await card().getByRole('heading', { name: 'Run canary?' }).waitFor();
    await recordApprovals();
    await expect.poll(armed).toBe(true);
    await ui.page.keyboard.press('t');
    await expect.poll(approveCalls).toEqual([{ id: 'wid-2', forSeconds: 1800 }]);
    expect((await ui.host.waitResult('wid-2')).state).toBe('succeeded');
    for (const g of ui.svc.verdicts.grants()) ui.svc.verdicts.revokeGrant(g.id, 'test');
    expect(ui.errors).toEqual([]);
  });

  it('in the window too: the arguments and their choices are on the card, and Approve for 30 min sends them', async () => {
    const agent = ui.host.createKey('canary-window', 'write');
    ui.host.submit(agent, 'wid-3', 'canary', { target: 'canary-eu', note: 'third' });
    await expect.poll(() => state('wid-3')).toBe('awaiting_approval');
    await sized({ width: 480, height: 420 }, async () => {
      await ui.open('wid-3', 'approval.html');
      await card().getByRole('heading', { name: 'Run canary?' }).waitFor();
      await recordApprovals();
      await scrollThrough();
      await expect.poll(armed).toBe(true);
      const args = card().getByRole('group', { name: 'Arguments' });
      await args.getByRole('combobox', { name: 'What later calls may give as target' }).selectOption('match');
      await args.getByRole('textbox', { name: /^Pattern for target/ }).fill('^canary-(eu|us)$');
      await settled();
      await ui.screenshots('approval-window-widen');
      await card().getByRole('button', { name: 'Approve for 30 min' }).click();
      expect((await ui.host.waitResult('wid-3')).state).toBe('succeeded');
      expect(await approveCalls()).toEqual([{ id: 'wid-3', forSeconds: 1800, widen: { target: { match: '^canary-(eu|us)$' } } }]);
    });
    for (const g of ui.svc.verdicts.grants()) ui.svc.verdicts.revokeGrant(g.id, 'test');
    expect(ui.errors).toEqual([]);
  });
});

describe('a request that claims a plan', () => {
  it('says "claims plan P, but differs from its steps" with the difference, as a warning that must be seen like the rest', async () => {
    await proposePlan('claimed-plan', [{ op: 'greet', args: { name: 'alpha' } }], 'Greet alpha');
    ui.svc.verdicts.approve('claimed-plan', 'test');
    ui.host.submit(key, 'claim-1', 'greet', { name: 'mallory' }, { intent: 'Step 1 of the approved plan', extra: { plan_id: 'claimed-plan' } });
    await expect.poll(() => state('claim-1')).toBe('awaiting_approval');
    // What the core's intake records on the waiting request's approval (in the real ledger).
    const ledger = new Database(path.join(ui.host.home, 'ledger.sqlite'), { timeout: 10_000 });
    try {
      ledger
        .prepare(`UPDATE requests SET approval_json = json_set(approval_json, '$.plan_claim', json(?)) WHERE id = ?`)
        .run(JSON.stringify({ plan_id: 'claimed-plan', reason: 'no step of greet has name "mallory"' }), 'claim-1');
    } finally {
      ledger.close();
    }
    await ui.open('/approvals/claim-1');
    await card().getByRole('heading', { name: 'Run greet?' }).waitFor();
    const claim = body().getByRole('note').filter({ hasText: 'Claims plan' });
    expect(await claim.textContent()).toBe(
      'Claims plan claimed-plan, but differs from its steps: no step of greet has name "mallory". It is not one of that plan’s approved steps, so it asks you like any request.',
    );
    expect(await claim.evaluate((el) => el.classList.contains('callout-warn'))).toBe(true);
    await expect.poll(armed).toBe(true);
    await settled();
    await ui.screenshots('approvals-plan-claim');
    await card().getByRole('textbox', { name: 'Reason for denying' }).fill('not a step of the plan');
    await card().getByRole('button', { name: 'Deny' }).click();
    expect((await ui.host.waitResult('claim-1')).state).toBe('denied');
    expect(ui.errors).toEqual([]);
  });
});
