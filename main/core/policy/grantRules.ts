// What a time-boxed approval (a grant) lets later calls carry, argument by argument. By default each
// argument must equal its value on the card the person approved; the person may widen one to any
// value, or to values a pattern they typed matches (RE2, as the allowlist's `pattern`: linear time,
// whole value).
//
// Both sides are the *checked* arguments, the ones argv is rendered from (RunPlan.args): defaults
// filled in and paths resolved, on the approved request as on each later call. So a call that leaves
// out an argument whose default is the approved value is the same run and is covered, and a path
// spelled differently is compared by where it leads, not by its spelling: what is compared is what
// decides the run.
import { RE2JS } from 're2js';
import { UserError } from '../errors';
import { canonicalJson } from '../../../shared/protocol/canonicalJson';
import { visible, visibleJson } from '../../../shared/text/visible';
import type { GrantArgRule } from '../../../shared/ipc/views';

export type ArgRules = Record<string, GrantArgRule>;
/** The arguments the person lets vary, by name. */
export type Widen = Record<string, { any: true } | { match: string }>;

/** A pattern's longest source (as the IPC contract allows). */
const MAX_PATTERN = 1000;

function compile(name: string, source: string): RE2JS {
  if (source.length === 0 || source.length > MAX_PATTERN) throw new UserError(`the pattern for argument "${name}" must be 1 to ${MAX_PATTERN} characters`);
  try {
    return RE2JS.compile(source);
  } catch (e) {
    throw new UserError(`the pattern for argument "${name}" is not a regular expression in RE2 syntax (no backreferences or lookaround): ${(e as Error).message}`);
  }
}

/**
 * The rules of a grant made from the approved run's checked arguments: each must equal its value,
 * unless `widen` names it. Refuses a widen naming an argument the request does not have, and a
 * pattern RE2 cannot compile.
 */
export function grantRules(values: Record<string, unknown>, widen: Widen = {}): ArgRules {
  const names = Object.keys(values);
  for (const name of Object.keys(widen)) {
    if (!Object.hasOwn(values, name)) {
      throw new UserError(`the request has no argument "${name}" to widen (${names.length ? `its arguments: ${names.join(', ')}` : 'it has none'})`);
    }
  }
  // Built from entries (and read with hasOwn): an argument may be named `__proto__`.
  return Object.fromEntries(
    names.map((name): [string, GrantArgRule] => {
      const w = Object.hasOwn(widen, name) ? widen[name]! : null;
      if (w && 'match' in w) compile(name, w.match);
      return [name, w ? ('any' in w ? { any: true } : { match: w.match }) : { equals: values[name] }];
    }),
  );
}

/** An argument's value against its rule; a list's every element against a pattern. */
function satisfies(rule: GrantArgRule, value: unknown, name: string): boolean {
  if ('any' in rule) return true;
  if ('equals' in rule) return canonicalJson(value) === canonicalJson(rule.equals);
  const re = compile(name, rule.match);
  return (Array.isArray(value) ? value : [value]).every((v) => re.matches(String(v)));
}

/**
 * Whether a call with these checked arguments is one the grant covers: the same arguments by name
 * (none more, none fewer: an optional one left out or added changes argv), each within its rule.
 * `rules` absent: a grant made before grants named their arguments, which covers any (until it
 * expires, within a day of the upgrade).
 */
export function covers(rules: ArgRules | undefined, values: Record<string, unknown>): boolean {
  if (!rules) return true;
  const names = Object.keys(values);
  if (names.length !== Object.keys(rules).length) return false;
  return names.every((name) => Object.hasOwn(rules, name) && satisfies(rules[name]!, values[name], name));
}

/** One rule in words, for a question or a listing ("this value" / "any value" / "matching /re/"). */
export function describeRule(rule: GrantArgRule): string {
  if ('any' in rule) return 'any value';
  if ('equals' in rule) return `${visibleJson(JSON.stringify(rule.equals))} (this value only)`;
  return `matching /${visible(rule.match)}/ (the whole value; of a list, each element)`;
}

/** Every rule on one line, for an audit entry or a table: `target: "canary"; n: any; tag: /^v[0-9]+$/`
 *  (`rules` absent: a grant made before grants named their arguments). */
export function rulesInBrief(rules: ArgRules | undefined): string {
  if (!rules) return 'any (a grant made before grants named their arguments)';
  const brief = (r: GrantArgRule) => ('any' in r ? 'any' : 'equals' in r ? visibleJson(JSON.stringify(r.equals)) : `/${visible(r.match)}/`);
  const names = Object.keys(rules);
  return names.length ? names.map((n) => `${n}: ${brief(rules[n]!)}`).join('; ') : 'none';
}
