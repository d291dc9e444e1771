// The desktop app's main process: one instance, the daemon in this process, the tray, notifications,
// windows and IPC. A thin layer: every decision is made by the Electron-free core.
import { app, dialog } from 'electron';
import path from 'node:path';
import { Daemon } from '../core/daemon/daemon';
import { Host } from '../core/host/host';
import { HostCore } from '../core/hostCore';
import { defaultSpoolDir, homePaths, resolveHomeDir } from '../core/home';
import { scopedLogger } from '../core/log';
import { openLogsFolder, startLogging } from './logging';
import { firstRunSetup } from '../core/app/firstRun';
import { StatusFeed, followHome, type FeedPass } from '../core/app/statusFeed';
import { addRecentRuns, trayCommand, type RecentRun } from '../core/app/trayState';
import { approveInPlace } from '../core/app/approvalInPlace';
import { UserError } from '../core/errors';
import { registerAppScheme, setupAppProtocol } from './protocol';
import { setupSecurity } from './security';
import { chooseSealer } from './secrets';
import { Windows } from './windows';
import { AppTray } from './tray';
import { notifyApproval } from './notifications';
import { sendEvent, setupIpc } from './ipc';
import { appKeeper, keeperArgs, serveAsKeeper } from './keeperProcess';
import { Keeper } from '../core/exec/keeper';
import type { Settings } from '../core/settings';
import { askQuitWithRuns } from './quitQuestion';

const log = scopedLogger('app');
/** The status is pushed on each change; this rare look catches what says nothing, such as the
 *  command line's daemon killed (its lock goes, its daemon.json stays). */
const STATUS_RECHECK_MS = 30_000;

const asKeeper = keeperArgs();
if (asKeeper) {
  serveAsKeeper(asKeeper);
} else {
  registerAppScheme();
  if (!app.requestSingleInstanceLock()) app.quit();
  else app.whenReady().then(start).catch((e: unknown) => fatal(e));
}

function fatal(e: unknown): void {
  log.error(e);
  dialog.showErrorBox('Dumbwaiter could not start', e instanceof Error ? e.message : String(e));
  app.exit(1);
}

