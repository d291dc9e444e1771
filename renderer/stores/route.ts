// Where the app is: the location hash (#/screen/param), so the tray and notifications can open a
// screen or a request directly, and Back works.
import { create } from 'zustand';

export const SCREENS = ['activity', 'approvals', 'allowlist', 'keys', 'spend', 'audit', 'settings', 'welcome', 'requests'] as const;
export type Screen = (typeof SCREENS)[number];

export interface Route {
  screen: Screen;
  /** What follows the screen: a request id for `requests`. */
  param: string;
}

function parse(hash: string): Route {
  const [first = '', ...rest] = hash.replace(/^#\/?/, '').split('/');
  const name = first === 'first-run' ? 'welcome' : first;
  const screen = (SCREENS as readonly string[]).includes(name) ? (name as Screen) : 'activity';
  return { screen, param: decodeURIComponent(rest.join('/')) };
}

const useRouteStore = create<Route>(() => parse(location.hash));
window.addEventListener('hashchange', () => useRouteStore.setState(parse(location.hash)));

export const useRoute = (): Route => useRouteStore();
export const useScreen = (): Screen => useRouteStore((s) => s.screen);

export function navigate(screen: Screen, param = ''): void {
  location.hash = `#/${screen}${param ? `/${encodeURIComponent(param)}` : ''}`;
}
