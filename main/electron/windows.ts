// The app's windows: the main window (hidden, not closed, to the tray) and the small always-on-top
// approval window. Both sandboxed, context-isolated, without Node, loading only app:// pages.
import { BrowserWindow, screen } from 'electron';
import { APP_ORIGIN } from './constants';
import { sendEvent } from './ipc';
import type { WindowRole } from '../core/ipc/bind';
import { pinToPage } from './security';

export interface WindowPaths {
  preload: string;
}

function secureWindow(paths: WindowPaths, options: Electron.BrowserWindowConstructorOptions): BrowserWindow {
  return new BrowserWindow({
    ...options,
    show: false,
    webPreferences: {
      preload: paths.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      spellcheck: false,
    },
  });
}

export class Windows {
  private main: BrowserWindow | null = null;
  private approval: BrowserWindow | null = null;
  quitting = false;

  constructor(private readonly paths: WindowPaths) {}

  all(): BrowserWindow[] {
    return [this.main, this.approval].filter((w): w is BrowserWindow => w !== null && !w.isDestroyed());
  }

  /** Which of our windows sent an IPC call (by its web contents): what decides its channels. */
  roleOf(webContentsId: number): WindowRole | null {
    const is = (w: BrowserWindow | null) => w !== null && !w.isDestroyed() && w.webContents.id === webContentsId;
    if (is(this.main)) return 'main';
    if (is(this.approval)) return 'approval';
    return null;
  }

  showMain(route = ''): void {
    if (!this.main || this.main.isDestroyed()) {
      this.main = secureWindow(this.paths, { width: 1100, height: 760, minWidth: 720, minHeight: 480, title: 'Dumbwaiter' });
      this.main.on('close', (e) => {
        if (!this.quitting) {
          e.preventDefault(); // a tray app: closing the window keeps it running
          this.main?.hide();
        }
      });
      void this.main.loadURL(`${APP_ORIGIN}/index.html${route ? `#${route}` : ''}`);
      this.main.once('ready-to-show', () => this.main?.show());
    } else {
      // The open page moves itself (and may first ask, e.g. to leave a key not yet saved).
      if (route) sendEvent([this.main], 'app.navigate', { route });
      this.main.show();
      this.main.focus();
    }
  }

  /**
   * The approval window, near the top right of the screen, over everything else, shown without taking
   * the focus (someone typing elsewhere must not decide by accident). An open window is not moved to
   * a new arrival: it says that more are waiting and moves on when its own request is decided.
   * `chosen`: the user picked this request (a notification's click): show it, focused.
   */
  showApproval(id: string, chosen = false): void {
    if (this.approval && !this.approval.isDestroyed()) {
      if (chosen) {
        sendEvent([this.approval], 'app.navigate', { route: id });
        this.approval.show();
      } else {
        this.approval.showInactive();
      }
      return;
    }
    const { workArea } = screen.getPrimaryDisplay();
    this.approval = secureWindow(this.paths, {
      width: 480,
      // Tall enough that an ordinary request's whole card is on screen without scrolling (Approve arms
      // only once all of it was seen), within the screen's work area.
      height: Math.min(540, workArea.height - 40),
      x: workArea.x + workArea.width - 500,
      y: workArea.y + 20,
      alwaysOnTop: true,
      resizable: false,
      minimizable: false,
      fullscreenable: false,
      title: 'Approve a request?',
    });
    this.approval.on('closed', () => (this.approval = null));
    pinToPage(this.approval.webContents); // its channels follow the window, and it shows only its page
    void this.approval.loadURL(`${APP_ORIGIN}/approval.html#${encodeURIComponent(id)}`);
    this.approval.once('ready-to-show', () => (chosen ? this.approval?.show() : this.approval?.showInactive()));
  }
}
