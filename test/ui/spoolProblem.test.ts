// The spool problem banner in real Chromium: when the real daemon (as an ordinary user) stops touching
// a spool it cannot read, or with no daemon the spool folder is unsafe, every screen says so above its
// content, in the host's own words; the banner goes once the spool is fixed.
import { chmodSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ui } from './harness';
import { AS_USER, NO_UNPRIVILEGED_USER } from '../helpers/processes';

const ALLOWLIST = `version: 1
operations:
  - name: echo
    command: [/bin/echo, "{msg}"]
    args:
      msg: {type: string, pattern: "[a-z ]*", max_length: 40}
    scope: read
    approval: never
`;

let ui: Ui;
const banner = () => ui.page.getByRole('alert', { name: 'Spool problem' });
const queue = () => path.join(ui.host.spool, 'queue');

beforeAll(async () => {
  ui = await Ui.start({ allowlist: ALLOWLIST, daemon: false });
});
afterAll(async () => {
  await ui?.close();
});

describe('the spool problem banner', () => {
  it('shows an unsafe spool on every screen while no daemon runs, and goes once it is fixed', async () => {
    chmodSync(queue(), 0o777);
    try {
      for (const route of ['/activity', '/settings', '/keys']) {
        await ui.open(route);
        await banner().waitFor();
        expect(await banner().textContent()).toMatch(/The spool needs attention\..*can be written by other users/);
      }
    } finally {
      chmodSync(queue(), 0o700);
    }
    await banner().waitFor({ state: 'detached' });
    expect(ui.errors).toEqual([]);
  });

  it.skipIf(AS_USER === null)('shows the problem the running daemon recorded when it stopped touching the spool, with the screen below it', async () => {
    const daemon = await ui.host.startDaemon({}, { asUser: true });
    try {
      await ui.open('/activity');
      await ui.page.getByRole('navigation', { name: 'Screens' }).getByRole('status').filter({ hasText: 'Running' }).waitFor();
      chmodSync(queue(), 0o000);
      try {
        await banner().waitFor();
        const recorded = ui.svc.core.flags.spoolProblem('default');
        expect(recorded).toMatch(/queue/);
        expect(await banner().textContent()).toContain(recorded);
        expect(await banner().textContent()).toContain('Requests in it are not taken until this is fixed');
        // The host's state in the sidebar agrees: running, but not serving the spool.
        await ui.page.getByRole('navigation', { name: 'Screens' }).getByRole('status').filter({ hasText: 'Spool not served' }).waitFor();
        await ui.page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
        await ui.screenshots('spool-problem');
        await banner().getByRole('link', { name: 'The spool folder in Settings' }).click();
        await ui.page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
        await banner().waitFor();
      } finally {
        chmodSync(queue(), 0o700);
      }
      await banner().waitFor({ state: 'detached' });
      await ui.page.getByRole('navigation', { name: 'Screens' }).getByRole('status').filter({ hasText: 'Running' }).waitFor();
      expect(ui.errors).toEqual([]);
    } finally {
      await daemon.stop();
    }
  });
});

if (AS_USER === null) console.warn(`spoolProblem UI: the daemon case is skipped: ${NO_UNPRIVILEGED_USER}`);
