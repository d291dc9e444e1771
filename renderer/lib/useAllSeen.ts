// Whether every part of a card has been on screen: a request is approved only once all of it was shown
// (a long command, environment, intent or plan scrolls, and A or Enter must not approve what nobody
// scrolled to). Measured, not guessed: as the person scrolls, the slice of each part that is visible in
// the window and inside every box that clips it is recorded; a part counts as seen once those slices
// have covered it from top to bottom. Jumping to the end skips what is in between; a part wider than
// what shows it (content that overflows sideways) is never seen, so the card never arms.
import { useEffect, useState, type RefObject } from 'react';

/** Names a part that must have been on screen (each name once per card). */
export const MUST_SEE = 'data-must-see';

/** Pixels of rounding forgiven at each edge. */
const SLACK = 1;

interface Coverage {
  width: number;
  height: number;
  /** The vertical slices seen so far, relative to the part's top. */
  spans: [number, number][];
  done: boolean;
}

export interface Seen {
  /** Every part's name, in the card's order. */
  parts: readonly string[];
  /** The names of those seen in full. */
  seen: ReadonlySet<string>;
}

const NONE: Seen = { parts: [], seen: new Set() };

/**
 * Watches the `[data-must-see]` parts inside `container` and answers which have been on screen in full
 * since `key` last changed (a part's partial view is forgotten when its size changes: the text moved).
 */
export function useAllSeen(container: RefObject<HTMLElement | null>, key: string): Seen {
  const [state, setState] = useState<Seen & { key: string }>({ key, ...NONE });
  useEffect(() => {
    const root = container.current;
    if (!root) return;
    const coverage = new Map<string, Coverage>();
    let frame = 0;
    const check = () => {
      frame = 0;
      const parts = Array.from(root.querySelectorAll<HTMLElement>(`[${MUST_SEE}]`));
      if (document.visibilityState === 'visible') for (const part of parts) record(coverage, part);
      const names = parts.map((p) => p.getAttribute(MUST_SEE) ?? '');
      const seen = new Set(names.filter((n) => coverage.get(n)?.done));
      setState((s) => (s.key === key && sameList(s.parts, names) && s.seen.size === seen.size ? s : { key, parts: names, seen }));
    };
    const schedule = () => {
      frame ||= requestAnimationFrame(check);
    };
    const resized = new ResizeObserver(schedule);
    const watchParts = () => {
      resized.disconnect();
      resized.observe(root);
      root.querySelectorAll(`[${MUST_SEE}]`).forEach((p) => resized.observe(p));
    };
    const changed = new MutationObserver(() => {
      watchParts();
      schedule();
    });
    watchParts();
    changed.observe(root, { childList: true, subtree: true, characterData: true });
    document.addEventListener('scroll', schedule, { capture: true, passive: true });
    document.addEventListener('visibilitychange', schedule);
    window.addEventListener('resize', schedule);
    schedule();
    return () => {
      cancelAnimationFrame(frame);
      resized.disconnect();
      changed.disconnect();
      document.removeEventListener('scroll', schedule, { capture: true });
      document.removeEventListener('visibilitychange', schedule);
      window.removeEventListener('resize', schedule);
    };
  }, [container, key]);
  return state.key === key ? state : NONE;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Adds the slice of `part` on screen now to what was seen of it. */
function record(coverage: Map<string, Coverage>, part: HTMLElement): void {
  const name = part.getAttribute(MUST_SEE) ?? '';
  const box = part.getBoundingClientRect();
  let c = coverage.get(name);
  if (c?.done) return;
  if (!c || Math.abs(c.width - box.width) > SLACK || Math.abs(c.height - box.height) > SLACK) {
    c = { width: box.width, height: box.height, spans: [], done: false };
    coverage.set(name, c);
  }
  const span = visibleSpan(part, box);
  if (!span) return;
  c.spans.push(span);
  c.spans.sort((x, y) => x[0] - y[0]);
  let reached = 0;
  for (const [from, to] of c.spans) {
    if (from > reached + SLACK) return;
    reached = Math.max(reached, to);
  }
  c.done = reached >= box.height - SLACK;
}

/** The rows of `part` (from its top) visible now across its whole width, or null. */
function visibleSpan(part: HTMLElement, box: DOMRect): [number, number] | null {
  if (box.height <= 0 || box.width <= 0) return null;
  // Its content sticks out of it (an unbreakable run wider than the card): not all of it can show.
  if (part.scrollWidth > part.clientWidth + SLACK || part.scrollHeight > part.clientHeight + SLACK) return null;
  if (getComputedStyle(part).visibility !== 'visible') return null;
  const page = document.documentElement;
  let top = Math.max(box.top, 0);
  let bottom = Math.min(box.bottom, page.clientHeight);
  let left = Math.max(box.left, 0);
  let right = Math.min(box.right, page.clientWidth);
  for (let a = part.parentElement; a && a !== page; a = a.parentElement) {
    const style = getComputedStyle(a);
    if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
    const r = a.getBoundingClientRect();
    const t = r.top + a.clientTop;
    const l = r.left + a.clientLeft;
    top = Math.max(top, t);
    bottom = Math.min(bottom, t + a.clientHeight);
    left = Math.max(left, l);
    right = Math.min(right, l + a.clientWidth);
  }
  if (bottom <= top || left > box.left + SLACK || right < box.right - SLACK) return null;
  return [top - box.top, bottom - box.top];
}
