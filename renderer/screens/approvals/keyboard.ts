// Whose keys they are: shortcuts act only when the person is not typing and not on another control.
// Shared by the Approvals screen, its card and the approval window.
import { questionOpen } from '../../stores/confirm';

/** Focus is where text is typed or a value chosen with keys: a field, a menu, editable text. */
export function isTyping(el: EventTarget | null): boolean {
  if (!(el instanceof HTMLElement)) return false;
  return el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable;
}

const CONTROL = 'button, a[href], input, select, textarea, summary, [role="button"], [role="link"], [contenteditable="true"]';

/** Focus is on a control (button, link, field) outside `own`: Enter, letters and arrows are its own. */
export function onOtherControl(el: EventTarget | null, own: Element | null): boolean {
  if (!(el instanceof Element) || !el.matches(CONTROL)) return false;
  return !own?.contains(el);
}

/** Focus is on nothing in particular: the page itself. */
export function focusNowhere(el: EventTarget | null): boolean {
  return el === null || el === document.body || el === document.documentElement || el === window || el === document;
}

/** A key press that may be a shortcut: no modifier, not held down, not taken by something else. */
export const plainKey = (e: KeyboardEvent): boolean => !e.defaultPrevented && !e.ctrlKey && !e.metaKey && !e.altKey && !e.repeat && !questionOpen();
