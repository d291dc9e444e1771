// Electron hardening for every web contents: navigation and new windows blocked, permission requests
// denied, external links opened only for our own docs, and the IPC origin the preload may call from;
// the approval window pinned to its one page.
import { app, session, shell, type WebContents } from 'electron';
import { scopedLogger } from '../core/log';
import { isAppUrl } from '../core/ipc/bind';
import { APP_ORIGIN, DOCS_URL } from './constants';

const log = scopedLogger('security');

function harden(contents: WebContents): void {
  contents.on('will-navigate', (event) => {
    if (!isAppUrl(event.url, APP_ORIGIN)) {
      event.preventDefault();
      log.warn(`blocked navigation to ${event.url}`);
    }
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (DOCS_URL.test(url)) void shell.openExternal(url);
    else log.warn(`blocked a new window for ${url}`);
    return { action: 'deny' };
  });
}

/** For a window that shows one page only (the approval window): every navigation is blocked, within
 *  our origin too, so its page cannot become another page of the app. */
export function pinToPage(contents: WebContents): void {
  contents.on('will-navigate', (event) => {
    event.preventDefault();
    log.warn(`blocked a pinned window's navigation to ${event.url}`);
  });
  contents.on('will-redirect', (event) => {
    event.preventDefault();
    log.warn(`blocked a pinned window's redirect to ${event.url}`);
  });
}

export function setupSecurity(): void {
  app.on('web-contents-created', (_event, contents) => harden(contents));
  // Only the copy buttons' clipboard writes are allowed, and only to our own pages.
  const allowed = (permission: string, url: string) => permission === 'clipboard-sanitized-write' && isAppUrl(url, APP_ORIGIN);
  session.defaultSession.setPermissionRequestHandler((wc, permission, callback, details) => {
    const ok = allowed(permission, details.requestingUrl ?? wc.getURL());
    if (!ok) log.warn(`denied a permission request: ${permission}`);
    callback(ok);
  });
  session.defaultSession.setPermissionCheckHandler((_wc, permission, requestingOrigin) => allowed(permission, requestingOrigin));
}
