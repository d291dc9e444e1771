// What the test page gets instead of the Electron preload: the very same createApi(), over a transport
// to the test process (an exposed function for calls, a dispatcher the test calls for events).
import { createApi } from '../../preload/api';

declare global {
  interface Window {
    __dwInvoke(channel: string, arg: unknown): Promise<unknown>;
    __dwEmit(channel: string, payload: unknown): void;
  }
}

const listeners = new Map<string, Set<(payload: unknown) => void>>();

window.__dwEmit = (channel, payload) => {
  for (const l of listeners.get(channel) ?? []) l(payload);
};

window.dumbwaiter = createApi({
  // Like ipcRenderer.invoke, the argument crosses a serialisation boundary (structured clone there, JSON here).
  invoke: (channel, arg) => window.__dwInvoke(channel, arg === undefined ? undefined : JSON.parse(JSON.stringify(arg))),
  on(channel, listener) {
    const set = listeners.get(channel) ?? new Set();
    listeners.set(channel, set.add(listener));
    return () => void set.delete(listener);
  },
});
