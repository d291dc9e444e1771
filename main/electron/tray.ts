// Draws the tray from trayState() (a pure function of the core's status); a chosen item hands back its action.
import { Menu, Tray, nativeImage, type MenuItemConstructorOptions } from 'electron';
import path from 'node:path';
import { trayState, type RecentRun, type TrayAction, type TrayIcon, type TrayMenuItem } from '../core/app/trayState';
import type { StatusView } from '../../shared/ipc/views';
import { visible } from '../../shared/text/visible';

export type OnTrayAction = (action: TrayAction) => void;

function iconFile(dir: string, icon: TrayIcon): string {
  // macOS draws template images in the menu bar's own colours; elsewhere the coloured ones.
  return path.join(dir, process.platform === 'darwin' ? `${icon}Template.png` : `${icon}.png`);
}

function toMenu(items: TrayMenuItem[], act: OnTrayAction): MenuItemConstructorOptions[] {
  return items.map((i) =>
    i.separator
      ? { type: 'separator' }
      : {
          label: visible(i.label), // may name a request or an operation the sandbox wrote
          enabled: i.enabled ?? true,
          // The item's own action, typed; what it comes to is decided on dispatch (trayCommand).
          ...(i.submenu ? { submenu: toMenu(i.submenu, act) } : i.action ? { click: () => act(i.action!) } : {}),
        },
  );
}

export class AppTray {
  private readonly tray: Tray;
  private shown = '';

  constructor(
    private readonly iconsDir: string,
    private readonly act: OnTrayAction,
  ) {
    this.tray = new Tray(nativeImage.createFromPath(iconFile(iconsDir, 'idle')));
    this.tray.on('click', () => act({ do: 'open' }));
  }

  update(status: StatusView, recent: RecentRun[]): void {
    const state = trayState(status, recent);
    const key = JSON.stringify(state);
    if (key === this.shown) return;
    this.shown = key;
    this.tray.setImage(nativeImage.createFromPath(iconFile(this.iconsDir, state.icon)));
    this.tray.setToolTip(visible(state.tooltip));
    this.tray.setContextMenu(Menu.buildFromTemplate(toMenu(state.menu, this.act)));
  }

  destroy(): void {
    this.tray.destroy();
  }
}
