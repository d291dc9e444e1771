// The Keys screen in real Chromium against the real host: a key made in the UI is shown once, saved as
// a file that signs requests the real daemon accepts; the list counts its requests; revoking it in the
// UI makes the daemon reject it; rotating shows a new working key and retires the old one. The secret
// is saved private (mode 0600) through main, and is not lost by leaving the screen without asking.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ui } from './harness';
import { EXAMPLE_ALLOWLIST } from '../../main/core/allowlist/example';
import type { KeyFile } from '../../shared/protocol/types';

let ui: Ui;
const saveDir = mkdtempSync(path.join(os.tmpdir(), 'dw-ui-keys-'));
beforeAll(async () => {
  ui = await Ui.start({ allowlist: EXAMPLE_ALLOWLIST });
});
afterAll(async () => {
  await ui?.close();
  rmSync(saveDir, { recursive: true, force: true });
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

    // Cancelling the save dialog saves nothing and does not count as keeping the key.
    const saveButton = panel.getByRole('button', { name: /^Save as dumbwaiter-key-sandbox-one\.json/ });
    const target = path.join(saveDir, 'sandbox-one.json');
    ui.savePath = null;
    await saveButton.click();
    await expect.poll(() => saveButton.isEnabled()).toBe(true);
    expect(await panel.getByRole('status', { name: 'Where it was saved' }).count()).toBe(0);
    expect(existsSync(target)).toBe(false);
    await panel.getByRole('button', { name: 'Done' }).click();
    const unsaved = page.getByRole('dialog', { name: 'Close without saving the key?' });
    await unsaved.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => unsaved.count()).toBe(0);

    // Save as… writes the very key the host made, as pretty JSON, readable by the user only; the panel says where.
    ui.savePath = target;
    await saveButton.click();
    await panel.getByRole('status', { name: 'Where it was saved' }).getByText(target).waitFor();
    expect(statSync(target).mode & 0o777).toBe(0o600);
    await ui.screenshots('key-created');
    const text = readFileSync(target, 'utf8');
    const key = JSON.parse(text) as KeyFile;
    firstKey = key;
    expect(text).toBe(`${JSON.stringify(key, null, 2)}\n`);
    expect(await panel.getByLabel('Key file').textContent()).toBe(text);
    const stored = ui.svc.keys.list().find((k) => k.key_id === key.key_id)!;
    expect(stored).toMatchObject({ name: 'sandbox one', scope: 'write', ops: ['echo'], revoked_at: null });

    ui.host.submit(key, 'keys-ui-0001', 'echo', { msg: 'hello' });
    expect((await ui.host.waitResult('keys-ui-0001')).state).toBe('succeeded');
    // The key may call only the operations chosen.
    ui.host.submit(key, 'keys-ui-0002', 'list-documents', {});
    const limited = await ui.host.waitResult('keys-ui-0002');
    expect(limited.state).toBe('rejected');

    // Saved: Done closes without asking, and the secret is gone from the page.
    await panel.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => panel.count()).toBe(0);
    expect(await page.getByRole('dialog').count()).toBe(0);
    expect(await page.content()).not.toContain(key.secret);
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
    expect(ui.svc.keys.list().find((k) => k.key_id === key.key_id)!.revoked_at).toBeNull();

    await page.getByRole('button', { name: 'Revoke sandbox one' }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('table', { name: 'Revoked keys' }).getByRole('row', { name: 'Key sandbox one' }).waitFor();
    expect(ui.svc.keys.list().find((k) => k.key_id === key.key_id)!.revoked_at).not.toBeNull();
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
    expect(ui.svc.keys.list().find((k) => k.key_id === oldKey.key_id)).toMatchObject({ name: 'reader', scope: 'read', ops: null });
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

    const keys = ui.svc.keys.list();
    expect(keys.find((k) => k.key_id === oldKey.key_id)).toMatchObject({ rotated_to: newKey.key_id });
    expect(keys.find((k) => k.key_id === oldKey.key_id)!.revoked_at).not.toBeNull();
    ui.host.submit(newKey, 'keys-ui-0004', 'echo', { msg: 'after' });
    expect((await ui.host.waitResult('keys-ui-0004')).state).toBe('succeeded');
    ui.host.submit(oldKey, 'keys-ui-0005', 'echo', { msg: 'old' });
    const old = await ui.host.waitResult('keys-ui-0005');
    expect(old.state).toBe('rejected');
    expect(old.error?.code).toBe('revoked_key');

    await rotated.getByRole('button', { name: 'Copy key file' }).click();
    // The copy is done (the clipboard answers asynchronously): from then on the key counts as kept.
    await page.getByRole('status').getByText('Key file copied').waitFor();
    await rotated.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => rotated.count()).toBe(0);
    expect(await page.content()).not.toContain(newKey.secret);
    const revokedTable = page.getByRole('table', { name: 'Revoked keys' });
    await revokedTable.getByText(`rotated to ${newKey.key_id}`).waitFor();
    await expect.poll(() => page.getByRole('table', { name: 'Active keys' }).getByRole('row', { name: 'Key reader' }).getByRole('cell', { name: '1 request' }).count()).toBe(1);
    await ui.screenshots('keys');
    expect(ui.errors).toEqual([]);
  });

  it('asks before leaving a key not yet saved, and shows the secret only once', async () => {
    await ui.open('/keys');
    const page = ui.page;
    await page.getByRole('button', { name: 'New key…' }).click();
    await page.getByLabel('Name').fill('leaver');
    await page.getByLabel('Name').press('Enter');
    const panel = page.getByRole('region', { name: /Key “leaver” created/ });
    const key = JSON.parse((await panel.getByLabel('Key file').textContent())!) as KeyFile;
    expect(await page.content()).toContain(key.secret);
    const leave = page.getByRole('dialog', { name: 'Leave without saving the key?' });

    // Ctrl+1 (Activity) asks; Cancel stays, with the key still on screen.
    await page.keyboard.press('Control+1');
    await leave.waitFor();
    await leave.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => leave.count()).toBe(0);
    expect(page.url()).toMatch(/#\/keys$/);
    await panel.getByLabel('Key file').waitFor();
    // So do the sidebar and the tray.
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Spend' }).click();
    await leave.getByRole('button', { name: 'Cancel' }).click();
    await ui.emit('app.navigate', { route: '/settings' });
    await leave.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => leave.count()).toBe(0);
    expect(page.url()).toMatch(/#\/keys$/);
    expect(await panel.getByLabel('Key file').textContent()).toContain(key.secret);

    // Agreeing leaves; coming back, the secret is nowhere: it was shown once.
    await page.keyboard.press('Control+1');
    await leave.getByRole('button', { name: 'Leave anyway' }).click();
    await page.waitForURL(/#\/activity$/);
    await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
    await page.keyboard.press('Control+4');
    await page.waitForURL(/#\/keys$/);
    await keyRow('leaver').waitFor();
    expect(await panel.count()).toBe(0);
    expect(await page.content()).not.toContain(key.secret);
    // The key itself exists and works: only its secret is no longer shown.
    expect(ui.svc.keys.list().find((k) => k.key_id === key.key_id)).toMatchObject({ name: 'leaver', revoked_at: null });

    // Once the key is copied, leaving no longer asks.
    await page.getByRole('button', { name: 'Rotate leaver' }).click();
    await page.getByRole('dialog', { name: 'Rotate key “leaver”?' }).getByRole('button', { name: 'Rotate key' }).click();
    const rotated = page.getByRole('region', { name: /New key for “leaver”/ });
    await rotated.getByRole('button', { name: 'Copy key file' }).click();
    await page.getByRole('status').getByText('Key file copied').waitFor();
    await page.keyboard.press('Control+1');
    await page.waitForURL(/#\/activity$/);
    expect(await leave.count()).toBe(0);
    expect(ui.errors).toEqual([]);
  });
});
