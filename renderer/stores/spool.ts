// The spool the screens show (Activity, Approvals, Keys, Audit): one of the home's spools, or all of
// them (null, the default). A choice of a spool that is gone counts as all.
import { create } from 'zustand';
import type { SpoolInfo } from '../../shared/ipc/views';
import { useStatus } from './status';

const useSpoolStore = create<{ chosen: string | null }>(() => ({ chosen: null }));
const NONE: SpoolInfo[] = [];

export function chooseSpool(name: string | null): void {
  useSpoolStore.setState({ chosen: name });
}

/** The home's spools, as the host last said. */
export const useSpools = (): SpoolInfo[] => useStatus((s) => s.spools) ?? NONE;

/** Whether the home has more than one spool: only then are spools chosen and named on screen. */
export const useSeveralSpools = (): boolean => useStatus((s) => s.spools.length > 1) ?? false;

/** The spool chosen, or null for all of them (also while it is not one of the home's). */
export function useChosenSpool(): string | null {
  const chosen = useSpoolStore((s) => s.chosen);
  const known = useStatus((s) => (chosen !== null && s.spools.length > 1 && s.spools.some((x) => x.name === chosen) ? chosen : null));
  return known ?? null;
}

/** The chosen spool outside React (the audit store's searches); null for all. */
export const chosenSpoolNow = (): string | null => useSpoolStore.getState().chosen;

/** Calls `listener` when the choice changes. */
export const onSpoolChosen = (listener: () => void): (() => void) => useSpoolStore.subscribe((s, prev) => s.chosen !== prev.chosen && listener());
