// An argv template read from allowlist.yaml (an operation's `command`, and its `reconcile:` lookup's):
// the program first and never from a request, each placeholder one the operation declares, arrays and
// flags only as whole elements.
import { RECONCILE_FIELDS } from '../../../shared/allowlist/schema';
import { REQUEST_ID_PLACEHOLDER, REQUEST_ID_SPEC, leadingArgs, parseElement, placeholders, wholeArg } from './template';
import { int, isObj, unknownFields, type Checker, type YPath } from './fields';
import type { ArgSpec, Reconcile, TemplateElement } from './types';

/** An argument `a` of the operation as a placeholder may use it: its spec; a problem to report; or null
 *  when it is declared but its spec was refused (that is reported already). */
export function placeholderSpec(args: Record<string, ArgSpec>, rawArgs: unknown, a: string, undeclared: string): ArgSpec | string | null {
  // Own keys only: {toString} or {constructor} must not find Object.prototype's members.
  if (Object.hasOwn(args, a)) return args[a]!;
  return isObj(rawArgs) && Object.hasOwn(rawArgs, a) ? null : undeclared;
}

/** Why a value of `s` may start with "-" where it starts an element (validateArgs lets it through
 *  there), and what takes that away; null when it never may. A path is absolute once checked, a
 *  flag is the author's text, and an integer without a min below 0 is refused negative there. */
function dashConsent(s: ArgSpec): { why: string; fix: string } | null {
  const scalar = s.type === 'array' ? s.items : s;
  if (scalar.type === 'string' && scalar.allow_dash) return { why: 'allow_dash: true', fix: 'drop allow_dash' };
  if (scalar.type === 'integer' && scalar.min !== null && scalar.min < 0) return { why: `a negative integer: its min is ${scalar.min}`, fix: 'set its min to 0 or more' };
  return null;
}

/**
 * An argv template (`command`, or reconcile's): a non-empty list, the program first and never from a
 * request, each placeholder one that `spec` accepts, arrays and flags only as whole elements.
 * `dashesNeedEnd` (reconcile's, of operation `opName`): an argument whose value may start with "-"
 * (allow_dash, an integer whose min is below 0) may start an element only after a literal "--": the
 * author allowed a leading "-" for the command, not for this other program's options, which would
 * turn the value into an option and the lookup's answer into the sandbox's choice.
 */
export function argvTemplate(
  c: Checker,
  p: YPath,
  raw: unknown,
  spec: (name: string) => ArgSpec | string | null,
  dashesNeedEnd: { opName: string } | null = null,
): { command: string[]; template: TemplateElement[] } {
  const template: TemplateElement[] = [];
  const command: string[] = [];
  if (!Array.isArray(raw) || raw.length === 0) {
    c.add(p, 'must be a non-empty list: the program, then its arguments (never a shell string)');
    return { command, template };
  }
  let optionsEnded = false;
  raw.forEach((el, i) => {
    const ep = [...p, i];
    if (typeof el !== 'string' && typeof el !== 'number') return c.add(ep, 'each element must be a string');
    const text = String(el);
    if (text.includes('\0')) return c.add(ep, 'contains a NUL byte');
    let parsed: TemplateElement;
    try {
      parsed = parseElement(text);
    } catch (e) {
      return c.add(ep, (e as Error).message);
    }
    const used = placeholders(parsed);
    if (i === 0 && used.length > 0) return c.add(ep, 'the program itself cannot come from a request');
    if (i === 0 && text.length === 0) return c.add(ep, 'the program must not be empty');
    for (const a of used) {
      const s = spec(a);
      if (typeof s === 'string') c.add(ep, s);
      if (s === null || typeof s === 'string') continue;
      if (wholeArg(parsed) === null && s.type === 'array') c.add(ep, `array argument {${a}} must be a whole element on its own`);
      if (wholeArg(parsed) === null && s.type === 'boolean' && s.flag !== null) c.add(ep, `flag argument {${a}} must be a whole element on its own`);
      const dash = !optionsEnded && leadingArgs(parsed).includes(a) ? dashConsent(s) : null;
      if (dashesNeedEnd && dash) {
        c.add(ep, `{${a}} of operation "${dashesNeedEnd.opName}" may start with "-" (${dash.why}) and starts this element of reconcile's command, where that program would read it as an option: put a "--" element before it (if the program takes one), or ${dash.fix}`);
      }
    }
    if (text === '--') optionsEnded = true;
    command.push(text);
    template.push(parsed);
  });
  return { command, template };
}

/** `reconcile: {command, timeout_s}`: the lookup that settles a run whose end the host missed. */
export function reconcile(c: Checker, p: YPath, raw: unknown, opName: string, args: Record<string, ArgSpec>, rawArgs: unknown): Reconcile | null {
  if (raw === undefined || raw === null) return null;
  if (!isObj(raw)) {
    c.add(p, 'must be a mapping such as {command: [/usr/bin/gh, release, view, "v{version}"], timeout_s: 30}');
    return null;
  }
  unknownFields(c, p, raw, Object.keys(RECONCILE_FIELDS));
  // {request_id} is the request's id: an argument of that name would make it mean two things.
  if (Object.hasOwn(args, REQUEST_ID_PLACEHOLDER)) c.add([...p.slice(0, -1), 'args', REQUEST_ID_PLACEHOLDER], `is the name reconcile gives the request's id ({${REQUEST_ID_PLACEHOLDER}}): rename the argument`);
  const { command, template } = argvTemplate(
    c,
    [...p, 'command'],
    raw.command,
    (a) => (a === REQUEST_ID_PLACEHOLDER ? REQUEST_ID_SPEC : placeholderSpec(args, rawArgs, a, `uses {${a}}, which is neither an argument of the operation nor {${REQUEST_ID_PLACEHOLDER}}`)),
    { opName },
  );
  return { command, template, timeout_s: int(c, [...p, 'timeout_s'], raw.timeout_s, RECONCILE_FIELDS.timeout_s.type) };
}
