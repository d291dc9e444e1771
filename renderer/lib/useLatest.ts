// The latest value of something a listener registered once (a key handler) reads. Updated as the render
// that made it is committed, before anything else runs: a key pressed once the screen shows a state
// acts on that state. (A passive effect would update it later, and Chromium runs input events before
// such tasks: a press just after Approve turned on could still find it off.) The ref itself never
// changes, so listing it among an effect's dependencies re-registers nothing.
import { useLayoutEffect, useRef } from 'react';

export function useLatest<T>(value: T): { readonly current: T } {
  const ref = useRef(value);
  useLayoutEffect(() => {
    ref.current = value;
  });
  return ref;
}
