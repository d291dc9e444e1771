// What the Electron layer's modules share, free of Electron imports (so tests can read it in Node).
export const APP_SCHEME = 'app';
export const APP_ORIGIN = `${APP_SCHEME}://dumbwaiter`;
/** External links that may open in the user's browser: our own documentation, nothing else. */
export const DOCS_URL = /^https:\/\/github\.com\/dumbwaiter-dev\/dumbwaiter\/(blob|tree)\/main\/docs\//;

/** Every page of the app gets this policy: our own scripts and styles only, no network at all. */
export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
