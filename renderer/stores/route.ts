// Where the app is: the location hash (#/screen/param), so the tray and notifications can open a
// screen or a request directly, and Back works. A screen holding something that would be lost (a
// key shown once) can ask to be left only after a confirmation.
import { create } from 'zustand';
import { useEffect } from 'react';
import { api } from '../api';
import { confirmAction, type ConfirmRequest } from './confirm';

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

let shown = location.hash;
let guard: Omit<ConfirmRequest, 'danger'> | null = null;

window.addEventListener('hashchange', () => {
  const target = location.hash;
  if (target === shown) return;
  if (!guard) {
    shown = target;
    useRouteStore.setState(parse(target));
    return;
  }
  // Stay until the user agrees to leave (replaceState changes the address without another hashchange).
  history.replaceState(null, '', shown);
  const asked = guard;
  void confirmAction({ ...asked, danger: true }).then((leave) => {
    if (leave && guard === asked) {
      guard = null;
      location.hash = target;
    }
  });
});

export const useRoute = (): Route => useRouteStore();
export const useScreen = (): Screen => useRouteStore((s) => s.screen);

export function navigate(screen: Screen, param = ''): void {
  location.hash = `#/${screen}${param ? `/${encodeURIComponent(param)}` : ''}`;
}

/** While `active`, leaving the screen asks first (e.g. "Leave without saving the key?"). */
export function useLeaveGuard(active: boolean, question: Omit<ConfirmRequest, 'danger'>): void {
  const { title, body, confirmLabel } = question;
  useEffect(() => {
    if (!active) return;
    const mine = { title, body, confirmLabel };
    guard = mine;
    return () => {
      if (guard === mine) guard = null;
    };
  }, [active, title, body, confirmLabel]);
}

/** The tray and notifications move the open window through this event (and so through the guard). */
api.app.onNavigate(({ route }) => {
  location.hash = `#${route}`;
});
