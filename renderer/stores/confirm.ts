// "Are you sure?" as a promise: `await confirmAction({...})` shows the app's dialog and resolves true or false.
import { create } from 'zustand';

export interface ConfirmRequest {
  title: string;
  body: string;
  confirmLabel: string;
  danger?: boolean;
}

interface Pending extends ConfirmRequest {
  resolve: (ok: boolean) => void;
}

const useConfirmStore = create<{ pending: Pending | null }>(() => ({ pending: null }));

export function confirmAction(req: ConfirmRequest): Promise<boolean> {
  useConfirmStore.getState().pending?.resolve(false);
  return new Promise((resolve) => useConfirmStore.setState({ pending: { ...req, resolve } }));
}

export function answerConfirm(ok: boolean): void {
  const p = useConfirmStore.getState().pending;
  useConfirmStore.setState({ pending: null });
  p?.resolve(ok);
}

export const usePendingConfirm = (): ConfirmRequest | null => useConfirmStore((s) => s.pending);

/** A question is open: it gets the keys, and no shortcut acts behind it. */
export const questionOpen = (): boolean => useConfirmStore.getState().pending !== null;
