// The renderer's API, derived from the IPC contract: one small object per domain
// (`api.approvals.approve({...})`), and for each event an `onX` that returns its unsubscribe.
// Built on a transport so that tests drive exactly this code without Electron.
import { CHANNEL_NAMES, EVENT_NAMES, IPC_PREFIX, eventChannel, type ChannelName, type EventName } from '../shared/ipc/channels';
import type { IpcEvents, RequestOf, ResponseOf } from '../shared/ipc/contract';

export interface Transport {
  invoke(channel: string, arg: unknown): Promise<unknown>;
  /** Subscribes to an event channel; returns the unsubscribe. */
  on(channel: string, listener: (payload: unknown) => void): () => void;
}

type Domain<C extends string> = C extends `${infer D}.${string}` ? D : never;
type Method<C extends string> = C extends `${string}.${infer M}` ? M : never;
type Call<C extends ChannelName> = undefined extends RequestOf<C> ? (arg?: RequestOf<C>) => Promise<ResponseOf<C>> : (arg: RequestOf<C>) => Promise<ResponseOf<C>>;
type Subscribe<E extends EventName> = (listener: (payload: IpcEvents[E]) => void) => () => void;

export type DumbwaiterApi = {
  [D in Domain<ChannelName> | Domain<EventName>]: {
    [C in ChannelName as Domain<C> extends D ? Method<C> : never]: Call<C>;
  } & {
    [E in EventName as Domain<E> extends D ? `on${Capitalize<Method<E>>}` : never]: Subscribe<E>;
  };
};

export function createApi(transport: Transport): DumbwaiterApi {
  const api: Record<string, Record<string, unknown>> = {};
  const domain = (d: string) => (api[d] ??= {});
  for (const c of CHANNEL_NAMES) {
    const [d, m] = c.split('.') as [string, string];
    domain(d)[m] = (arg?: unknown) => transport.invoke(IPC_PREFIX + c, arg);
  }
  for (const e of EVENT_NAMES) {
    const [d, m] = e.split('.') as [string, string];
    domain(d)[`on${m[0]!.toUpperCase()}${m.slice(1)}`] = (listener: (p: unknown) => void) => transport.on(eventChannel(e), listener);
  }
  return api as unknown as DumbwaiterApi;
}
