// Whether every item of a list has been on screen: a plan is approved only once each of its steps was
// shown (a long plan scrolls, and A or Enter must not approve steps nobody scrolled to).
import { useEffect, useState, type RefObject } from 'react';

/** Marks the end of an item: the item counts as seen once its end was on screen. */
export const SEEN_MARK = 'data-seen-mark';

/**
 * Watches the `[data-seen-mark]` elements inside `container` (one at the end of each item, valued by
 * the item's index) and answers how many of the `count` items have been on screen, in the window's
 * viewport and inside every scrolling box around them, since `key` last changed.
 */
export function useAllSeen(container: RefObject<HTMLElement | null>, count: number, key: string): number {
  const [seen, setSeen] = useState<{ key: string; items: ReadonlySet<number> }>({ key, items: new Set() });
  useEffect(() => {
    const root = container.current;
    if (!root) return;
    const observer = new IntersectionObserver(
      (entries) => {
        const now = entries.filter((e) => e.isIntersecting).map((e) => Number((e.target as HTMLElement).getAttribute(SEEN_MARK)));
        if (now.length === 0) return;
        setSeen((s) => ({ key, items: new Set([...(s.key === key ? s.items : []), ...now]) }));
      },
      { threshold: 1 },
    );
    root.querySelectorAll(`[${SEEN_MARK}]`).forEach((mark) => observer.observe(mark));
    return () => observer.disconnect();
  }, [container, count, key]);
  if (seen.key !== key) return 0;
  return [...seen.items].filter((i) => i >= 0 && i < count).length;
}
