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

const ceilings = () => ui.svc.settings.get().ceilings;

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
    // Run time: what was measured, of the limit as set.
    expect(await perKey.getByRole('cell', { name: /\/ 30 min$/ }).textContent()).toMatch(/^\d+(\.\d)? m?s \/ 30 min$/);
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

    // The form checks against the ledger's retention as the host has it when the form opens…
    ui.svc.settings.set('retention_ledger_days', 2, 'test');
    await page.getByRole('button', { name: 'Add ceiling…' }).click();
    const added = page.getByRole('form', { name: 'New ceiling' });
    await added.getByLabel('Name').fill('weekly');
    await added.getByLabel('Window', { exact: true }).fill('7');
    await added.getByRole('combobox', { name: 'Window unit' }).selectOption('days');
    await added.getByText('The ledger keeps runs for 2 days').waitFor();
    await added.getByRole('button', { name: 'Cancel' }).click();

    // …and when it changes while the form is open, the save reads it again: the host refuses (or the
    // form, if the settings were read again before the click), and the form then knows why.
    ui.svc.settings.set('retention_ledger_days', 30, 'test');
    await page.getByRole('button', { name: 'Add ceiling…' }).click();
    await added.getByLabel('Name').fill('weekly');
    await added.getByLabel('Window', { exact: true }).fill('7');
    await added.getByRole('combobox', { name: 'Window unit' }).selectOption('days');
    await added.getByLabel('Max runs').fill('50');
    await expect.poll(() => added.getByText('Spend is counted over this rolling window').count()).toBe(1);
    ui.svc.settings.set('retention_ledger_days', 2, 'test');
    await added.getByRole('button', { name: 'Add ceiling' }).click();
    await added.getByText('The ledger keeps runs for 2 days').waitFor();
    expect(ceilings().map((c) => c.name)).toEqual(['per-key', 'hourly']);
    await added.getByRole('button', { name: 'Cancel' }).click();
    ui.svc.settings.set('retention_ledger_days', 90, 'test');

    await page.getByRole('button', { name: 'Delete per-key' }).click();
    await page.getByRole('dialog', { name: 'Delete ceiling “per-key”?' }).getByRole('button', { name: 'Delete ceiling' }).click();
    await expect.poll(() => ceilings().map((c) => c.name)).toEqual(['hourly']);
    await expect.poll(() => page.getByRole('region', { name: 'per-key' }).count()).toBe(0);
    expect(ui.errors).toEqual([]);
  });

  it('keeps ceilings changed elsewhere when one is added, edited or deleted here', async () => {
    await ui.open('/spend');
    const page = ui.page;
    await page.getByRole('region', { name: 'hourly' }).waitFor();
    await page.getByRole('button', { name: 'Add ceiling…' }).click();
    const form = page.getByRole('form', { name: 'New ceiling' });
    await form.getByLabel('Name').fill('from-ui');
    await form.getByLabel('Max runs').fill('10');

    // Meanwhile the command line adds a ceiling and changes another one.
    const cli = { name: 'from-cli', per: 'global', window_s: 600, max_cost: 7, action: 'reject' } as const;
    ui.svc.settings.set('ceilings', [...ceilings().map((c) => (c.name === 'hourly' ? { ...c, max_runs: 9 } : c)), cli], 'test');

    await form.getByRole('button', { name: 'Add ceiling' }).click();
    await expect.poll(() => ceilings().map((c) => c.name)).toEqual(['hourly', 'from-cli', 'from-ui']);
    expect(ceilings()).toEqual([
      { name: 'hourly', per: 'global', window_s: 3600, max_runs: 9, action: 'reject' },
      cli,
      { name: 'from-ui', per: 'global', window_s: 3600, max_runs: 10, action: 'reject' },
    ]);
    await page.getByRole('region', { name: 'from-cli' }).getByText('over the last 10 min').waitFor();

    // Deleting one here leaves the others as the host has them.
    ui.svc.settings.set('ceilings', ceilings().map((c) => (c.name === 'from-cli' ? { ...c, max_cost: 8 } : c)), 'test');
    await page.getByRole('button', { name: 'Delete from-ui' }).click();
    await page.getByRole('dialog', { name: 'Delete ceiling “from-ui”?' }).getByRole('button', { name: 'Delete ceiling' }).click();
    await expect.poll(() => ceilings().map((c) => c.name)).toEqual(['hourly', 'from-cli']);
    expect(ceilings()[1]).toEqual({ ...cli, max_cost: 8 });

    // Editing a ceiling deleted elsewhere meanwhile says so, and does not bring it back.
    await page.getByRole('button', { name: 'Edit from-cli' }).click();
    const edit = page.getByRole('form', { name: 'Edit ceiling “from-cli”' });
    await edit.getByLabel('Max cost units').fill('20');
    ui.svc.settings.set('ceilings', ceilings().filter((c) => c.name !== 'from-cli'), 'test');
    await edit.getByRole('button', { name: 'Save ceiling' }).click();
    await edit.getByRole('alert').filter({ hasText: 'Ceiling “from-cli” was deleted meanwhile' }).waitFor();
    expect(ceilings().map((c) => c.name)).toEqual(['hourly']);
    await edit.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'from-cli' }).count()).toBe(0);
    expect(ui.errors).toEqual([]);
  });
});