async function start(): Promise<void> {
  startLogging();
  const homeDir = resolveHomeDir();
  setupSecurity();
  setupAppProtocol(path.join(__dirname, '..', 'renderer'));
  const setup = firstRunSetup(homeDir, defaultSpoolDir());
  const { sealer, warning } = chooseSealer();

  // One core for the home: the daemon and the service share it, so the service's changes reach the
  // daemon directly. The command line's daemon may already run for this home: then the app shows and
  // decides, and that daemon acts on its decisions (told through the wake file), but the app does not
  // start a second one.
  const core = HostCore.open(homeDir, sealer);
  let daemon: Daemon | null = null;
  try {
    daemon = await Daemon.start({ homeDir, core, command: 'the Dumbwaiter desktop app', consoleLog: 'warn', starter: new Keeper(homePaths(homeDir).keeper, appKeeper()) });
  } catch (e) {
    if (!(e instanceof UserError) || e.code !== 'home_locked') throw e;
    log.warn(e.message);
  }
  const host = new Host(core);
  host.keys.seal('app');
  if (warning) log.warn(warning);

  const windows = new Windows({ preload: path.join(__dirname, '..', 'preload', 'index.cjs') });
  setupIpc(host, windows);
  const iconsDir = app.isPackaged ? path.join(process.resourcesPath, 'tray') : path.join(app.getAppPath(), 'build', 'icons', 'tray');
  const decide = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      log.warn((e as Error).message);
    }
  };
  // Approve in place is checked again on the request as it waits now: what the notification or the
  // menu showed may be stale, and what does not fit in them goes to its card instead.
  const approvals = {
    approve: (id: string) => {
      const now = approveInPlace(id, host.verdicts.pending());
      if (now === 'approve') decide(() => host.verdicts.approve(id, 'app'));
      else if (now === 'card') windows.showApproval(id, true);
    },
    deny: (id: string) => decide(() => host.verdicts.deny(id, 'app', 'denied from a notification')),
    open: (id: string) => windows.showApproval(id, true),
  };
  const tray = new AppTray(iconsDir, (action) => {
    const c = trayCommand(action, host.verdicts.pending());
    if (c.do === 'open') windows.showMain();
    else if (c.do === 'approve') decide(() => host.verdicts.approve(c.id, 'app'));
    else if (c.do === 'card') approvals.open(c.id);
    else if (c.do === 'deny') approvals.deny(c.id);
    else if (c.do === 'pause' || c.do === 'resume') host.settings.setPaused(c.do === 'pause', 'app');
    else if (c.do === 'request') windows.showMain(`/requests/${c.id}`);
    else if (c.do === 'logs') void openLogsFolder().then((problem) => problem && log.warn(`the logs folder could not be opened: ${problem}`));
    else if (c.do === 'quit') app.quit();
    else log.warn('a tray menu item chosen does nothing now (its request was decided, or the item is gone)');
  });

  let recent: RecentRun[] = [];
  let loginItem: boolean | null = null;
  const show = ({ status, changes }: FeedPass) => {
    recent = addRecentRuns(recent, changes.finished);
    tray.update(status, recent);
    const settings = host.settings.get();
    for (const p of changes.newApprovals) {
      if (settings.notifications) notifyApproval(p, approvals, status.spools.length > 1);
      windows.showApproval(p.id);
    }
    if (loginItem !== settings.start_at_login) {
      loginItem = settings.start_at_login;
      app.setLoginItemSettings({ openAtLogin: loginItem });
    }
  };
  const feed = new StatusFeed(host, (event, payload) => sendEvent(windows.all(), event, payload), (pass) => decide(() => show(pass)));
  // Our daemon says after each change, the other processes' included (their wake); the command
  // line's daemon, when it runs instead, is followed through the home folder.
  const follow = daemon ? { close: daemon.onChange(() => feed.changed()) } : followHome(host.core.home, () => feed.changed());
  const recheck = setInterval(() => feed.changed(), STATUS_RECHECK_MS);
  decide(() => show(feed.poll()));

  app.on('second-instance', () => windows.showMain());
  app.on('window-all-closed', () => {
    /* a tray app keeps running without windows */
  });
  let quitting = false;
  /** The question of a Quit with runs going is on screen. */
  let asking = false;
  /** Asked by a signal: nobody may be there to answer. */
  let signalled = false;
  /** Stops the daemon (`runs`: what becomes of the runs going; by default the runs_on_stop setting), then ends the app. */
  const quit = (runs?: Settings['runs_on_stop']) => {
    quitting = true;
    windows.quitting = true;
    clearInterval(recheck);
    follow?.close();
    feed.close();
    void (daemon?.stop({ runs }) ?? Promise.resolve()).finally(() => {
      core.close();
      tray.destroy();
      app.exit(0);
    });
  };
  app.on('before-quit', (event) => {
    // Held until the daemon has stopped, however often Quit is asked for meanwhile: a second Quit ends
    // the running work's grace period (work left running stays so), never the process with the work
    // left behind. app.exit() above ends it without this event.
    event.preventDefault();
    if (quitting) return daemon?.hurry();
    // A log-out, a service manager or `kill`: the setting decides, as for the headless daemon.
    if (signalled) return quit();
    if (asking) return; // its answer decides
    const running = daemon ? core.requests.inState('running').length : 0;
    if (!daemon || running === 0) return quit();
    asking = true;
    void askQuitWithRuns(running, daemon.settings)
      .then(
        (runs) => runs && !quitting && quit(runs), // null: Cancel, the app goes on
        (e: unknown) => {
          log.error(`the question before quitting could not be asked (${(e as Error).message}): quitting as runs_on_stop says`);
          if (!quitting) quit();
        },
      )
      .finally(() => (asking = false));
  });

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => {
      signalled = true;
      app.quit();
    });
  }

  if (setup.firstRun) windows.showMain('/first-run');
  if (warning && setup.firstRun) void dialog.showMessageBox({ type: 'warning', message: 'Key secrets are not encrypted', detail: warning });
}
