// The Approvals screen and the approval window in real Chromium against the real host: requests the
// sandbox writes into the spool wait for a human, who approves, denies with a reason, or approves for
// some minutes (a grant the next request uses without asking); by mouse and by keyboard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ui } from './harness';
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
`;

let ui: Ui;
let key: KeyFile;
beforeAll(async () => {
  ui = await Ui.start({ allowlist: ALLOWLIST });
  key = ui.host.createKey('agent', 'write');
});
afterAll(async () => {
  await ui?.close();
});

const state = (id: string) => ui.svc.requests.get(id)?.state;
const card = () => ui.page.getByRole('article');

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
    const audit = ui.svc.searchAudit({ requestId: 'req-0002', kind: 'denied' });
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

    const grants = ui.svc.listGrants();
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
    expect(ui.svc.listGrants()).toEqual([]);
    ui.host.submit(key, 'req-0005', 'deploy', { target: 'staging' });
    await expect.poll(() => state('req-0005')).toBe('awaiting_approval');
    ui.svc.deny('req-0005', 'test', 'cleanup');
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
    await ui.screenshots('approvals');

    await ui.page.keyboard.press('j');
    await expect.poll(selected).toBe('kbd-2');
    await ui.page.keyboard.press('j');
    await expect.poll(selected).toBe('kbd-3');
    await ui.page.keyboard.press('k');
    await ui.page.keyboard.press('k');
    await expect.poll(selected).toBe('kbd-1');

    await ui.page.keyboard.press('a');
    expect((await ui.host.waitResult('kbd-1')).state).toBe('succeeded');
    await expect.poll(selected).toBe('kbd-2');

    await ui.page.keyboard.press('d');
    const reason = card().getByRole('textbox', { name: 'Reason for denying' });
    await expect.poll(() => reason.evaluate((el) => el === document.activeElement)).toBe(true);
    await ui.page.keyboard.type('Not this one');
    await ui.page.keyboard.press('Enter');
    const denied = await ui.host.waitResult('kbd-2');
    expect([denied.state, denied.error?.message]).toEqual(['denied', 'denied by app: Not this one']);
    await expect.poll(selected).toBe('kbd-3');

    // Back on the screen (Enter left the focus in the list): T approves for the chosen 30 minutes.
    await ui.page.keyboard.press('t');
    expect((await ui.host.waitResult('kbd-3')).state).toBe('succeeded');
    const grant = ui.svc.listGrants().find((x) => x.key_id === kbd.key_id);
    expect(grant?.op).toBe('deploy');
    expect((Date.parse(grant!.expires_at) - Date.parse(grant!.created_at)) / 60_000).toBe(30);
    await ui.page.getByRole('status').filter({ hasText: 'Nothing is waiting for you' }).waitFor();
    ui.svc.revokeGrant(grant!.id, 'test');
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
      expect(await card().getByLabel('Command that runs').locator('code').allTextContents()).toEqual(['/bin/echo', 'deployed production']);
      expect(await card().textContent()).toContain('Release 2.4.1 to production');
      expect(await ui.page.getByRole('button', { name: '1 more waiting: next' }).count()).toBe(1);
      // Everything fits: no scrolling needed to reach the decisions.
      expect(await card().getByRole('button', { name: 'Deny' }).isVisible()).toBe(true);
      const box = await card().getByRole('button', { name: 'Deny' }).boundingBox();
      expect(box!.y + box!.height).toBeLessThan(420);
      await ui.screenshots('approval-window');

      // D focuses the reason; a click elsewhere leaves it.
      await ui.page.keyboard.press('d');
      await expect.poll(() => card().getByRole('textbox', { name: 'Reason for denying' }).evaluate((el) => el === document.activeElement)).toBe(true);
      await card().getByRole('heading').click();

      await ui.page.keyboard.press('Enter');
      expect((await ui.host.waitResult('win-1')).state).toBe('succeeded');
      expect(ui.svc.requests.get('win-1')?.decided_by).toBe('app');
      await ui.page.getByRole('status').filter({ hasText: 'Approved.' }).waitFor();
      expect(state('win-2')).toBe('awaiting_approval');

      // The next one in the same window (the app reuses it by changing the hash); decided elsewhere
      // meanwhile, the window says so.
      await ui.page.getByRole('button', { name: '1 more waiting: next' }).click();
      await card().getByRole('heading', { name: 'Run greet?' }).waitFor();
      ui.svc.deny('win-2', 'test', 'decided elsewhere');
      await ui.page.getByText('is no longer waiting for you').waitFor();
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
});
