// The host's status, kept current by the state.changed events main sends (and fetched once at start).
import { create } from 'zustand';
import type { StatusView } from '../../shared/ipc/views';
import { api, errorText } from '../api';

interface StatusState {
  status: StatusView | null;
  error: string | null;
}

const useStatusStore = create<StatusState>(() => ({ status: null, error: null }));

let started = false;
/** Loads the status and follows its changes; safe to call from every page that needs it. */
export function startStatus(): void {
  if (started) return;
  started = true;
  api.state.onChanged((status) => useStatusStore.setState({ status, error: null }));
  void refreshStatus();
}

export async function refreshStatus(): Promise<void> {
  try {
    useStatusStore.setState({ status: await api.status.get(), error: null });
  } catch (e) {
    useStatusStore.setState({ error: errorText(e) });
  }
}

export function useStatus<T>(select: (s: StatusView) => T): T | undefined {
  return useStatusStore((s) => (s.status ? select(s.status) : undefined));
}
export const useStatusError = (): string | null => useStatusStore((s) => s.error);
