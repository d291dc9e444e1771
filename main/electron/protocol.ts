// app://dumbwaiter/ serves the renderer's files from the app (never from the network or the spool),
// with the strict CSP on every response and no path outside the renderer folder.
import { net, protocol } from 'electron';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isInside } from '../core/allowlist/pathArg';
import { APP_SCHEME, CSP } from './constants';

/** Must run before the app is ready. */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: false } }]);
}

export function setupAppProtocol(rendererDir: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const { pathname } = new URL(request.url);
    const file = path.resolve(rendererDir, '.' + decodeURIComponent(pathname));
    if (!isInside(rendererDir, file)) return new Response('not found', { status: 404 });
    const res = await net.fetch(pathToFileURL(file).toString());
    const headers = new Headers(res.headers);
    headers.set('Content-Security-Policy', CSP);
    headers.set('X-Content-Type-Options', 'nosniff');
    return new Response(res.body, { status: res.status, headers });
  });
}
