// The main window's frame in real Chromium: it loads under the app's CSP with no console errors,
// shows the host's live state, navigates by keyboard, and pauses/resumes the real host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ui } from './harness';
import { EXAMPLE_ALLOWLIST } from '../../main/core/allowlist/example';

let ui: Ui;
/** The host's state as the sidebar shows it (toasts are status regions too). */
const hostState = () => ui.page.getByRole('navigation', { name: 'Screens' }).getByRole('status');
beforeAll(async () => {
  ui = await Ui.start({ allowlist: EXAMPLE_ALLOWLIST });
});
afterAll(async () => {
  await ui?.close();
});

describe('the main window', () => {
  it('loads with the host running, under the CSP, without console errors', async () => {
    await ui.open('/activity');
    await hostState().filter({ hasText: 'Running' }).waitFor();
    expect(await ui.page.getByRole('navigation', { name: 'Screens' }).getByRole('link').allTextContents()).toEqual([
      'Activity',
      'Approvals',
      'Allowlist',
      'Keys',
      'Spend',
      'Audit log',
      'Settings',
    ]);
    expect(ui.errors).toEqual([]);
  });

  it('opens screens with Ctrl+digit and marks the current one', async () => {
    await ui.open('/activity');
    // The app has started (the status it asks for at start is shown): its shortcuts listen from then on.
    await hostState().filter({ hasText: 'Running' }).waitFor();
    await ui.page.keyboard.press('Control+4');
    await ui.page.waitForURL(/#\/keys$/);
    await expect.poll(() => ui.page.locator('a[aria-current="page"]').textContent()).toBe('Keys');
    await ui.page.keyboard.press('Control+6');
    await ui.page.waitForURL(/#\/audit$/);
    expect(ui.errors).toEqual([]);
  });

  it('pauses and resumes the real host', async () => {
    await ui.open('/activity');
    await ui.page.getByRole('button', { name: 'Pause', exact: true }).click();
    await hostState().filter({ hasText: 'Paused' }).waitFor();
    expect(ui.svc.core.flags.paused).toBe(true);
    await ui.page.getByRole('navigation', { name: 'Screens' }).getByRole('button', { name: 'Resume', exact: true }).click();
    await hostState().filter({ hasText: 'Running' }).waitFor();
    expect(ui.svc.core.flags.paused).toBe(false);
    expect(ui.errors).toEqual([]);
  });

  it('follows the tray to a screen (the app.navigate event)', async () => {
    await ui.open('/activity');
    await ui.emit('app.navigate', { route: '/settings' });
    await ui.page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    expect(ui.page.url()).toMatch(/#\/settings$/);
    expect(ui.errors).toEqual([]);
  });

  it('the first start shows the getting-started steps', async () => {
    await ui.open('/first-run');
    await ui.page.getByRole('heading', { name: 'Welcome to Dumbwaiter' }).waitFor();
    // The step a Docker user trips on: the spool is the host user's alone, so the sandbox runs as that uid.
    const share = ui.page.getByRole('listitem').filter({ has: ui.page.getByRole('heading', { name: 'Share the spool folder with the sandbox' }) });
    expect(await share.textContent()).toContain('run the sandbox as your own user');
    await share.getByText('--user "$(id -u):$(id -g)"', { exact: true }).waitFor();
    await ui.screenshots('welcome');
    expect(ui.errors).toEqual([]);
  });
});
