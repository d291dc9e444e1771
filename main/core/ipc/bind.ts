// Registers a handler for every channel of the contract on something shaped like Electron's ipcMain.
// Each call is checked: its sender must be one of our own windows, allowed that channel (else it is
// dropped and logged), and its argument must pass the channel's schema. Electron-free, so it is
// tested in Node.
import { z } from 'zod';
import { CHANNEL_NAMES, IPC_PREFIX, ipcContract, type ChannelName } from '../../../shared/ipc/contract';
import { APPROVAL_WINDOW_CHANNELS } from '../../../shared/ipc/channels';
import type { IpcHandlers } from './handlers';
import type { Logger } from '../log';

export interface IpcEventLike {
  /** The web contents that sent the call (Electron's event.sender): which of our windows it is. */
  sender?: { id: number } | null;
  senderFrame?: { url: string } | null;
}

export interface IpcMainLike {
  handle(channel: string, listener: (event: IpcEventLike, ...args: unknown[]) => unknown): void;
}

/** Whether `url` is on the app's own origin. Compared by scheme and host: Node's URL gives custom
 *  schemes an opaque ("null") origin, so comparing `.origin` would match every such URL alike. */
export function isAppUrl(url: string, appOrigin: string): boolean {
  try {
    const u = new URL(url);
    const app = new URL(appOrigin);
    return u.protocol === app.protocol && u.host === app.host && u.host !== '';
  } catch {
    return false;
  }
}

/** Whether this sender may make this call. */
export type SenderCheck = (event: IpcEventLike, channel: ChannelName) => boolean;

/** Which of our windows a web contents is: the main window may call every channel, the approval
 *  window only the few it needs; null for anything else. */
export type WindowRole = 'main' | 'approval';

/**
 * Trusts calls from our own windows only, each window with its own channels. The window is known by
 * the web contents that sent the call, never by the page's URL, which the page itself can change: so
 * a page gone wrong in the approval window cannot reach keys, the allowlist or the files by loading
 * index.html there. The sending frame must still be on our origin.
 */
export function trustWindows(appOrigin: string, roleOf: (webContentsId: number) => WindowRole | null): SenderCheck {
  const approvalWindow = new Set<ChannelName>(APPROVAL_WINDOW_CHANNELS);
  return (event, channel) => {
    const url = event.senderFrame?.url;
    const id = event.sender?.id;
    if (typeof url !== 'string' || !isAppUrl(url, appOrigin) || typeof id !== 'number') return false;
    const role = roleOf(id);
    return role === 'main' || (role === 'approval' && approvalWindow.has(channel));
  };
}

export function bindIpc(ipcMain: IpcMainLike, handlers: IpcHandlers, isTrusted: SenderCheck, log: Logger): void {
  for (const channel of CHANNEL_NAMES) {
    const handler = handlers[channel] as (req: unknown) => unknown;
    if (typeof handler !== 'function') throw new Error(`no handler for IPC channel ${channel}`);
    const schema = ipcContract[channel].request as z.ZodType;
    ipcMain.handle(IPC_PREFIX + channel, async (event, ...args) => {
      if (!isTrusted(event, channel)) {
        log.warn(`dropped ${channel} from an untrusted sender (${event.senderFrame?.url ?? 'no frame'}, web contents ${event.sender?.id ?? 'none'})`);
        throw new Error('refused');
      }
      if (args.length > 1) throw new Error(`${channel} takes one argument`);
      const parsed = schema.safeParse(args[0]);
      if (!parsed.success) {
        log.warn(`refused ${channel}: invalid arguments`);
        throw new Error(`invalid arguments for ${channel}:\n${z.prettifyError(parsed.error)}`);
      }
      return handler(parsed.data);
    });
  }
}

export type { ChannelName };
