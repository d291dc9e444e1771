// Durations as a number and a unit in the forms, seconds in the settings.

export const UNITS = { seconds: 1, minutes: 60, hours: 3600, days: 86400 } as const;
export type Unit = keyof typeof UNITS;

/** The largest of `units` that divides `seconds` exactly (else the smallest of them). */
export function splitDuration(seconds: number, units: readonly Unit[]): { amount: string; unit: Unit } {
  const sorted = [...units].sort((a, b) => UNITS[b] - UNITS[a]);
  for (const u of sorted) {
    if (seconds % UNITS[u] === 0) return { amount: String(seconds / UNITS[u]), unit: u };
  }
  const u = sorted[sorted.length - 1]!;
  return { amount: String(seconds / UNITS[u]), unit: u };
}
