// The Spend screen in real Chromium against the real host: a ceiling set in the UI lands in the
// settings, the real daemon enforces it (the run past it is rejected with spend_ceiling), and the
// screen shows the spend against it as a full bar; ceilings are edited and deleted the same way.
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

const ceilings = () => ui.svc.getSettings().ceilings;

describe('the Spend screen', () => {
  it('sets ceilings that the daemon enforces, and shows the spend against them', async () => {
    await ui.open('/spend');
    const page = ui.page;
    await page.getByText('No spend ceilings').waitFor();
    await page.getByRole('button', { name: 'Add a ceiling' }).click();

    // A per-key ceiling on run time and cost, checked as it is typed.
    const form = page.getByRole('form', { name: 'New ceiling' });
    await form.getByRole('button', { name: 'Add ceiling' }).click();
    await form.getByText('Give the ceiling a name.').waitFor();
    await form.getByText('Set at least one limit: runs, cost or run time.').waitFor();
    await form.getByLabel('Name').fill('per key!');
    await form.getByText('Letters, digits, _ . - only').waitFor();
    await form.getByLabel('Name').fill('per-key');
    await form.getByRole('radio', { name: 'Each key on its own' }).check();
    await form.getByLabel('Window', { exact: true }).fill('0.5');
    await form.getByRole('combobox', { name: 'Window unit' }).selectOption('minutes');
    await form.getByText('The window is at least 1 minute.').waitFor();
    await form.getByLabel('Window', { exact: true }).fill('1');
    await form.getByRole('combobox', { name: 'Window unit' }).selectOption('days');
    await form.getByLabel('Max cost units').fill('100');
    await form.getByLabel('Max run time').fill('30');
    await form.getByRole('radio', { name: /Ask me/ }).check();
    await form.getByRole('button', { name: 'Add ceiling' }).click();
    await expect.poll(ceilings).toEqual([{ name: 'per-key', per: 'key', window_s: 86400, max_cost: 100, max_run_time_s: 1800, action: 'ask' }]);
    await expect.poll(() => form.count()).toBe(0);

    // A global ceiling of one run per hour, rejecting past it.
    await page.getByRole('button', { name: 'Add ceiling…' }).click();
    await page.getByLabel('Name').fill('hourly');
    await page.getByLabel('Max runs').fill('1');
    await page.getByRole('button', { name: 'Add ceiling' }).click();
    await expect.poll(() => ceilings()[1]).toEqual({ name: 'hourly', per: 'global', window_s: 3600, max_runs: 1, action: 'reject' });

    const key = ui.host.createKey('agent', 'write');
    ui.host.submit(key, 'spend-ui-0001', 'echo', { msg: 'one' });
    expect((await ui.host.waitResult('spend-ui-0001')).state).toBe('succeeded');
    ui.host.submit(key, 'spend-ui-0002', 'echo', { msg: 'two' });
    const second = await ui.host.waitResult('spend-ui-0002');
    expect(second.state).toBe('rejected');
    expect(second.error?.code).toBe('spend_ceiling');

    const hourly = page.getByRole('region', { name: 'hourly' });
    const bar = hourly.getByRole('meter', { name: 'hourly: runs' });
    await expect.poll(() => bar.getAttribute('aria-valuenow')).toBe('1');
    expect(await bar.getAttribute('aria-valuemax')).toBe('1');
    expect(await hourly.getByRole('cell', { name: /1 \/ 1/ }).textContent()).toBe('1 / 1Full');
    expect(await bar.locator('.meter-fill').evaluate((e) => (e as HTMLElement).style.width)).toBe('100%');
    // The per-key ceiling has a row for the key that ran.
    const perKey = page.getByRole('region', { name: 'per-key' });
    await perKey.getByRole('meter', { name: 'per-key for agent: cost units' }).waitFor();
    await perKey.getByText('At the limit: ask me').waitFor();
    await ui.screenshots('spend');
    expect(ui.errors).toEqual([]);
  });

  it('edits and deletes a ceiling', async () => {
    await ui.open('/spend');
    const page = ui.page;
    await page.getByRole('button', { name: 'Edit hourly' }).click();
    const form = page.getByRole('form', { name: 'Edit ceiling “hourly”' });
    // A name already taken is refused before anything is sent.
    await form.getByLabel('Name').fill('per-key');
    await form.getByText('There is already a ceiling named “per-key”.').waitFor();
    await form.getByLabel('Name').fill('hourly');
    await form.getByLabel('Max runs').fill('5');
    await form.getByRole('button', { name: 'Save ceiling' }).click();
    await expect.poll(() => ceilings()[1]?.max_runs).toBe(5);
    await expect.poll(() => page.getByRole('meter', { name: 'hourly: runs' }).getAttribute('aria-valuemax')).toBe('5');

    // What the form cannot know (the ledger's retention changed meanwhile) the host refuses, and says why.
    ui.svc.setSetting('retention_ledger_days', 2, 'test');
    await page.getByRole('button', { name: 'Add ceiling…' }).click();
    const added = page.getByRole('form', { name: 'New ceiling' });
    await added.getByLabel('Name').fill('weekly');
    await added.getByLabel('Window', { exact: true }).fill('7');
    await added.getByRole('combobox', { name: 'Window unit' }).selectOption('days');
    await added.getByLabel('Max runs').fill('50');
    await added.getByRole('button', { name: 'Add ceiling' }).click();
    await added.getByRole('alert').filter({ hasText: "retention_ledger_days must cover every ceiling's window_s" }).waitFor();
    expect(ceilings().map((c) => c.name)).toEqual(['per-key', 'hourly']);
    await added.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'Delete per-key' }).click();
    await page.getByRole('dialog', { name: 'Delete ceiling “per-key”?' }).getByRole('button', { name: 'Delete ceiling' }).click();
    await expect.poll(() => ceilings().map((c) => c.name)).toEqual(['hourly']);
    await expect.poll(() => page.getByRole('region', { name: 'per-key' }).count()).toBe(0);
    expect(ui.errors).toEqual([]);
  });
});
