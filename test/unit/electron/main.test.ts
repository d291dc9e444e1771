// The Electron layer's start-up, run for real: the app's built main-process bundle (what users get) in
// a child Node process, with `require('electron')` answered by a stand-in that records every call and
// lets the test act as the user (test/fakes/electron.cjs). The core in the child is the real one: a real
// daemon on a temporary home and spool, real signed requests, real runs.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppProcess, buildPackagedApp, writeShown, type AppLayout, type Call, type RecordedMenuItem } from '../../fakes/electronApp';
import { envelope, eventually, waitForResult, withService, writeQueueFile } from '../../helpers/host';
import { alive, groupRunning } from '../../helpers/processes';
import { CHANNEL_NAMES, IPC_PREFIX } from '../../../shared/ipc/channels';
import type { KeyFile, RequestState } from '../../../shared/protocol/types';
import { CSP } from '../../../main/electron/constants';
import { homePaths } from '../../../main/core/home';
import { initHome } from '../../../main/core/setup';
import { keyFileOf } from '../../../main/core/keys/keyStore';
import { isLocked, readHolder } from '../../../main/core/daemon/lock';

let root: string;
let layout: AppLayout;

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'dw-electron-'));
  layout = await buildPackagedApp(path.join(root, 'build'));
}, 180_000);

afterAll(async () => {
  await AppProcess.killAll();
  if (root) rmSync(root, { recursive: true, force: true });
});

// ------------------------------------------------------------------------------------------- a machine

/** One user's machine: their home folder (with the default spool in it) and the app's home. */
interface Machine {
  dir: string;
  userHome: string;
  home: string;
  spool: string;
  /** While this file exists, a run of `wait` keeps running. */
  hold: string;
  apps: number;
}

const machines: Machine[] = [];

afterEach(async () => {
  const apps = await AppProcess.killAll();
  // Only once the apps are gone: removing the folders also ends a `wait` run a failed test left behind.
  for (const m of machines.splice(0)) rmSync(m.dir, { recursive: true, force: true });
  // Electron's main process only warns about an unhandled rejection: here it fails the test.
  const unhandled = apps.flatMap((a) => a.calls('process.warning').filter((w) => w.name === 'UnhandledPromiseRejectionWarning'));
  expect(unhandled.map((w) => w.message), 'unhandled rejections in the app').toEqual([]);
});

function machine(): Machine {
  const dir = mkdtempSync(path.join(root, 'machine-'));
  const userHome = path.join(dir, 'user');
  mkdirSync(userHome);
  const m = { dir, userHome, home: path.join(dir, 'app-home'), spool: path.join(userHome, 'Dumbwaiter', 'spool'), hold: path.join(dir, 'hold'), apps: 0 };
  machines.push(m);
  return m;
}

function start(m: Machine, o: { manualReady?: boolean; secondInstance?: boolean; keychain?: string } = {}): AppProcess {
  return new AppProcess(layout, { home: m.home, userHome: m.userHome, logFile: path.join(m.dir, `electron-${++m.apps}.jsonl`), ...o });
}

const allowlist = (m: Machine) => `version: 1
operations:
  - name: hello
    description: Says hello
    command: [echo, "hello {name}"]
    args:
      name: {type: string, max_length: 40}
    scope: read
    approval: never
  - name: wait
    description: Runs while the test holds it
    command: [/bin/sh, -c, 'while [ -e "$0" ]; do sleep 0.05; done; echo released', ${JSON.stringify(m.hold)}]
    scope: read
    approval: never
    concurrency: 2
  - name: deploy
    description: Deploys, once a human says yes
    command: [/bin/sh, -c, 'echo deployed "$0"', "{target}"]
    args:
      target: {type: string, enum: [staging, production]}
    scope: write
    approval: always
  - name: words
    description: Echoes its words, once a human says yes
    command: [/bin/echo, "{words}"]
    args:
      words: {type: array, items: {type: string, max_length: 400}, max_items: 64}
    scope: write
    approval: always
  - name: ssh-env
    description: Says which ssh git would use, once a human says yes
    command: [/bin/sh, -c, 'echo "$GIT_SSH_COMMAND"']
    env: {GIT_SSH_COMMAND: "ssh -o ProxyCommand=id"}
    scope: write
    approval: always
`;

/** A home made earlier (by `dumbwaiter init`), with the test's allowlist, quick settings and a key. */
function preparedHome(m: Machine): KeyFile {
  initHome(m.home, undefined, m.spool);
  writeFileSync(homePaths(m.home).allowlist, allowlist(m));
  const settings = homePaths(m.home).settings;
  writeFileSync(settings, JSON.stringify({ ...JSON.parse(readFileSync(settings, 'utf8')), rescan_interval_ms: 200, shutdown_grace_s: 2, kill_grace_s: 1 }));
  return withService(m.home, undefined, (svc) => keyFileOf(svc.keys.create('agent-one', 'write', null, 'test')));
}

/** A signed request, written into the spool as a sandbox's client does. */
const submit = (m: Machine, key: KeyFile, id: string, op: string, args: Record<string, unknown> = {}) => writeQueueFile(m.spool, `${id}.json`, envelope(key, id, op, args));
const waitResult = (m: Machine, id: string, states: RequestState[]) => waitForResult(m.spool, id, states, 30_000);

// ------------------------------------------------------------------------------------ what was recorded

