// Issue 12, item 8, and issue 30, item 3, in the desktop app: the app's real main-process bundle under
// the Electron stand-in (test/fakes/electron.cjs records every notification and tray update), with its
// real daemon. A request whose intent carries escape sequences, bidi overrides and line feeds asks for
// approval: the notification shows it escaped, on a line of its own under the whole command, and
// approving from it runs the request. One whose argument carries them cannot be shown unambiguously
// on a line: its notification shows nothing raw and opens its card instead of approving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppProcess, buildPackagedApp, writeShown, type AppLayout } from '../../fakes/electronApp';
import { envelope, waitForResult, withService, writeQueueFile } from '../../helpers/host';
import { IPC_PREFIX } from '../../../shared/ipc/channels';
import type { KeyFile } from '../../../shared/protocol/types';
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

/** A fresh home with a `deploy` that asks a human, the app started on it, and a key. */
async function started(name: string): Promise<{ app: AppProcess; spool: string; key: KeyFile }> {
  const dir = path.join(root, name);
  const userHome = path.join(dir, 'user');
  mkdirSync(userHome, { recursive: true });
  const home = path.join(dir, 'app-home');
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
  const key = withService(home, undefined, (svc) => keyFileOf(svc.keys.create('agent-one', 'write', null, 'test')));
  const app = new AppProcess(layout, { home, userHome, logFile: path.join(dir, 'electron.jsonl') });
  await app.waitCall('app.on', (c) => c.event === 'before-quit'); // start() has run to its end
  return { app, spool, key };
}

type Shown = { title: string; body: string; actions: { text: string }[] };

describe('the desktop app shows what the sandbox wrote escaped', () => {
  it('in the approval notification, under the whole command, whose Approve button then runs the request', async () => {
    const { app, spool, key } = await started('intent');
    writeQueueFile(spool, 'esc-1.json', envelope(key, 'esc-1', 'deploy', { target: 'staging' }, { intent: INTENT }));
    const shown = await app.waitCall('Notification.show');
    const note = app.last('Notification.new', (c) => c.id === shown.id)!.options as Shown;
    const cwd = (await waitForResult(spool, 'esc-1', ['awaiting_approval'], 30_000)).approval!.cwd;
    writeShown('escaped-intent', note, null);
    expect(note.title).toBe('Approve deploy?');
    expect(note.body).not.toMatch(RAW);
    expect(note.body.split('\n')).toEqual(['agent-one: /bin/echo deployed staging', `in ${cwd}`, String.raw`The agent's reason: tidy up\x1b[1A\x1b[2K\nApprove: harmless\u202e`]);
    expect(note.actions.map((a) => a.text)).toEqual(['Approve', 'Deny']);

    await app.command('notification.action', { id: shown.id, index: 0 });
    expect((await waitForResult(spool, 'esc-1', ['succeeded'], 30_000)).stdout).toBe('deployed staging\n');
  });

  it('and an argument it cannot show unambiguously on a line sends the notification to the card, with nothing raw', async () => {
    const { app, spool, key } = await started('argument');
    writeQueueFile(spool, 'esc-2.json', envelope(key, 'esc-2', 'deploy', { target: TARGET }, { intent: INTENT }));
    const shown = await app.waitCall('Notification.show');
    const note = app.last('Notification.new', (c) => c.id === shown.id)!.options as Shown;
    writeShown('escaped-argument', note, null);
    expect(JSON.stringify(note)).not.toMatch(RAW);
    expect(note.body).toBe('agent-one asks to run deploy.\nIts command or folder has characters other than plain ASCII: open the card to see all of it before you decide.');
    expect(note.actions.map((a) => a.text)).toEqual(['Open the card…', 'Deny']);

    await app.waitCall('BrowserWindow.loadURL', (c) => c.url === 'app://dumbwaiter/approval.html#esc-2');
    const before = app.calls().at(-1)!.seq;
    await app.command('notification.action', { id: shown.id, index: 0 });
    const nav = await app.waitCall('webContents.send', (c) => c.channel === `${IPC_PREFIX}event:app.navigate`, before);
    expect(nav.args).toEqual([{ route: 'esc-2' }]);
    expect(withService(path.join(root, 'argument', 'app-home'), undefined, (svc) => svc.requests.get('esc-2')?.state)).toBe('awaiting_approval');
  });
});
