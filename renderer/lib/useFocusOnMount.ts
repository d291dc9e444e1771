// Moves focus to an element when it appears (a panel that opens after an action), so keyboard and
// screen-reader users land on it.
import { useEffect, useRef } from 'react';

export function useFocusOnMount<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return ref;
}
