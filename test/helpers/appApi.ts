// The preload API wired to main's handlers on a service, exactly as the app wires them (minus
// Electron): the registration's sender check and schema validation, calls from the main window.
import { bindIpc, trustWindows, type IpcEventLike } from '../../main/core/ipc/bind';
import { createIpcHandlers, type AppEdges } from '../../main/core/ipc/handlers';
import { createApi, type DumbwaiterApi } from '../../preload/api';
import type { Host } from '../../main/core/host/host';
import { scopedLogger } from '../../main/core/log';

const ORIGIN = 'app://dumbwaiter';
/** Web contents ids of the app's two windows, as the Electron layer tells them apart. */
const MAIN = 1;
const APPROVAL = 2;
const roleOf = (id: number) => (id === MAIN ? 'main' : id === APPROVAL ? 'approval' : null);
const OURS: IpcEventLike = { sender: { id: MAIN }, senderFrame: { url: `${ORIGIN}/index.html` } };

/** `edges` null: no desktop edge at all (headless, or a wiring bug). */
export function connect(svc: Host, edges: AppEdges | null): DumbwaiterApi {
  const registered = new Map<string, (event: IpcEventLike, ...args: unknown[]) => unknown>();
  bindIpc({ handle: (channel, listener) => void registered.set(channel, listener) }, createIpcHandlers(svc, 'app', edges), trustWindows(ORIGIN, roleOf), scopedLogger('app-channels-test'));
  return createApi({
    invoke: async (channel, arg) => registered.get(channel)!(OURS, arg),
    on: () => () => {},
  });
}
