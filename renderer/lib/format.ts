// How times, durations and sizes read in the app.

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** "3 s ago", "5 min ago", "in 2 h": for times near now. */
export function relativeTime(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const d = Math.round((t - now) / 1000);
  const a = Math.abs(d);
  if (a < 5) return 'just now';
  const days = Math.round(a / 86400);
  const [n, unit] = a < 60 ? [a, 's'] : a < 3600 ? [Math.round(a / 60), 'min'] : a < 86400 ? [Math.round(a / 3600), 'h'] : [days, days === 1 ? 'day' : 'days'];
  return d < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** A length of time someone set (a window, a limit, a grant), in whole units: "45 s", "5 min",
 *  "1 h 30 min", "2 days". Measured times read better with formatDuration. */
export function formatSpan(seconds: number): string {
  const s = Math.round(seconds);
  if (s >= 86400 && s % 86400 === 0) return s === 86400 ? '1 day' : `${s / 86400} days`;
  if (s >= 3600) {
    const minutes = Math.round(s / 60);
    const h = Math.floor(minutes / 60);
    const m = minutes % 60;
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  if (s >= 60) {
    const m = Math.floor(s / 60);
    const r = s % 60;
    return r ? `${m} min ${r} s` : `${m} min`;
  }
  return `${s} s`;
}
