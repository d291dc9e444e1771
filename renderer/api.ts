// The preload's API (window.dumbwaiter), and the text of an error it rejects with.
import type { DumbwaiterApi } from '../preload/api';

export const api: DumbwaiterApi = window.dumbwaiter;

/** An IPC error's own message, without Electron's "Error invoking remote method 'x': Error: " wrapper. */
export function errorText(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.replace(/^Error invoking remote method '[^']*': /, '').replace(/^(Error|UserError): /, '');
}
