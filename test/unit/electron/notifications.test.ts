// Issue 12, item 8, in the desktop app: the app's real main-process bundle under the Electron stand-in
// (test/fakes/electron.cjs records every notification and tray update), with its real daemon. A
// request whose intent and arguments carry escape sequences, bidi overrides and line feeds asks for
// approval: the notification shows them escaped, with the intent on a line of its own, and approving
// from it runs the request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppProcess, buildPackagedApp, type AppLayout } from '../../fakes/electronApp';
import { envelope, waitForResult, withService, writeQueueFile } from '../../helpers/host';
import { homePaths } from '../../../main/core/home';
import { initHome } from '../../../main/core/setup';
import { keyFileOf } from '../../../main/core/keys/keyStore';

// eslint-disable-next-line no-control-regex -- raw controls are what this looks for
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2069\ufeff]/u;

const INTENT = 'tidy up\x1b[1A\x1b[2K\nApprove: harmless\u202e';
const TARGET = 'staging\x1b]0;pwned\x07\u2067';

let root: string;
let layout: AppLayout;

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'dw-electron-escapes-'));
  layout = await buildPackagedApp(path.join(root, 'build'));
}, 180_000);

afterAll(async () => {
  await AppProcess.killAll();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('the desktop app shows what the sandbox wrote escaped', () => {
  it('in the approval notification, whose Approve button then runs the request', async () => {
    const userHome = path.join(root, 'user');
    mkdirSync(userHome);
    const home = path.join(root, 'app-home');
    const spool = path.join(userHome, 'Dumbwaiter', 'spool');
    initHome(home, undefined, spool);
    writeFileSync(homePaths(home).allowlist, `version: 1
operations:
  - name: deploy
    description: Deploys, once a human says yes
    command: [/bin/echo, deployed, "{target}"]
    args:
      target: {type: string, max_length: 200}
    scope: write
    approval: always
`);
    const settings = homePaths(home).settings;
    writeFileSync(settings, JSON.stringify({ ...JSON.parse(readFileSync(settings, 'utf8')), rescan_interval_ms: 200, shutdown_grace_s: 2, kill_grace_s: 1 }));
    const key = withService(home, undefined, (svc) => keyFileOf(svc.createKey('agent-one', 'write', null, 'test')));
    const app = new AppProcess(layout, { home, userHome, logFile: path.join(root, 'electron.jsonl') });
    await app.waitCall('app.on', (c) => c.event === 'before-quit'); // start() has run to its end

    writeQueueFile(spool, 'esc-1.json', envelope(key, 'esc-1', 'deploy', { target: TARGET }, { intent: INTENT }));
    const shown = await app.waitCall('Notification.show');
    const { title, body } = app.last('Notification.new', (c) => c.id === shown.id)!.options as { title: string; body: string };
    expect(title).toBe('Approve deploy?');
    expect(body).not.toMatch(RAW);
    expect(body.split('\n')).toEqual([String.raw`agent-one: /bin/echo deployed staging\x1b]0;pwned\x07\u2067`, String.raw`tidy up\x1b[1A\x1b[2K\nApprove: harmless\u202e`]);

    await app.command('notification.action', { id: shown.id, index: 0 });
    expect((await waitForResult(spool, 'esc-1', ['succeeded'], 30_000)).stdout).toBe(`deployed ${TARGET}\n`);
  });
});
