// The Keys screen in real Chromium against the real host: a key made in the UI is shown once, saved as
// a file that signs requests the real daemon accepts; the list counts its requests; revoking it in the
// UI makes the daemon reject it; rotating shows a new working key and retires the old one.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ui } from './harness';
import { EXAMPLE_ALLOWLIST } from '../../main/core/allowlist/example';
import type { KeyFile } from '../../shared/protocol/types';

let ui: Ui;
beforeAll(async () => {
  ui = await Ui.start({ allowlist: EXAMPLE_ALLOWLIST });
});
afterAll(async () => {
  await ui?.close();
});

/** The key made in the first test, as the sandbox has it. */
let firstKey: KeyFile;
const keyRow = (name: string) => ui.page.getByRole('row', { name: `Key ${name}` });


describe('the Keys screen', () => {
  it('creates a key shown once, whose saved file signs requests the daemon accepts', async () => {
    await ui.open('/keys');
    const page = ui.page;
    await page.getByText('No keys yet').waitFor();
    await page.getByRole('button', { name: 'Create the first key' }).click();

    // The form checks its input before anything is sent.
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Give the key a name').waitFor();
    await page.getByLabel('Name').fill('sandbox one');
    await page.getByRole('radio', { name: /Read & write/ }).check();
    await page.getByRole('radio', { name: /Only these/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Choose at least one operation').waitFor();
    await page.getByRole('checkbox', { name: /echo/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();

    const panel = page.getByRole('region', { name: /Key “sandbox one” created/ });
    await panel.getByText('Save this key now: it is shown only once.').waitFor();
    await expect.poll(() => panel.getByText("export DUMBWAITER_SPOOL='").isVisible()).toBe(true);
    await ui.screenshots('key-created');

    // Save as… downloads the key file; it is the very key the host made, as pretty JSON.
    const [download] = await Promise.all([page.waitForEvent('download'), panel.getByRole('button', { name: /^Save as dumbwaiter-key-sandbox-one\.json/ }).click()]);
    expect(download.suggestedFilename()).toBe('dumbwaiter-key-sandbox-one.json');
    const text = readFileSync((await download.path())!, 'utf8');
    const key = JSON.parse(text) as KeyFile;
    firstKey = key;
    expect(text).toBe(`${JSON.stringify(key, null, 2)}\n`);
    expect(await panel.getByLabel('Key file').textContent()).toBe(text);
    const stored = ui.svc.listKeys().find((k) => k.key_id === key.key_id)!;
    expect(stored).toMatchObject({ name: 'sandbox one', scope: 'write', ops: ['echo'], revoked_at: null });

    ui.host.submit(key, 'keys-ui-0001', 'echo', { msg: 'hello' });
    expect((await ui.host.waitResult('keys-ui-0001')).state).toBe('succeeded');
    // The key may call only the operations chosen.
    ui.host.submit(key, 'keys-ui-0002', 'list-home', {});
    const limited = await ui.host.waitResult('keys-ui-0002');
    expect(limited.state).toBe('rejected');

    await panel.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => panel.count()).toBe(0);
    // The list follows the host: both requests counted, "last used" set.
    const row = keyRow('sandbox one');
    await expect.poll(() => row.getByRole('cell', { name: '2 requests' }).count()).toBe(1);
    expect(await row.textContent()).not.toContain('Never');
    expect(ui.errors).toEqual([]);
  });

  it('revokes a key after confirmation: the daemon rejects it from then on', async () => {
    await ui.open('/keys');
    const page = ui.page;
    const key = firstKey;
    await page.getByRole('button', { name: 'Revoke sandbox one' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke key “sandbox one”?' });
    // Cancelling changes nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(ui.svc.listKeys().find((k) => k.key_id === key.key_id)!.revoked_at).toBeNull();

    await page.getByRole('button', { name: 'Revoke sandbox one' }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('table', { name: 'Revoked keys' }).getByRole('row', { name: 'Key sandbox one' }).waitFor();
    expect(ui.svc.listKeys().find((k) => k.key_id === key.key_id)!.revoked_at).not.toBeNull();
    await page.getByText('No active keys').waitFor();

    ui.host.submit(firstKey, 'keys-ui-0010', 'echo', { msg: 'after revoke' });
    const r = await ui.host.waitResult('keys-ui-0010');
    expect(r.state).toBe('rejected');
    expect(r.error?.code).toBe('revoked_key');
    expect(ui.errors).toEqual([]);
  });

  it('rotates a key: the new one is shown once and works, the old one is rejected', async () => {
    await ui.open('/keys');
    const page = ui.page;
    await page.getByRole('button', { name: 'Create the first key' }).click();
    await page.getByLabel('Name').fill('reader');
    await page.getByLabel('Name').press('Enter');
    const created = page.getByRole('region', { name: /Key “reader” created/ });
    const oldKey = JSON.parse((await created.getByLabel('Key file').textContent())!) as KeyFile;
    expect(ui.svc.listKeys().find((k) => k.key_id === oldKey.key_id)).toMatchObject({ name: 'reader', scope: 'read', ops: null });
    ui.host.submit(oldKey, 'keys-ui-0003', 'echo', { msg: 'before' });
    expect((await ui.host.waitResult('keys-ui-0003')).state).toBe('succeeded');

    // Closing before copying or saving asks first.
    await created.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('dialog', { name: 'Close without saving the key?' }).getByRole('button', { name: 'Close anyway' }).click();
    await expect.poll(() => created.count()).toBe(0);

    await page.getByRole('button', { name: 'Rotate reader' }).click();
    await page.getByRole('dialog', { name: 'Rotate key “reader”?' }).getByRole('button', { name: 'Rotate key' }).click();
    const rotated = page.getByRole('region', { name: /New key for “reader”/ });
    await rotated.getByText('Save this key now: it is shown only once.').waitFor();
    await rotated.getByText(`The old key ${oldKey.key_id} is already revoked`).waitFor();
    const newKey = JSON.parse((await rotated.getByLabel('Key file').textContent())!) as KeyFile;
    expect(newKey.key_id).not.toBe(oldKey.key_id);

    const keys = ui.svc.listKeys();
    expect(keys.find((k) => k.key_id === oldKey.key_id)).toMatchObject({ rotated_to: newKey.key_id });
    expect(keys.find((k) => k.key_id === oldKey.key_id)!.revoked_at).not.toBeNull();
    ui.host.submit(newKey, 'keys-ui-0004', 'echo', { msg: 'after' });
    expect((await ui.host.waitResult('keys-ui-0004')).state).toBe('succeeded');
    ui.host.submit(oldKey, 'keys-ui-0005', 'echo', { msg: 'old' });
    const old = await ui.host.waitResult('keys-ui-0005');
    expect(old.state).toBe('rejected');
    expect(old.error?.code).toBe('revoked_key');

    await rotated.getByRole('button', { name: 'Copy key file' }).click();
    await rotated.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => rotated.count()).toBe(0);
    const revokedTable = page.getByRole('table', { name: 'Revoked keys' });
    await revokedTable.getByText(`rotated to ${newKey.key_id}`).waitFor();
    await expect.poll(() => page.getByRole('table', { name: 'Active keys' }).getByRole('row', { name: 'Key reader' }).getByRole('cell', { name: '1 request' }).count()).toBe(1);
    await ui.screenshots('keys');
    expect(ui.errors).toEqual([]);
  });
});
