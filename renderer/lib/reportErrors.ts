// The page's uncaught errors and unhandled rejections, sent to the app's log (app.reportError), clipped
// to what main takes. Reporting never throws, nor reports its own failure (that would loop).
import { RENDERER_ERROR_MAX } from '../../shared/ipc/channels';
import { api } from '../api';

function report(kind: 'error' | 'unhandledrejection', what: unknown): void {
  const message = what instanceof Error ? `${what.name}: ${what.message}` : String(what);
  const stack = what instanceof Error ? (what.stack ?? '') : '';
  void api.app
    .reportError({ kind, message: message.slice(0, RENDERER_ERROR_MAX.message), stack: stack.slice(0, RENDERER_ERROR_MAX.stack) })
    .catch(() => {});
}

export function reportErrors(): void {
  window.addEventListener('error', (e) => report('error', e.error ?? e.message));
  window.addEventListener('unhandledrejection', (e) => report('unhandledrejection', e.reason));
}
