// The host's answer to a rejected setting, as a sentence: without the "invalid value for x:" header and
// zod's bullets and "→ at path" lines.
import { errorText } from '../api';

export function settingError(e: unknown): string {
  const lines = errorText(e)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('→'));
  const body = lines.length > 1 && /^invalid value for [\w.]+:$/.test(lines[0]!) ? lines.slice(1) : lines;
  return body.map((l) => l.replace(/^✖\s*/, '')).join('; ');
}
