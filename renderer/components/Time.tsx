// A time as people read it near now ("5 min ago"), with the exact time on hover.
import { formatTime, relativeTime } from '../lib/format';
import { useNow } from '../lib/useNow';

export function Time({ iso }: { iso: string | null | undefined }) {
  const now = useNow();
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {relativeTime(iso, Math.max(now, Date.now()))}
    </time>
  );
}
