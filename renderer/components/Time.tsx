// A time as people read it near now ("5 min ago"), with the exact time on hover.
import { formatTime, relativeTime } from '../lib/format';

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {relativeTime(iso)}
    </time>
  );
}
