// `approvals approve ID --for 30m [--any-args | --args-match NAME=REGEX ...]`: which arguments the
// grant lets later calls vary (the rest must equal this request's), as the core's `widen`.
import { UsageError } from './args';
import type { Widen } from '../core/policy/grantRules';

/** `argNames`: the request's arguments, asked only for --any-args. Absent flags: no widen. */
export function parseWiden(anyArgs: boolean, argsMatch: string[] | undefined, argNames: () => string[]): Widen | undefined {
  const matches = argsMatch ?? [];
  if (anyArgs && matches.length > 0) throw new UsageError('--any-args lets every argument vary: give it or --args-match, not both');
  if (anyArgs) return Object.fromEntries(argNames().map((name) => [name, { any: true as const }]));
  if (matches.length === 0) return undefined;
  const widen = new Map<string, { match: string }>();
  for (const m of matches) {
    // The name cannot hold "=" (an argument's name is a word); the pattern may.
    const at = m.indexOf('=');
    const name = m.slice(0, at);
    const match = m.slice(at + 1);
    if (at <= 0 || match === '') throw new UsageError(`--args-match takes NAME=REGEX, e.g. target=^canary$ (got ${JSON.stringify(m)})`);
    if (widen.has(name)) throw new UsageError(`--args-match names "${name}" twice`);
    widen.set(name, { match });
  }
  return Object.fromEntries(widen);
}
