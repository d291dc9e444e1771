import { UserError } from './errors';

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** "90s", "30m", "2h", "1d", or a bare number of minutes, as seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(text.trim());
  if (!m) throw new UserError(`"${text}" is not a duration (examples: 90s, 30m, 2h, or a number of minutes)`);
  return Math.round(Number(m[1]) * UNITS[m[2] || 'm']!);
}

export function formatDuration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
