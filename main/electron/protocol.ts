// app://dumbwaiter/ serves the renderer's files from the app (never from the network or the spool),
// with the strict CSP on every response, no path outside the renderer folder and no other host name.
import { net, protocol } from 'electron';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isInside } from '../core/allowlist/pathArg';
import { APP_ORIGIN, APP_SCHEME, CSP } from './constants';

/** Must run before the app is ready. */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: false } }]);
}

export function setupAppProtocol(rendererDir: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    // Only our own host: app://anything-else/ would be another origin serving the same pages.
    const url = new URL(request.url);
    if (`${url.protocol}//${url.host}` !== APP_ORIGIN) return new Response('not found', { status: 404 });
    const { pathname } = url;
    const file = path.resolve(rendererDir, '.' + decodeURIComponent(pathname));
    if (!isInside(rendererDir, file)) return new Response('not found', { status: 404 });
    const res = await net.fetch(pathToFileURL(file).toString());
    const headers = new Headers(res.headers);
    headers.set('Content-Security-Policy', CSP);
    headers.set('X-Content-Type-Options', 'nosniff');
    return new Response(res.body, { status: res.status, headers });
  });
}
