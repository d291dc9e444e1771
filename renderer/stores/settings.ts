// The host's settings as Settings and Spend show them: read again when the host's state changes or the
// window comes back into view (a change made from the command line), and replaced by the host's own
// answer after a save (what it stored, which may differ from what was typed: whole seconds, say).
import { create } from 'zustand';
import type { SettingsView } from '../../shared/ipc/views';
import { api, errorText } from '../api';
import { onHostChange } from './status';

const useSettingsStore = create<{ settings: SettingsView | undefined; error: string | null }>(() => ({ settings: undefined, error: null }));

let asked = 0;
/** Reads the settings; an answer overtaken by a newer read or a save is dropped. Returns what it read. */
export async function refreshSettings(): Promise<SettingsView> {
  const mine = ++asked;
  try {
    const settings = await api.settings.get();
    if (mine === asked) useSettingsStore.setState({ settings, error: null });
    return settings;
  } catch (e) {
    if (mine === asked) useSettingsStore.setState({ error: errorText(e) });
    throw e;
  }
}

/** Saves one setting; the host's answer is shown from then on. Throws the host's refusal. */
export async function saveSetting<K extends keyof SettingsView>(name: K, value: SettingsView[K]): Promise<SettingsView> {
  ++asked; // a read in flight began before this save: its answer is older
  const settings = await api.settings.set({ name, value });
  ++asked;
  useSettingsStore.setState({ settings, error: null });
  return settings;
}

let started = false;
function start(): void {
  if (started) return;
  started = true;
  const again = () => void refreshSettings().catch(() => {});
  onHostChange(again);
  window.addEventListener('focus', again);
  document.addEventListener('visibilitychange', () => document.visibilityState === 'visible' && again());
  again();
}

export function useSettings(): SettingsView | undefined {
  start();
  return useSettingsStore((s) => s.settings);
}

export function useSettingsError(): string | null {
  start();
  return useSettingsStore((s) => s.error);
}
