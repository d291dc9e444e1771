// Registers a handler for every channel of the contract on something shaped like Electron's ipcMain.
// Each call is checked: its sender must be one of our own windows (else it is dropped and logged),
// and its argument must pass the channel's schema. Electron-free, so it is tested in Node.
import { z } from 'zod';
import { CHANNEL_NAMES, IPC_PREFIX, ipcContract, type ChannelName } from '../../../shared/ipc/contract';
import { APPROVAL_WINDOW_CHANNELS } from '../../../shared/ipc/channels';
import type { IpcHandlers } from './handlers';
import type { Logger } from '../log';

export interface IpcEventLike {
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

/** Trusts frames whose URL is on our own origin, nothing else; the approval window only with the few
 *  calls it needs, so that a page gone wrong there cannot reach keys, the allowlist or the files. */
export function trustOrigin(appOrigin: string): SenderCheck {
  const approvalWindow = new Set<ChannelName>(APPROVAL_WINDOW_CHANNELS);
  return (event, channel) => {
    const url = event.senderFrame?.url;
    if (typeof url !== 'string' || !isAppUrl(url, appOrigin)) return false;
    return new URL(url).pathname !== '/approval.html' || approvalWindow.has(channel);
  };
}

export function bindIpc(ipcMain: IpcMainLike, handlers: IpcHandlers, isTrusted: SenderCheck, log: Logger): void {
  for (const channel of CHANNEL_NAMES) {
    const handler = handlers[channel] as (req: unknown) => unknown;
    if (typeof handler !== 'function') throw new Error(`no handler for IPC channel ${channel}`);
    const schema = ipcContract[channel].request as z.ZodType;
    ipcMain.handle(IPC_PREFIX + channel, async (event, ...args) => {
      if (!isTrusted(event, channel)) {
        log.warn(`dropped ${channel} from an untrusted sender (${event.senderFrame?.url ?? 'no frame'})`);
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
