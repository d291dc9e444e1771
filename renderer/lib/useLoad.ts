// Loads something from the host for one component: again when `deps` change (what is loaded: data
// for other deps is never shown as if it were for these, so a filter change shows "loading", not the
// unfiltered rows), and when `refresh` changes or on `reload()` (the same thing, newer: the current
// data stays on screen until the answer comes).
import { useCallback, useEffect, useState } from 'react';
import { errorText } from '../api';
import { useLatest } from './useLatest';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[], refresh?: unknown): Loaded<T> {
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ key: string; data: T | undefined; error: string | null; loading: boolean }>({ key, data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useLatest(load);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    loadRef.current().then(
      (data) => live && setState({ key, data, error: null, loading: false }),
      (e: unknown) => live && setState((s) => ({ key, data: s.key === key ? s.data : undefined, error: errorText(e), loading: false })),
    );
    return () => {
      live = false;
    };
  }, [key, tick, refresh, loadRef]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const current = state.key === key;
  return { data: current ? state.data : undefined, error: current ? state.error : null, loading: !current || state.loading, reload };
}
