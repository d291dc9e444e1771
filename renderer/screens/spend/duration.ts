// Durations as a number and a unit in the forms, seconds in the settings.

export const UNITS = { seconds: 1, minutes: 60, hours: 3600, days: 86400 } as const;
export type Unit = keyof typeof UNITS;

/** The largest unit that divides `seconds` exactly (down to `smallest`). */
export function splitDuration(seconds: number, units: readonly Unit[]): { amount: string; unit: Unit } {
  const sorted = [...units].sort((a, b) => UNITS[b] - UNITS[a]);
  for (const u of sorted) {
    if (seconds % UNITS[u] === 0) return { amount: String(seconds / UNITS[u]), unit: u };
  }
  const u = sorted[sorted.length - 1]!;
  return { amount: String(seconds / UNITS[u]), unit: u };
}

/** "1 h 30 min", "45 s", "2 days". */
export function formatSeconds(s: number): string {
  if (s >= 86400 && s % 86400 === 0) return s === 86400 ? '1 day' : `${s / 86400} days`;
  if (s >= 3600) {
    const h = Math.floor(s / 3600);
    const m = Math.round((s % 3600) / 60);
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  if (s >= 60) {
    const m = Math.floor(s / 60);
    const r = s % 60;
    return r ? `${m} min ${r} s` : `${m} min`;
  }
  return `${s} s`;
}
