// Short confirmations and errors in the corner: "Key revoked", "Could not save: …".
import { create } from 'zustand';

export interface Toast {
  id: number;
  text: string;
  kind: 'info' | 'error';
}

const useToastStore = create<{ toasts: Toast[] }>(() => ({ toasts: [] }));
let next = 1;

export function toast(text: string, kind: Toast['kind'] = 'info'): void {
  const id = next++;
  useToastStore.setState((s) => ({ toasts: [...s.toasts, { id, text, kind }].slice(-4) }));
  setTimeout(() => dismissToast(id), kind === 'error' ? 8000 : 4000);
}

export function dismissToast(id: number): void {
  useToastStore.setState((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) }));
}

export const useToasts = (): Toast[] => useToastStore((s) => s.toasts);