const apis = (calls: Call[]) => calls.map((c) => c.api);
const seqOf = (app: AppProcess, api: string, match: (c: Call) => boolean = () => true) => app.calls(api).find(match)?.seq ?? Infinity;

type MenuItem = RecordedMenuItem;

interface TrayView {
  icon: string;
  tooltip: string;
  menu: MenuItem[];
}

/** What the tray shows now: its last image, tooltip and menu. */
function trayNow(app: AppProcess): TrayView | undefined {
  const calls = app.calls();
  const lastOf = (api: string) => calls.findLastIndex((c) => c.api === api);
  const image = Math.max(lastOf('Tray.setImage'), lastOf('Tray.new'));
  const tooltip = lastOf('Tray.setToolTip');
  const menu = lastOf('Tray.setContextMenu');
  // An update sets the image, the tooltip, then the menu: until its menu is read, it is read only in part.
  if (image < 0 || tooltip < image || menu < tooltip) return undefined;
  return { icon: path.basename((calls[image]!.image as { image: string }).image), tooltip: calls[tooltip]!.text as string, menu: calls[menu]!.menu as MenuItem[] };
}

function waitTray(app: AppProcess, what: string, ok: (t: TrayView) => boolean): Promise<TrayView> {
  return app.waitFor(`the tray to show ${what}`, () => {
    const t = trayNow(app);
    return t && ok(t) ? t : undefined;
  });
}

const item = (menu: MenuItem[], label: string) => menu.find((i) => i.label === label);

/** start() has run to its end: the app listens for before-quit only once everything else is set up. */
async function started(app: AppProcess): Promise<void> {
  await app.waitCall('app.on', (c) => c.event === 'before-quit');
  await app.command('ping'); // anything start() did synchronously after that is recorded by now
}

const APP_PAGE = 'app://dumbwaiter/index.html';

// ----------------------------------------------------------------------------------------------- tests

