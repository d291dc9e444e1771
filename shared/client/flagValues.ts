// Values of dw's own flags that go into a request: checked before anything is written, with a message
// that names the flag (a usage error, 64).
import { MAX_REQUEST_LIMIT } from '../protocol/envelope';

export class FlagError extends Error {}

/** `--time-limit S`, `--max-output BYTES`: a whole number the host takes as a per-request limit. */
export function positiveInteger(text: string | undefined, flag: string, unit: string): number | undefined {
  if (text === undefined) return undefined;
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= MAX_REQUEST_LIMIT)) throw new FlagError(`${flag} takes a whole number of ${unit} from 1 to ${MAX_REQUEST_LIMIT}, not "${text}"`);
  return n;
}

const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

function secondsOf(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  const m = text === '' ? null : DURATION.exec(text);
  return m ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0) : NaN;
}

/** `--expires 90m`: the seconds of a duration such as `45s`, `30m`, `2h`, `1h30m` or a plain number of seconds, 1 s to `max` s. */
export function durationSeconds(text: string, flag: string, max: number): number {
  const s = secondsOf(text);
  if (!(s >= 1)) throw new FlagError(`${flag} takes a duration such as 45s, 30m, 2h or 1h30m, not "${text}"`);
  if (s > max) throw new FlagError(`${flag} is at most ${max / 3600} h (${max} s), not ${text}`);
  return s;
}
