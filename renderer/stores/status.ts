// The host's status, kept current by the state.changed events main sends (and fetched once at start).
import { create } from 'zustand';
import type { StatusView } from '../../shared/ipc/views';
import { api, errorText } from '../api';

interface StatusState {
  status: StatusView | null;
  error: string | null;
  /** Bumped on every change of the host's state: what lists reload on. */
  version: number;
}

const useStatusStore = create<StatusState>(() => ({ status: null, error: null, version: 0 }));

function apply(status: StatusView): void {
  useStatusStore.setState((s) => ({ status, error: null, version: s.version + 1 }));
}

let started = false;
/** Loads the status and follows its changes; safe to call from every page that needs it. */
export function startStatus(): void {
  if (started) return;
  started = true;
  api.state.onChanged(apply);
  void refreshStatus();
}

async function refreshStatus(): Promise<void> {
  const before = useStatusStore.getState().version;
  try {
    const status = await api.status.get();
    // An event that arrived while we asked is newer than this answer.
    if (useStatusStore.getState().version === before) apply(status);
  } catch (e) {
    useStatusStore.setState({ error: errorText(e) });
  }
}

export function useStatus<T>(select: (s: StatusView) => T): T | undefined {
  return useStatusStore((s) => (s.status ? select(s.status) : undefined));
}
export const useStatusError = (): string | null => useStatusStore((s) => s.error);
/** Changes whenever the host's state does: a dependency for lists that must follow it. */
export const useHostVersion = (): number => useStatusStore((s) => s.version);
/** Subscribes to every change of the host's state (for stores that follow it). */
export const onHostChange = (listener: () => void): (() => void) => useStatusStore.subscribe((s, prev) => s.version !== prev.version && listener());
