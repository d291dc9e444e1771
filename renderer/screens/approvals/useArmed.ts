// A decision can only be taken once its request has been on screen for a moment: a key press or a
// click meant for something else (another window, the request before) must not approve this one.
import { useEffect, useState } from 'react';

/**
 * False for `ms` after `shown` changes (and, with `onFocus`, after the window gains focus or becomes
 * visible again), then true.
 */
export function useArmed(shown: string, ms: number, onFocus = false): boolean {
  const [epoch, setEpoch] = useState(0);
  const [armedFor, setArmedFor] = useState<string | null>(null);
  const token = `${shown}#${epoch}`;

  useEffect(() => {
    if (!onFocus) return;
    const rearm = () => setEpoch((n) => n + 1);
    const onVisible = () => document.visibilityState === 'visible' && rearm();
    window.addEventListener('focus', rearm);
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      window.removeEventListener('focus', rearm);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [onFocus]);

  useEffect(() => {
    const t = setTimeout(() => setArmedFor(token), ms);
    return () => clearTimeout(t);
  }, [token, ms]);

  return armedFor === token;
}
