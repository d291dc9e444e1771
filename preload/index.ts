// Preload (sandboxed): exposes the named API to the renderer, never ipcRenderer itself.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { createApi } from './api';

contextBridge.exposeInMainWorld(
  'dumbwaiter',
  createApi({
    invoke: (channel, arg) => ipcRenderer.invoke(channel, arg),
    on(channel, listener) {
      const wrapped = (_event: IpcRendererEvent, payload: unknown) => listener(payload);
      ipcRenderer.on(channel, wrapped);
      return () => ipcRenderer.removeListener(channel, wrapped);
    },
  }),
);