describe('the desktop app under an Electron stand-in', () => {
  it('starts: the single-instance lock, the app scheme before ready, then the IPC, the daemon and the tray', async () => {
    const m = machine();
    const app = start(m, { manualReady: true });
    await app.command('ping');
    // Before 'ready' only what must come before it: the privileged scheme, the lock. Nothing on disk yet.
    expect(apis(app.calls()).filter((a) => a !== 'reply')).toEqual(['protocol.registerSchemesAsPrivileged', 'app.requestSingleInstanceLock', 'app.whenReady']);
    expect(app.last('protocol.registerSchemesAsPrivileged')).toMatchObject({ schemes: [{ scheme: 'app', privileges: { standard: true, secure: true } }], afterReady: false });
    expect(app.last('app.requestSingleInstanceLock')?.result).toBe(true);
    expect(existsSync(m.home)).toBe(false);

    await app.command('ready');
    await started(app);
    const ready = seqOf(app, 'app.ready');
    expect(seqOf(app, 'protocol.handle', (c) => c.scheme === 'app')).toBeGreaterThan(ready);
    expect(app.calls('session.setPermissionRequestHandler')).toHaveLength(1);
    expect(app.calls('session.setPermissionCheckHandler')).toHaveLength(1);
    expect(app.calls('ipcMain.handle').map((c) => c.channel).sort()).toEqual(CHANNEL_NAMES.map((c) => IPC_PREFIX + c).sort());
    expect(app.calls('app.on').map((c) => c.event)).toEqual(expect.arrayContaining(['web-contents-created', 'second-instance', 'window-all-closed', 'before-quit']));

    // The real daemon runs in the app's process, on the home and the default spool it created.
    expect(existsSync(homePaths(m.home).settings)).toBe(true);
    expect(existsSync(path.join(m.spool, 'queue'))).toBe(true);
    expect(readHolder(homePaths(m.home).lockInfo)).toMatchObject({ pid: app.pid, command: 'the Dumbwaiter desktop app' });
    expect(isLocked(homePaths(m.home).lock)).toBe(true);
    const mainWindow = (await app.waitCall('BrowserWindow.new')).id; // the first-run window
    const status = (await app.command('ipc.invoke', { channel: `${IPC_PREFIX}status.get`, url: `${APP_PAGE}#/`, id: mainWindow })) as { daemon: { running: boolean }; spool: string };
    expect(status.daemon.running).toBe(true);
    expect(status.spool).toBe(m.spool);
    // A frame that is not ours gets nothing, in our window or in a web contents that is none of ours.
    await expect(app.command('ipc.invoke', { channel: `${IPC_PREFIX}status.get`, url: 'https://example.com/', id: mainWindow })).rejects.toThrow('refused');
    await expect(app.command('ipc.invoke', { channel: `${IPC_PREFIX}status.get`, url: `${APP_PAGE}#/` })).rejects.toThrow('refused');

    // The tray, with the packaged app's icons, says idle.
    const tray = app.last('Tray.new')!;
    expect(tray.seq).toBeGreaterThan(ready);
    expect(tray).toMatchObject({ image: { image: path.join(layout.trayDir, 'idle.png') }, empty: false });
    expect(app.calls().filter((c) => c.api === 'nativeImage.createFromPath' && c.empty)).toEqual([]);
    const now = trayNow(app)!;
    expect(now.tooltip).toBe('Dumbwaiter: idle');
    expect(now.menu.map((i) => i.label)).toEqual(['Open Dumbwaiter', '', 'Pause new runs', 'Recent runs', '', 'Open logs', 'Quit Dumbwaiter']);
    expect(app.calls('app.setLoginItemSettings').map((c) => c.settings)).toEqual([{ openAtLogin: false }]);

    // The app scheme serves the renderer's files with the CSP, and nothing outside them.
    const page = (await app.command('protocol.request', { url: APP_PAGE })) as { status: number; headers: Record<string, string>; body: string };
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toBe(CSP);
    expect(page.body).toContain('<script');
    const outside = (await app.command('protocol.request', { url: 'app://dumbwaiter/..%2fmain%2findex.cjs' })) as { status: number };
    expect(outside.status).toBe(404);
    // Only its own host: under another host name the same page would be another origin.
    for (const url of ['app://evil.example/index.html', 'app://dumbwaiter.evil/index.html', 'app://dumbwaiter:8080/index.html']) {
      expect(((await app.command('protocol.request', { url })) as { status: number }).status, url).toBe(404);
    }
  });

  it('shows the main window at the first-run page on a fresh home, and not on the next start', async () => {
    const m = machine();
    // As on Linux without a keyring: key secrets cannot be sealed, and the first run says so.
    const first = start(m, { keychain: 'basic_text' });
    const shown = await first.waitCall('BrowserWindow.show');
    const win = first.last('BrowserWindow.new', (c) => c.id === shown.id)!;
    expect(win.options).toMatchObject({
      show: false,
      webPreferences: { preload: path.join(layout.appDir, 'dist', 'preload', 'index.cjs'), contextIsolation: true, sandbox: true, nodeIntegration: false },
    });
    expect(existsSync((win.options as { webPreferences: { preload: string } }).webPreferences.preload)).toBe(true);
    const load = first.last('BrowserWindow.loadURL', (c) => c.id === shown.id)!;
    expect(load.url).toBe(`${APP_PAGE}#/first-run`);
    expect(shown.seq).toBeGreaterThan(load.seq); // once ready to show, never blank
    expect(first.last('dialog.showMessageBox')?.options).toMatchObject({ type: 'warning', message: 'Key secrets are not encrypted' });
    expect(first.calls('safeStorage.encryptString')).toEqual([]);
    await first.command('quit');
    expect(await first.exit()).toEqual({ code: 0, signal: null });

    const second = start(m);
    await started(second);
    expect(second.calls('BrowserWindow.new')).toEqual([]);
    expect(second.calls('dialog.showMessageBox')).toEqual([]);
    expect(trayNow(second)?.tooltip).toBe('Dumbwaiter: idle');
  });

  it('hardens the windows it opens: no navigation away, no new windows, no permissions', async () => {
    const m = machine();
    const app = start(m);
    const { id } = await app.waitCall('BrowserWindow.show'); // the first-run window
    expect(await app.command('webContents.navigate', { id, url: 'https://example.com/' })).toEqual({ prevented: true });
    expect(await app.command('webContents.navigate', { id, url: `${APP_PAGE}#/keys` })).toEqual({ prevented: false });
    const docs = 'https://github.com/dumbwaiter-dev/dumbwaiter/blob/main/docs/SANDBOX.md';
    expect(await app.command('webContents.open', { id, url: docs })).toEqual({ action: 'deny' });
    expect(await app.command('webContents.open', { id, url: 'https://example.com/' })).toEqual({ action: 'deny' });
    expect(app.calls('shell.openExternal').map((c) => c.url)).toEqual([docs]);
    expect(await app.command('session.permission', { id, permission: 'clipboard-sanitized-write', url: APP_PAGE })).toBe(true);
    expect(await app.command('session.permission', { id, permission: 'media', url: APP_PAGE })).toBe(false);
    expect(await app.command('session.permission', { id, permission: 'clipboard-sanitized-write', url: 'https://example.com/' })).toBe(false);
  });

  it('the tray follows the requests: running, then idle with the run among the recent ones', async () => {
    const m = machine();
    const key = preparedHome(m);
    writeFileSync(m.hold, '');
    const app = start(m);
    await started(app);
    // The key made before the start is now sealed with the (stand-in) OS keychain; the daemon opens it.
    expect(app.calls('safeStorage.encryptString')).toHaveLength(1);
    expect(withService(m.home, undefined, (svc) => svc.audit.search({ kind: 'keys_sealed', limit: 10 })).length).toBe(1);
    expect(trayNow(app)).toMatchObject({ icon: 'idle.png', tooltip: 'Dumbwaiter: idle' });

    submit(m, key, 'wait-1', 'wait');
    const running = await waitTray(app, 'a run', (t) => t.icon === 'running.png');
    expect(running.tooltip).toBe('Dumbwaiter: 1 running');
    unlinkSync(m.hold);
    expect((await waitResult(m, 'wait-1', ['succeeded'])).stdout).toBe('released\n');
    const idle = await waitTray(app, 'idle again', (t) => t.icon === 'idle.png');
    expect(idle.tooltip).toBe('Dumbwaiter: idle');
    const recent = item(idle.menu, 'Recent runs')!;
    expect(recent.enabled).toBe(true);
    expect(recent.submenu?.map((i) => i.label)).toEqual(['wait: succeeded']);

    // The recent run opens the main window at that request.
    await app.command('tray.menu', { labels: ['Recent runs', 'wait: succeeded'] });
    const load = await app.waitCall('BrowserWindow.loadURL');
    expect(load.url).toBe(`${APP_PAGE}#/requests/wait-1`);
    await app.waitCall('BrowserWindow.show', (c) => c.id === load.id);
  });

  it("logs through electron-log into the OS's logs folder, the daemon's lines too, and Open logs in the tray opens that folder", async () => {
    const m = machine();
    preparedHome(m);
    const app = start(m);
    await started(app);
    const logs = path.join(m.dir, 'app-logs'); // what the stand-in's app.getPath('logs') answers
    await app.command('tray.menu', { labels: ['Open logs'] });
    expect((await app.waitCall('shell.openPath')).path).toBe(logs);
    const text = readFileSync(path.join(logs, 'dumbwaiter.log'), 'utf8');
    expect(text).toMatch(/\[info\]\s+\(daemon\)/);
    // The home's own log is the command line's: the app's lines are not there.
    expect(existsSync(path.join(m.home, 'logs', 'dumbwaiter.log')) ? readFileSync(path.join(m.home, 'logs', 'dumbwaiter.log'), 'utf8') : '').not.toMatch(/\(daemon\)/);
  });

  it('a click on the tray icon opens the main window', async () => {
    const m = machine();
    preparedHome(m); // not a first run: no window yet
    const app = start(m);
    await started(app);
    expect(app.calls('BrowserWindow.new')).toEqual([]);
    await app.command('tray.click');
    const load = await app.waitCall('BrowserWindow.loadURL');
    expect(load.url).toBe(APP_PAGE);
    await app.waitCall('BrowserWindow.show', (c) => c.id === load.id);
  });

  it('asks for approval with a notification and the approval window; approving there really runs it', async () => {
    const m = machine();
    const key = preparedHome(m);
    const app = start(m);
    await started(app);

    submit(m, key, 'dep-1', 'deploy', { target: 'staging' });
    const shown = await app.waitCall('Notification.show');
    const note = app.last('Notification.new', (c) => c.id === shown.id)!;
    expect(note.options).toMatchObject({
      title: 'Approve deploy?',
      body: expect.stringContaining('agent-one: /bin/sh -c'),
      actions: [
        { type: 'button', text: 'Approve' },
        { type: 'button', text: 'Deny' },
      ],
    });
    const cwd = (await waitResult(m, 'dep-1', ['awaiting_approval'])).approval!.cwd;
    // The approval window: on top, at dep-1, shown without taking the focus.
    const win = await app.waitCall('BrowserWindow.new');
    expect(win.options).toMatchObject({ alwaysOnTop: true, show: false, webPreferences: { sandbox: true, contextIsolation: true } });
    expect((await app.waitCall('BrowserWindow.loadURL', (c) => c.id === win.id)).url).toBe('app://dumbwaiter/approval.html#dep-1');
    await app.waitCall('BrowserWindow.showInactive', (c) => c.id === win.id);
    expect(app.calls('BrowserWindow.show')).toEqual([]);
    expect(app.calls('BrowserWindow.focus')).toEqual([]);
    const waiting = await waitTray(app, 'the approval', (t) => t.icon === 'approval.png');
    expect(waiting.tooltip).toBe('Dumbwaiter: 1 waiting for approval');
    expect(item(waiting.menu, 'Waiting for approval (1)')?.enabled).toBe(false);
    // Short enough to show whole: the command and folder above Approve, in the menu as in the notification.
    expect(item(waiting.menu, 'deploy for agent-one')?.submenu?.map((i) => i.label)).toEqual([`Command: /bin/sh -c 'echo deployed "$0"' staging`, `Folder: ${cwd}`, '', 'Approve', 'Deny']);
    expect((note.options as { body: string }).body).toBe(`agent-one: /bin/sh -c 'echo deployed "$0"' staging\nin ${cwd}`);
    writeShown('single-short', note.options as { title: string; body: string }, waiting.menu);

    // Approve from the notification's button: the daemon runs it.
    await app.command('notification.action', { id: shown.id, index: 0 });
    const done = await waitResult(m, 'dep-1', ['succeeded']);
    expect(done.stdout).toBe('deployed staging\n');
    expect(done.approval?.decided_by).toBe('app');
    // Among the recent runs, though it started and ended between two of the app's polls (the pass that
    // sees it leave the approvals may come before the one that sees it finished).
    const after = await waitTray(app, 'nothing waiting, and a recent run', (t) => t.icon === 'idle.png' && !item(t.menu, 'deploy for agent-one') && item(t.menu, 'Recent runs')?.enabled === true);
    expect(item(after.menu, 'Recent runs')?.submenu?.map((i) => i.label)).toEqual(['deploy: succeeded']);

    // A click on the next one's notification brings the approval window to it; approve from the tray.
    let before = app.calls().at(-1)!.seq;
    submit(m, key, 'dep-2', 'deploy', { target: 'production' });
    const second = await app.waitCall('Notification.show', () => true, before);
    await waitTray(app, 'the second approval', (t) => !!item(t.menu, 'deploy for agent-one'));
    before = app.calls().at(-1)!.seq;
    await app.command('notification.click', { id: second.id });
    const navigate = app.calls('webContents.send').find((c) => c.seq > before && c.channel === `${IPC_PREFIX}event:app.navigate`);
    expect(navigate).toMatchObject({ window: win.id, args: [{ route: 'dep-2' }] });
    expect(app.calls('BrowserWindow.show').filter((c) => c.seq > before).map((c) => c.id)).toEqual([win.id]);
    await app.command('tray.menu', { labels: ['deploy for agent-one', 'Approve'] });
    expect((await waitResult(m, 'dep-2', ['succeeded'])).stdout).toBe('deployed production\n');
    before = app.calls().at(-1)!.seq;
    submit(m, key, 'dep-3', 'deploy', { target: 'production' });
    const third = await app.waitCall('Notification.show', () => true, before);
    await app.command('notification.action', { id: third.id, index: 1 });
    expect((await waitResult(m, 'dep-3', ['denied'])).error?.code).toBe('denied');
    expect(app.calls('BrowserWindow.new')).toHaveLength(1); // the approval window stayed and was reused

    // Closing the approval window, the app's last window, leaves the tray app running.
    await app.command('window.close', { id: win.id });
    await app.waitCall('BrowserWindow.emitted', (c) => c.id === win.id && c.event === 'close' && c.defaultPrevented === false);
    expect(await app.command('ping')).toBe('pong');
    expect(app.calls('app.quit')).toEqual([]);
    expect(app.running).toBe(true);
  });

  /** What the notification for `id` offered, once it is shown, and the tray's entry for it. */
  async function asked(app: AppProcess, entry: string, after = 0) {
    const shown = await app.waitCall('Notification.show', () => true, after);
    const note = app.last('Notification.new', (c) => c.id === shown.id)!.options as { title: string; body: string; actions: { type: string; text: string }[] };
    const tray = await waitTray(app, entry, (t) => !!item(t.menu, entry));
    return { id: shown.id as number, note, tray, submenu: item(tray.menu, entry)!.submenu!.map((i) => i.label) };
  }

  /** The approval window is brought up, focused, at request `id` (the card), after `after`. */
  async function cardShown(app: AppProcess, id: string, after: number): Promise<void> {
    const nav = await app.waitCall('webContents.send', (c) => c.channel === `${IPC_PREFIX}event:app.navigate`, after);
    expect(nav.args).toEqual([{ route: id }]);
    await app.waitCall('BrowserWindow.show', (c) => c.id === nav.window, after);
  }

  const stateOf = (m: Machine, id: string) => withService(m.home, undefined, (svc) => svc.requests.get(id)?.state);

  /** A prepared machine with the app started on it. */
  async function running() {
    const m = machine();
    const key = preparedHome(m);
    const app = start(m);
    await started(app);
    return { m, key, app };
  }

  it('a plan of 50 steps is approved neither from its notification nor from the tray: both open its card', async () => {
    const { m, key, app } = await running();
    const steps = Array.from({ length: 50 }, (_, i) => ({ op: 'deploy', args: { target: i % 2 ? 'production' : 'staging' } }));
    writeQueueFile(m.spool, 'plan-50.json', envelope(key, 'plan-50', 'dumbwaiter.plan', { steps }, { expiresAt: new Date(Date.now() + 3600_000).toISOString(), intent: 'ship 1.2' }));
    const { id, note, tray, submenu } = await asked(app, 'dumbwaiter.plan for agent-one');
    writeShown('plan-50', note, tray.menu);
    await app.waitCall('BrowserWindow.loadURL', (c) => c.url === 'app://dumbwaiter/approval.html#plan-50');

    // The notification's first button (Approve, before) brings up its card and approves nothing.
    let before = app.calls().at(-1)!.seq;
    await app.command('notification.action', { id, index: 0 });
    expect(stateOf(m, 'plan-50')).toBe('awaiting_approval');
    await cardShown(app, 'plan-50', before);
    expect(note.title).toBe('Approve a plan of 50 steps?');
    expect(note.body).toBe('agent-one asks to run a plan of 50 steps.\nOnce approved, its steps run later without asking: open the card to see all of it before you decide.');
    expect(note.actions.map((a) => a.text)).toEqual(['Open the card…', 'Deny']);
    // The tray's entry says why it is not there, and brings up the card.
    expect(submenu).toEqual(['Once approved, its steps run later without asking', 'Open the card…', 'Deny']);
    before = app.calls().at(-1)!.seq;
    await app.command('tray.menu', { labels: ['dumbwaiter.plan for agent-one', 'Open the card…'] });
    await cardShown(app, 'plan-50', before);
    // An Approve as a stale or forged item would carry it is decided again when done: the card again.
    before = app.calls().at(-1)!.seq;
    await app.command('tray.menu', { labels: ['dumbwaiter.plan for agent-one', 'Open the card…'], asId: 'approve:plan-50' });
    await cardShown(app, 'plan-50', before);
    await app.command('tray.menu', { labels: ['dumbwaiter.plan for agent-one', 'Open the card…'], asId: 'approve-30m:plan-50' });
    expect(stateOf(m, 'plan-50')).toBe('awaiting_approval');
    expect(withService(m.home, undefined, (svc) => svc.verdicts.grants(true))).toEqual([]);

    // Its first step, sent as a step of the plan, still waits for a human.
    writeQueueFile(m.spool, 'step-1.json', envelope(key, 'step-1', 'deploy', { target: 'staging' }, { extra: { plan_id: 'plan-50' } }));
    await waitResult(m, 'step-1', ['awaiting_approval']);
  });

  it.each([
    ['argv-40', 'words', { words: ['w', ...Array.from({ length: 39 }, (_, i) => `a${i}`)] }, 'Its command is too long to show here'],
    ['element-300', 'words', { words: ['x'.repeat(300)] }, 'Its command is too long to show here'],
    ['element-multiline', 'words', { words: ['one\ntwo'] }, 'Its command or folder has characters other than plain ASCII'],
    ['environment', 'ssh-env', {}, 'It sets 1 environment variable'],
  ])('a request that does not fit whole (%s) opens its card from its notification and the tray', async (name, op, args, why) => {
    const { m, key, app } = await running();
    submit(m, key, 'long-1', op, args);
    const entry = `${op} for agent-one`;
    const { id, note, tray, submenu } = await asked(app, entry);
    writeShown(name, note, tray.menu);
    await app.waitCall('BrowserWindow.loadURL', (c) => c.url === 'app://dumbwaiter/approval.html#long-1');
    let before = app.calls().at(-1)!.seq;
    await app.command('notification.action', { id, index: 0 });
    expect(stateOf(m, 'long-1')).toBe('awaiting_approval');
    await cardShown(app, 'long-1', before);
    expect(note.actions.map((a) => a.text)).toEqual(['Open the card…', 'Deny']);
    // Never a command cut short, nor an environment's value (it may be a secret).
    expect(JSON.stringify([note, tray])).not.toMatch(/\/bin\/|ProxyCommand/);
    expect(submenu).toEqual([why, 'Open the card…', 'Deny']);
    before = app.calls().at(-1)!.seq;
    await app.command('tray.menu', { labels: [entry, 'Open the card…'], asId: 'approve:long-1' });
    await cardShown(app, 'long-1', before);
    expect(stateOf(m, 'long-1')).toBe('awaiting_approval');
  });

  it('the tray never approves for a while: no such item, and its old id grants nothing', async () => {
    const { m, key, app } = await running();
    submit(m, key, 'dep-a', 'deploy', { target: 'staging' });
    const { tray, submenu } = await asked(app, 'deploy for agent-one');
    writeShown('no-approve-for-a-while', null, tray.menu);
    await expect(app.command('tray.menu', { labels: ['deploy for agent-one', 'Approve for 30 minutes'] })).rejects.toThrow('no menu item');
    expect(JSON.stringify(tray.menu)).not.toMatch(/30 minutes|for a while/);
    expect(submenu.slice(-2)).toEqual(['Approve', 'Deny']);
    // What an item does is the typed action it carries, never an id read back: the old item's id put on
    // Approve changes nothing, it approves this one request once and makes no grant.
    await app.command('tray.menu', { labels: ['deploy for agent-one', 'Approve'], asId: 'approve-30m:dep-a' });
    expect((await waitResult(m, 'dep-a', ['succeeded'])).stdout).toBe('deployed staging\n');
    expect(withService(m.home, undefined, (svc) => svc.verdicts.grants(true))).toEqual([]);
    // A later call with other arguments still asks.
    submit(m, key, 'dep-b', 'deploy', { target: 'production' });
    await waitResult(m, 'dep-b', ['awaiting_approval']);
  });

  it('the approval window is pinned to its page, and its few channels follow the window, not the URL its page claims', async () => {
    const m = machine();
    const key = preparedHome(m);
    const app = start(m);
    await started(app);
    submit(m, key, 'pin-1', 'deploy', { target: 'staging' });
    const win = await app.waitCall('BrowserWindow.new');
    await app.waitCall('BrowserWindow.loadURL', (c) => c.id === win.id);
    // Every navigation is stopped, to the main page of our own origin too.
    for (const url of [APP_PAGE, `${APP_PAGE}#/keys`, 'app://dumbwaiter/approval.html#other', 'https://example.com/']) {
      expect(await app.command('webContents.navigate', { id: win.id, url }), url).toEqual({ prevented: true });
    }
    // Were its page at index.html anyway, the window still gets only the approval window's channels.
    const invoke = (channel: string, url: string, args: unknown[] = []) => app.command('ipc.invoke', { channel: IPC_PREFIX + channel, url, id: win.id, args });
    await expect(invoke('keys.list', `${APP_PAGE}#/keys`)).rejects.toThrow('refused');
    await expect(invoke('allowlist.read', APP_PAGE)).rejects.toThrow('refused');
    await expect(invoke('spools.add', APP_PAGE, [{ name: 'elsewhere', dir: path.join(m.dir, 'elsewhere') }])).rejects.toThrow('refused');
    expect(existsSync(path.join(m.dir, 'elsewhere'))).toBe(false);
    expect((await invoke('approvals.list', 'app://dumbwaiter/approval.html#pin-1')) as { id: string }[]).toMatchObject([{ id: 'pin-1' }]);
    // And the app answers the sandbox right after: approving from the tray runs it.
    await waitTray(app, 'the approval', (t) => !!item(t.menu, 'deploy for agent-one'));
    await app.command('tray.menu', { labels: ['deploy for agent-one', 'Approve'] });
    expect((await waitResult(m, 'pin-1', ['succeeded'])).stdout).toBe('deployed staging\n');
  });

  it('a second instance quits at once; the first shows its main window again', async () => {
    const m = machine();
    const first = start(m);
    const { id } = await first.waitCall('BrowserWindow.show'); // the first-run window
    await started(first);
    // Closing the window hides it to the tray; the app goes on.
    await first.command('window.close', { id });
    expect(first.last('BrowserWindow.emitted', (c) => c.event === 'close')?.defaultPrevented).toBe(true);
    await first.waitCall('BrowserWindow.hide', (c) => c.id === id);

    const second = start(m, { secondInstance: true });
    expect(await second.exit()).toEqual({ code: 0, signal: null });
    expect(apis(second.calls())).toEqual([
      'protocol.registerSchemesAsPrivileged',
      'app.requestSingleInstanceLock',
      'app.quit',
      'app.emitted', // before-quit
      'app.emitted', // will-quit
      'app.shutdown',
      'process.exit',
    ]);
    expect(readHolder(homePaths(m.home).lockInfo)?.pid).toBe(first.pid);

    const before = first.calls().at(-1)!.seq;
    await first.command('second-instance', { argv: ['dumbwaiter-desktop'] });
    await first.waitCall('BrowserWindow.show', (c) => c.id === id, before);
    await first.waitCall('BrowserWindow.focus', (c) => c.id === id, before);
    expect(first.calls('BrowserWindow.new')).toHaveLength(1);
  });

  it('quits from the tray: the daemon stops and lets go of its lock, the tray goes, the process ends with 0', async () => {
    const m = machine();
    const key = preparedHome(m);
    const app = start(m);
    await started(app);
    submit(m, key, 'hi-1', 'hello', { name: 'there' });
    expect((await waitResult(m, 'hi-1', ['succeeded'])).stdout).toBe('hello there\n');
    // A second start of the app, with no window open: the main window opens.
    await app.command('second-instance');
    expect((await app.waitCall('BrowserWindow.loadURL')).url).toBe(APP_PAGE);

    await app.command('tray.menu', { labels: ['Quit Dumbwaiter'] });
    expect(await app.exit()).toEqual({ code: 0, signal: null });
    const quit = app.last('app.emitted', (c) => c.event === 'before-quit')!;
    expect(quit.defaultPrevented).toBe(true); // held until the daemon has stopped
    const destroyed = seqOf(app, 'Tray.destroy');
    expect(destroyed).toBeGreaterThan(quit.seq);
    expect(app.last('app.exit')).toMatchObject({ code: 0 });
    expect(seqOf(app, 'app.exit')).toBeGreaterThan(destroyed);

    expect(isLocked(homePaths(m.home).lock)).toBe(false);
    expect(existsSync(homePaths(m.home).lockInfo)).toBe(false);
    expect(withService(m.home, undefined, (svc) => svc.audit.search({ kind: 'daemon_stopped', limit: 10 })).length).toBe(1);
    // Nothing left behind: not the app, not the process group of its run.
    const pid = withService(m.home, undefined, (svc) => svc.requests.get('hi-1')?.pid);
    expect(pid).toBeGreaterThan(0);
    await eventually('the run to be gone', () => (groupRunning(pid!) ? undefined : true)); // its last child may take a moment
    expect(alive(app.pid)).toBe(false);
  });

  it('quits on SIGTERM the same clean way, and a second Quit meanwhile ends the running work now, not the app', async () => {
    const m = machine();
    const key = preparedHome(m);
    // A grace far longer than the test may take: only the second Quit can end the stop in time.
    const settings = homePaths(m.home).settings;
    writeFileSync(settings, JSON.stringify({ ...JSON.parse(readFileSync(settings, 'utf8')), shutdown_grace_s: 600 }));
    writeFileSync(m.hold, ''); // the run goes on until the stop ends it
    const app = start(m);
    await started(app);
    submit(m, key, 'held-1', 'wait');
    await waitResult(m, 'held-1', ['running']);

    process.kill(app.pid, 'SIGTERM');
    await app.waitCall('app.emitted', (c) => c.event === 'before-quit');
    await app.command('quit'); // a second click on Quit while the daemon gives the run its grace
    expect(app.calls('app.emitted').filter((c) => c.event === 'before-quit').map((c) => c.defaultPrevented)).toEqual([true, true]);
    expect(await app.exit()).toEqual({ code: 0, signal: null });
    expect(app.calls('app.shutdown')).toEqual([]); // ended by app.exit(0) once stopped, not by Electron's own quit
    expect(seqOf(app, 'app.exit')).toBeGreaterThan(seqOf(app, 'Tray.destroy'));

    // The daemon stopped: the run's process group is gone and the ledger does not leave it running.
    expect(isLocked(homePaths(m.home).lock)).toBe(false);
    const run = withService(m.home, undefined, (svc) => svc.requests.get('held-1'))!;
    expect(run.state).not.toBe('running');
    await eventually('the run to be gone', () => (groupRunning(run.pid!) ? undefined : true));
  });

  it('a Quit with a run going asks whether to leave it running or stop it; Cancel keeps the app; Leave quits with the run going on, and the next start records it as it ended', async () => {
    const m = machine();
    const key = preparedHome(m);
    writeFileSync(m.hold, ''); // the run goes on until the test lets it end
    const app = start(m);
    await started(app);
    submit(m, key, 'held-2', 'wait');
    await waitResult(m, 'held-2', ['running']);
    const run = () => withService(m.home, undefined, (svc) => svc.requests.get('held-2'))!;
    const pid = await eventually('the run to have its process', () => run().pid ?? undefined);

    // Unscripted, the person cancels: the app and its daemon go on.
    await app.command('tray.menu', { labels: ['Quit Dumbwaiter'] });
    const box = await app.waitCall('dialog.showMessageBox');
    expect(box.owner).toBeNull(); // no page of ours can answer it
    expect(box.options).toMatchObject({
      type: 'question',
      title: 'Quit Dumbwaiter',
      message: '1 run is still going. Quit anyway?',
      detail: 'Leave it running: it goes on, and is recorded when Dumbwaiter starts again.\n\nStop it: it gets up to 2 s to finish, then is ended and recorded as uncertain.',
      buttons: ['Leave 1 run running', 'Stop it', 'Cancel'],
      defaultId: 1, // runs_on_stop: stop
      cancelId: 2,
    });
    expect((await app.waitCall('dialog.answered')).response).toBe(2);
    await app.command('ping');
    expect(app.calls('app.exit')).toEqual([]);
    expect(isLocked(homePaths(m.home).lock)).toBe(true);
    expect(run().state).toBe('running');

    // Leave, with a second Quit while the question is on screen: one question, and its answer decides.
    await app.command('dialog.answer', { response: 'hold' });
    await app.command('tray.menu', { labels: ['Quit Dumbwaiter'] });
    await app.waitCall('dialog.showMessageBox', () => true, box.seq);
    await app.command('quit');
    await app.command('dialog.respond', { response: 0 });
    expect(await app.exit()).toEqual({ code: 0, signal: null });
    expect(app.calls('dialog.showMessageBox')).toHaveLength(2);
    expect(isLocked(homePaths(m.home).lock)).toBe(false);
    expect(groupRunning(pid)).toBe(true);
    expect(run()).toMatchObject({ state: 'running', orphaned: 0 });
    const stops = withService(m.home, undefined, (svc) => svc.audit.search({ kind: 'daemon_stopped', limit: 10 }));
    expect(stops.map((e) => e.message)).toEqual(['daemon stopped cleanly, leaving 1 run running (recorded when the host starts again)']);

    // The next start finds it in the app's run keeper, still running, and records it as it ended.
    const again = start(m);
    await started(again);
    rmSync(m.hold);
    expect(await waitResult(m, 'held-2', ['uncertain', 'succeeded'])).toMatchObject({ state: 'succeeded', exit_code: 0 });
    expect(run().orphaned).toBe(0);
    // With no run going, Quit asks nothing.
    await again.command('tray.menu', { labels: ['Quit Dumbwaiter'] });
    expect(await again.exit()).toEqual({ code: 0, signal: null });
    expect(again.calls('dialog.showMessageBox')).toEqual([]);
  });

  it('with runs_on_stop leave, the question offers Leave first, and Stop still ends the run; a signal asks nothing and follows the setting', async () => {
    const m = machine();
    const key = preparedHome(m);
    const settings = homePaths(m.home).settings;
    writeFileSync(settings, JSON.stringify({ ...JSON.parse(readFileSync(settings, 'utf8')), runs_on_stop: 'leave' }));
    writeFileSync(m.hold, '');
    const app = start(m);
    await started(app);
    submit(m, key, 'held-3', 'wait');
    submit(m, key, 'held-4', 'wait');
    await waitResult(m, 'held-3', ['running']);
    await waitResult(m, 'held-4', ['running']);
    const run = (id: string) => withService(m.home, undefined, (svc) => svc.requests.get(id))!;

    await app.command('dialog.answer', { response: 1 });
    await app.command('tray.menu', { labels: ['Quit Dumbwaiter'] });
    const box = await app.waitCall('dialog.showMessageBox');
    expect(box.options).toMatchObject({ message: '2 runs are still going. Quit anyway?', buttons: ['Leave 2 runs running', 'Stop them', 'Cancel'], defaultId: 0 });
    expect((box.options as { detail: string }).detail).toBe('Leave them running: they go on, and are recorded when Dumbwaiter starts again.\n\nStop them: they get up to 2 s to finish, then are ended and recorded as uncertain.');
    expect(await app.exit()).toEqual({ code: 0, signal: null });
    for (const id of ['held-3', 'held-4']) {
      expect(run(id)).toMatchObject({ state: 'uncertain', error_code: 'interrupted' });
      await eventually(`${id} to be gone`, () => (groupRunning(run(id).pid!) ? undefined : true));
    }

    submit(m, key, 'held-5', 'wait');
    const again = start(m);
    await started(again);
    await waitResult(m, 'held-5', ['running']);
    const pid = await eventually('the run to have its process', () => run('held-5').pid ?? undefined);
    process.kill(again.pid, 'SIGTERM');
    expect(await again.exit()).toEqual({ code: 0, signal: null });
    expect(again.calls('dialog.showMessageBox')).toEqual([]);
    expect(groupRunning(pid)).toBe(true);
    expect(run('held-5').state).toBe('running');
  });

  it('a start that fails says why and ends the app, instead of leaving it running without a tray', async () => {
    const m = machine();
    mkdirSync(m.home, { recursive: true });
    writeFileSync(homePaths(m.home).settings, '{ not json');
    const app = start(m);
    const box = await app.waitCall('dialog.showErrorBox');
    expect(box).toMatchObject({ title: 'Dumbwaiter could not start', content: expect.stringContaining('is not valid JSON') });
    expect(await app.exit()).toEqual({ code: 1, signal: null });
    expect(app.calls('Tray.new')).toEqual([]);
  });
});
