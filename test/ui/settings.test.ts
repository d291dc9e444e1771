// The Settings screen in real Chromium against the real host: settings changed in the UI land in
// settings.json, invalid values are explained and not saved (the spools: test/ui/spools.test.ts), and a message typed here reaches the sandbox's inbox/ folder. The screen
// shows what the host stored, and follows changes made elsewhere without losing what is being typed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ui } from './harness';
import { EXAMPLE_ALLOWLIST } from '../../main/core/allowlist/example';

let ui: Ui;
beforeAll(async () => {
  ui = await Ui.start({ allowlist: EXAMPLE_ALLOWLIST });
});
afterAll(async () => {
  await ui?.close();
});

const settings = () => ui.svc.settings.get();

describe('the Settings screen', () => {
  it('saves the approval timeout, retention and switches into settings.json', async () => {
    await ui.open('/settings');
    const page = ui.page;
    const timeout = page.getByLabel('Approval timeout', { exact: true });
    expect(await timeout.inputValue()).toBe(String(settings().approval_timeout_s / 60));
    await timeout.fill('15');
    await timeout.press('Enter');
    await expect.poll(() => settings().approval_timeout_s).toBe(900);

    await page.getByLabel('Keep files in the spool', { exact: true }).fill('3');
    await page.getByRole('button', { name: 'Save keep files in the spool' }).click();
    await expect.poll(() => settings().retention_spool_days).toBe(3);
    await page.getByLabel('Keep history in the ledger', { exact: true }).fill('30');
    await page.getByRole('button', { name: 'Save keep history in the ledger' }).click();
    await expect.poll(() => settings().retention_ledger_days).toBe(30);

    const notify = page.getByRole('checkbox', { name: 'Notify me when a request needs approval' });
    expect(await notify.isChecked()).toBe(settings().notifications);
    await notify.uncheck();
    await expect.poll(() => settings().notifications).toBe(false);
    await page.getByRole('checkbox', { name: 'Start Dumbwaiter at login' }).check();
    await expect.poll(() => settings().start_at_login).toBe(true);
    const leave = page.getByRole('checkbox', { name: 'Leave runs running when Dumbwaiter stops' });
    expect(await leave.isChecked()).toBe(false); // runs_on_stop: stop
    await leave.check();
    await expect.poll(() => settings().runs_on_stop).toBe('leave');
    await leave.uncheck();
    await expect.poll(() => settings().runs_on_stop).toBe('stop');
    expect(ui.errors).toEqual([]);
  });

  it('explains an invalid value next to its field and does not save it', async () => {
    await ui.open('/settings');
    const page = ui.page;
    const before = settings();
    // The ledger must keep requests for the maximum request age (a day here) plus a day.
    const ledger = page.getByLabel('Keep history in the ledger', { exact: true });
    await ledger.fill('1');
    await expect.poll(() => ledger.getAttribute('aria-invalid')).toBe('true');
    const note = page.getByRole('alert').filter({ hasText: 'At least 2 days' });
    await note.waitFor();
    expect(await ledger.getAttribute('aria-describedby')).toBe(await note.getAttribute('id'));
    expect(await page.getByRole('button', { name: 'Save keep history in the ledger' }).isDisabled()).toBe(true);
    await ledger.press('Enter');
    const timeout = page.getByLabel('Approval timeout', { exact: true });
    await timeout.fill('0');
    await page.getByRole('alert').filter({ hasText: 'At least 1 minute.' }).waitFor();
    await timeout.press('Enter');
    expect(settings()).toEqual(before);
    // Escape puts the saved value back.
    await ledger.press('Escape');
    await expect.poll(() => ledger.inputValue()).toBe(String(before.retention_ledger_days));

    // A ceiling added elsewhere meanwhile: the screen follows the host, and the field says why it needs longer.
    ui.svc.settings.set('ceilings', [{ name: 'monthly', per: 'global', window_s: 20 * 86400, max_runs: 100, action: 'reject' }], 'test');
    await ledger.fill('10');
    await page.getByRole('alert').filter({ hasText: 'At least 20 days: spend ceiling “monthly” counts runs over that long.' }).waitFor();
    await ledger.press('Enter');
    expect(await ledger.getAttribute('aria-invalid')).toBe('true');
    expect(settings().retention_ledger_days).toBe(before.retention_ledger_days);
    ui.svc.settings.set('ceilings', [], 'test');
    expect(ui.errors).toEqual([]);
  });

  it('shows what the host stored, and follows changes made elsewhere without losing what is typed', async () => {
    await ui.open('/settings');
    const page = ui.page;
    const timeout = page.getByLabel('Approval timeout', { exact: true });
    const runs = page.getByLabel('Runs at once', { exact: true });
    const spoolDays = page.getByLabel('Keep files in the spool', { exact: true });
    expect(settings().approval_timeout_s).toBe(900);
    // The host stores whole seconds: 15.004 minutes is 900 s, the value it had; the field says so.
    await timeout.fill('15.004');
    await timeout.press('Enter');
    await expect.poll(() => timeout.inputValue()).toBe('15');
    expect(settings().approval_timeout_s).toBe(900);
    expect(await page.getByRole('button', { name: 'Undo' }).count()).toBe(0);

    // Changed from the command line while a value is being typed here: when the window comes back
    // into focus the screen shows the host's values, and the typed value stays.
    await spoolDays.fill('4');
    ui.svc.settings.set('max_concurrent_runs', 7, 'test');
    ui.svc.settings.set('approval_timeout_s', 1200, 'test');
    ui.svc.settings.set('retention_spool_days', 5, 'test');
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    await expect.poll(() => runs.inputValue()).toBe('7');
    expect(await timeout.inputValue()).toBe('20');
    expect(await spoolDays.inputValue()).toBe('4');
    await page.getByRole('button', { name: 'Save keep files in the spool' }).click();
    await expect.poll(() => settings().retention_spool_days).toBe(4);
    await expect.poll(() => page.getByRole('button', { name: 'Undo' }).count()).toBe(0);
    expect(settings()).toMatchObject({ max_concurrent_runs: 7, approval_timeout_s: 1200 });
    expect(ui.errors).toEqual([]);
  });

  it('sends a message to the sandbox: it lands in the spool inbox/, one copy signed for each key', async () => {
    const keys = [ui.host.createKey('agent-a'), ui.host.createKey('agent-b')];
    await ui.open('/settings');
    const page = ui.page;
    const text = 'The staging database is down until 3 pm: please do not run the integration tests.';
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send message' }).click();
    const sent = page.getByRole('status', { name: 'Sent messages' });
    await sent.getByText(text).waitFor();
    const copies = ui.host.inbox().filter((m) => m.text === text);
    expect(copies.map((m) => (m.auth as { key_id: string }).key_id).sort()).toEqual(keys.map((k) => k.key_id).sort());
    for (const msg of copies) {
      expect(msg).toMatchObject({ v: 1, kind: 'notice', ref: null, text });
      await sent.getByText(`inbox/${msg.id as string}.json`).waitFor();
    }
    expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('');
    await ui.screenshots('settings');
    expect(ui.errors).toEqual([]);
  });

  it('opens the logs folder through main, naming nothing, and says when the OS could not', async () => {
    await ui.open('/settings');
    const button = ui.page.getByRole('button', { name: 'Open logs' });
    await button.click();
    await expect.poll(() => ui.logsOpened).toBe(1);
    ui.openLogsProblem = 'no file manager';
    await button.click();
    await ui.page.getByText('The logs folder could not be opened: no file manager').waitFor();
    expect(ui.logsOpened).toBe(2);
    ui.openLogsProblem = null;
    expect(ui.errors).toEqual([]);
  });
});
