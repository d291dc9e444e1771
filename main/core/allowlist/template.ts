// argv templates: every argument lands inside exactly one argv element (or, for arrays and flags,
// becomes whole elements of its own). Nothing is ever split, joined or given to a shell.
import type { ArgSpec, TemplateElement, TemplatePart } from './types';
import { MAX_HANDLE_LENGTH } from '../../../shared/protocol/ids';

/** The placeholder a reconcile command may use besides the op's arguments: the id of the request it asks about. */
export const REQUEST_ID_PLACEHOLDER = 'request_id';
/** It stands in the template as a string argument would: inside an element or as one. Its value is the
 *  request's handle (`<id>@<spool>` outside the spool `default`), so it may be as long as a handle. */
export const REQUEST_ID_SPEC: ArgSpec = { type: 'string', pattern: null, patternSource: null, max_length: MAX_HANDLE_LENGTH, enum: null, allow_dash: false, description: '', required: true, default: undefined };

/** Parses one element; `{{` and `}}` are literal braces. Throws on a stray brace or a bad name. */
export function parseElement(text: string): TemplateElement {
  const parts: TemplatePart[] = [];
  let lit = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '{' && text[i + 1] === '{') {
      lit += '{';
      i++;
    } else if (c === '}' && text[i + 1] === '}') {
      lit += '}';
      i++;
    } else if (c === '{') {
      const end = text.indexOf('}', i);
      const name = end < 0 ? '' : text.slice(i + 1, end);
      if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) {
        throw new Error(`bad placeholder at character ${i + 1} of "${text}" (write {{ for a literal brace)`);
      }
      if (lit) parts.push({ lit });
      lit = '';
      parts.push({ arg: name });
      i = end;
    } else if (c === '}') {
      throw new Error(`stray "}" at character ${i + 1} of "${text}" (write }} for a literal brace)`);
    } else {
      lit += c;
    }
  }
  if (lit || parts.length === 0) parts.push({ lit });
  return parts;
}

/** The argument an element is made of, when it is exactly one placeholder. */
export function wholeArg(el: TemplateElement): string | null {
  const only = el.length === 1 ? el[0]! : null;
  return only && 'arg' in only ? only.arg : null;
}

export function placeholders(el: TemplateElement): string[] {
  return el.flatMap((p) => ('arg' in p ? [p.arg] : []));
}

/** The arguments whose value can start the element: before any literal text in it ("{x}.txt" with
 *  x = "-rf" gives "-rf.txt", as much an option as "-rf"). */
export function leadingArgs(el: TemplateElement): string[] {
  const leading: string[] = [];
  for (const part of el) {
    if ('lit' in part) break;
    leading.push(part.arg);
  }
  return leading;
}

function scalarText(v: unknown): string {
  return typeof v === 'string' ? v : String(v);
}

/** Where a path argument's value landed in argv: element `element`, characters [start, end). The
 *  executor swaps that text for a handle on the very object that was checked (exec/pathHandles.ts). */
export interface PathSlot {
  element: number;
  start: number;
  end: number;
  /** The argument says `must_exist: false`: the last name may be missing when the run starts (a file to
   *  create). Absent (plans recorded before this field): it must exist. */
  may_be_missing?: true;
}

/**
 * Renders argv from validated values (absent optional arguments are missing from `values`), and
 * says where each path value landed. Checks of what may stand where were made when the allowlist was loaded.
 */
export function render(
  template: TemplateElement[],
  specs: Record<string, ArgSpec>,
  values: Record<string, unknown>,
): { argv: string[]; paths: PathSlot[] } {
  const argv: string[] = [];
  const paths: PathSlot[] = [];
  const pathSpec = (spec: ArgSpec) => (spec.type === 'path' ? spec : spec.type === 'array' && spec.items.type === 'path' ? spec.items : null);
  const slot = (spec: ArgSpec, element: number, start: number, end: number) => {
    const p = pathSpec(spec);
    if (p) paths.push({ element, start, end, ...(p.must_exist ? {} : { may_be_missing: true as const }) });
  };
  for (const el of template) {
    const whole = wholeArg(el);
    if (whole !== null) {
      const spec = specs[whole]!;
      // Own properties only: an argument named like an Object.prototype member (`constructor`) is absent too.
      if (!Object.hasOwn(values, whole)) continue; // absent optional without a default: the element is dropped
      const v = values[whole];
      if (spec.type === 'boolean' && spec.flag !== null) {
        if (v === true) argv.push(spec.flag);
        continue;
      }
      for (const item of spec.type === 'array' ? (v as unknown[]) : [v]) {
        const text = scalarText(item);
        slot(spec, argv.length, 0, text.length);
        argv.push(text);
      }
      continue;
    }
    let text = '';
    for (const p of el) {
      if ('lit' in p) text += p.lit;
      else if (Object.hasOwn(values, p.arg)) {
        const value = scalarText(values[p.arg]);
        slot(specs[p.arg]!, argv.length, text.length, text.length + value.length);
        text += value;
      }
    }
    argv.push(text);
  }
  return { argv, paths };
}
