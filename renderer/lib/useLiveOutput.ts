// A running request's output as it is written: asks the host for what is new every half second,
// until the request is no longer running.
import { useEffect, useState } from 'react';
import { api } from '../api';

const POLL_MS = 500;
/** Keep the view light: the full output is in the result once the run ends. */
const KEEP_CHARS = 200_000;

export function useLiveOutput(id: string, running: boolean): string {
  const [text, setText] = useState('');
  useEffect(() => {
    setText('');
    if (!running) return;
    let from = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let live = true;
    const tick = async () => {
      try {
        const chunk = await api.requests.output({ id, from });
        if (!live) return;
        from = chunk.next;
        if (chunk.text || chunk.skipped) setText((t) => (t + (chunk.skipped ? `\n[… ${chunk.skipped} bytes skipped …]\n` : '') + chunk.text).slice(-KEEP_CHARS));
        if (chunk.state !== 'running') return;
      } catch {
        /* the next tick tries again */
      }
      if (live) timer = setTimeout(() => void tick(), POLL_MS);
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, running]);
  return text;
}
