// IPC registration: the contract's handlers (Electron-free, in the core) bound to ipcMain, and the
// contract's events sent to our own windows.
import { BrowserWindow, dialog, ipcMain } from 'electron';
import { openLogsFolder } from './logging';
import { bindIpc, trustWindows, type WindowRole } from '../core/ipc/bind';
import { createIpcHandlers, type AppEdges } from '../core/ipc/handlers';
import type { Host } from '../core/host/host';
import { scopedLogger } from '../core/log';
import type { EventName, IpcEvents } from '../../shared/ipc/contract';
import { eventChannel } from '../../shared/ipc/channels';
import { APP_ORIGIN } from './constants';

/** The OS's own dialogs, attached to the focused window. */
const edges: AppEdges = {
  async pickFolder(title, defaultPath) {
    const options: Electron.OpenDialogOptions = { title, properties: ['openDirectory', 'createDirectory'], ...(defaultPath ? { defaultPath } : {}) };
    const owner = BrowserWindow.getFocusedWindow();
    const r = owner ? await dialog.showOpenDialog(owner, options) : await dialog.showOpenDialog(options);
    return r.canceled ? null : (r.filePaths[0] ?? null);
  },
  async pickSavePath(title, defaultName) {
    const options: Electron.SaveDialogOptions = { title, defaultPath: defaultName, filters: [{ name: 'JSON', extensions: ['json'] }] };
    const owner = BrowserWindow.getFocusedWindow();
    const r = owner ? await dialog.showSaveDialog(owner, options) : await dialog.showSaveDialog(options);
    return r.canceled || !r.filePath ? null : r.filePath;
  },
  async confirm({ title, message, detail, confirmLabel }) {
    const options: Electron.MessageBoxOptions = { type: 'question', title, message, detail, buttons: [confirmLabel, 'Cancel'], defaultId: 1, cancelId: 1, noLink: true };
    const owner = BrowserWindow.getFocusedWindow();
    const r = owner ? await dialog.showMessageBox(owner, options) : await dialog.showMessageBox(options);
    return r.response === 0;
  },
  openLogs: openLogsFolder,
};

/** `windows`: which of our windows a web contents is, to give each its own channels. */
export function setupIpc(host: Host, windows: { roleOf(webContentsId: number): WindowRole | null }): void {
  bindIpc(ipcMain, createIpcHandlers(host, 'app', edges), trustWindows(APP_ORIGIN, (id) => windows.roleOf(id)), scopedLogger('ipc'));
}

export function sendEvent<E extends EventName>(windows: BrowserWindow[], event: E, payload: IpcEvents[E]): void {
  for (const w of windows) w.webContents.send(eventChannel(event), payload);
}
