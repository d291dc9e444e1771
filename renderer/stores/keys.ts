// The host's keys (names, scopes, use), shared by every screen that shows a key; reloaded when the
// host's state changes and after this window changes a key.
import { create } from 'zustand';
import type { KeyView } from '../../shared/ipc/views';
import { api, errorText } from '../api';
import { onHostChange } from './status';

const useKeyStore = create<{ keys: KeyView[] | undefined; error: string | null }>(() => ({ keys: undefined, error: null }));

let started = false;
let asked = 0;
export async function refreshKeys(): Promise<void> {
  const mine = ++asked;
  try {
    const keys = await api.keys.list();
    if (mine === asked) useKeyStore.setState({ keys, error: null }); // only the latest answer counts
  } catch (e) {
    if (mine === asked) useKeyStore.setState({ error: errorText(e) }); // the next change of state tries again
  }
}

function start(): void {
  if (started) return;
  started = true;
  onHostChange(() => void refreshKeys());
  void refreshKeys();
}

export function useKeys(): KeyView[] | undefined {
  start();
  return useKeyStore((s) => s.keys);
}

/** Why the keys could not be loaded, or null. */
export function useKeysError(): string | null {
  start();
  return useKeyStore((s) => s.error);
}

/** A key's name, or '' while the keys load or for a key that is gone. */
export function useKeyName(keyId: string): string {
  start();
  return useKeyStore((s) => s.keys?.find((k) => k.key_id === keyId)?.name ?? '');
}
