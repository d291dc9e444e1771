// IPC registration: the contract's handlers (Electron-free, in the core) bound to ipcMain, and the
// contract's events sent to our own windows.
import { ipcMain, type BrowserWindow } from 'electron';
import { bindIpc, trustOrigin } from '../core/ipc/bind';
import { createIpcHandlers } from '../core/ipc/handlers';
import type { HostService } from '../core/service';
import { scopedLogger } from '../core/log';
import type { EventName, IpcEvents } from '../../shared/ipc/contract';
import { eventChannel } from '../../preload/api';
import { APP_ORIGIN } from './constants';

export function setupIpc(svc: HostService): void {
  bindIpc(ipcMain, createIpcHandlers(svc, 'app'), trustOrigin(APP_ORIGIN), scopedLogger('ipc'));
}

export function sendEvent<E extends EventName>(windows: BrowserWindow[], event: E, payload: IpcEvents[E]): void {
  for (const w of windows) w.webContents.send(eventChannel(event), payload);
}
