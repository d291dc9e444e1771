// An operation's `args:` read from allowlist.yaml: each argument's name, type and constraints, and its
// default checked against them.
import { RE2JS } from 're2js';
import { ARG_FIELDS, ARG_NAME, ARG_TYPES, ARG_TYPE_FIELDS, typeFieldNames } from '../../../shared/allowlist/schema';
import { absDir, checkFolder, flag, int, isObj, str, unknownFields, type Checker, type Dir, type YPath } from './fields';
import type { ArgSpec, ArgType, ScalarArg } from './types';

const COMMON_ARG_FIELDS = Object.keys(ARG_FIELDS);

/** `offeredTo`: the spools that see the operation (null: every spool), for its path roots (roots.ts). */
function scalarType(c: Checker, p: YPath, raw: Record<string, unknown>, cwd: Dir, offeredTo: string[] | null): ScalarArg | null {
  switch (raw.type) {
    case 'string': {
      const source = str(c, [...p, 'pattern'], raw.pattern, null);
      let pattern: RE2JS | null = null;
      if (source !== null) {
        try {
          pattern = RE2JS.compile(source);
        } catch (e) {
          // RE2 has no backreferences or lookaround: what makes a pattern take exponential time.
          c.add([...p, 'pattern'], `is not a regular expression in RE2 syntax (no backreferences or lookaround): ${(e as Error).message}`);
        }
      }
      let en: string[] | null = null;
      if (raw.enum !== undefined) {
        if (!Array.isArray(raw.enum) || raw.enum.length === 0 || !raw.enum.every((x) => typeof x === 'string')) {
          c.add([...p, 'enum'], 'must be a non-empty list of strings');
        } else en = raw.enum as string[];
      }
      const fields = ARG_TYPE_FIELDS.string;
      return {
        type: 'string',
        pattern,
        patternSource: source,
        max_length: int(c, [...p, 'max_length'], raw.max_length, fields.max_length.type),
        enum: en,
        allow_dash: flag(c, [...p, 'allow_dash'], raw.allow_dash, fields.allow_dash.type),
      };
    }
    case 'integer': {
      const bound = (k: 'min' | 'max') => {
        const v = raw[k];
        if (v === undefined) return null;
        if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
          c.add([...p, k], 'must be an integer');
          return null;
        }
        return v;
      };
      const min = bound('min');
      const max = bound('max');
      if (min !== null && max !== null && min > max) c.add([...p, 'max'], 'must not be less than min');
      return { type: 'integer', min, max };
    }
    case 'boolean': {
      const flag = str(c, [...p, 'flag'], raw.flag, null);
      if (flag !== null && (flag.length === 0 || flag.includes('\0'))) c.add([...p, 'flag'], 'must be a non-empty string');
      return { type: 'boolean', flag };
    }
    case 'path': {
      let within = [cwd];
      if (raw.within !== undefined) {
        if (!Array.isArray(raw.within) || raw.within.length === 0 || !raw.within.every((x) => typeof x === 'string')) {
          c.add([...p, 'within'], 'must be a non-empty list of folders');
        } else within = raw.within.map((d, i) => absDir(c, [...p, 'within', i], d as string));
      }
      const fields = ARG_TYPE_FIELDS.path;
      const mustExist = flag(c, [...p, 'must_exist'], raw.must_exist, fields.must_exist.type);
      const shared = flag(c, [...p, 'shared_with_sandbox'], raw.shared_with_sandbox, fields.shared_with_sandbox.type);
      within.forEach((root, i) => {
        // At the field (as the editor shows it), naming the folder as written: there may be several.
        const at = raw.within === undefined ? [...p, 'type'] : [...p, 'within'];
        checkFolder(c, at, root, 'root', shared, offeredTo, (problem) => (raw.within === undefined ? `its folder, the operation's cwd ${root.real}, ${problem}` : `${String((raw.within as unknown[])[i])} ${problem}`));
      });
      return { type: 'path', within: within.map((d) => d.real), must_exist: mustExist, shared_with_sandbox: shared };
    }
    default:
      c.add([...p, 'type'], `must be one of ${ARG_TYPES.join(', ')} (got ${JSON.stringify(raw.type)})`);
      return null;
  }
}

function argType(c: Checker, p: YPath, raw: Record<string, unknown>, cwd: Dir, offeredTo: string[] | null): ArgType | null {
  if (raw.type !== 'array') return scalarType(c, p, raw, cwd, offeredTo);
  if (!isObj(raw.items)) {
    c.add([...p, 'items'], 'must describe the type of each item, e.g. {type: string}');
    return null;
  }
  const items = raw.items;
  if (items.type === 'array') {
    c.add([...p, 'items', 'type'], 'arrays of arrays are not supported');
    return null;
  }
  unknownFields(c, [...p, 'items'], items, ['type', ...typeFieldNames(items.type)]);
  const inner = scalarType(c, [...p, 'items'], items, cwd, offeredTo);
  if (inner?.type === 'boolean' && inner.flag !== null) c.add([...p, 'items', 'flag'], 'flags are not allowed in arrays');
  return inner && { type: 'array', items: inner, max_items: int(c, [...p, 'max_items'], raw.max_items, ARG_TYPE_FIELDS.array.max_items.type) };
}

function argSpec(c: Checker, p: YPath, raw: unknown, cwd: Dir, offeredTo: string[] | null): ArgSpec | null {
  if (!isObj(raw)) {
    c.add(p, 'must be a mapping such as {type: string}');
    return null;
  }
  unknownFields(c, p, raw, [...COMMON_ARG_FIELDS, ...typeFieldNames(raw.type)]);
  const t = argType(c, p, raw, cwd, offeredTo);
  if (!t) return null;
  if (raw.required !== undefined && typeof raw.required !== 'boolean') c.add([...p, 'required'], 'must be true or false');
  const hasDefault = raw.default !== undefined;
  const required = typeof raw.required === 'boolean' ? raw.required : !hasDefault && t.type !== 'boolean';
  if (required && hasDefault) c.add([...p, 'default'], 'a required argument cannot have a default');
  return {
    ...t,
    description: str(c, [...p, 'description'], raw.description, '') ?? '',
    required,
    default: raw.default,
  };
}

function defaultFits(spec: ArgSpec): boolean {
  const v = spec.default;
  const fits = (t: ArgType, x: unknown): boolean => {
    switch (t.type) {
      case 'string':
        return typeof x === 'string' && [...x].length <= t.max_length && (!t.enum || t.enum.includes(x)) && (!t.pattern || t.pattern.matches(x));
      case 'integer':
        return typeof x === 'number' && Number.isSafeInteger(x) && (t.min === null || x >= t.min) && (t.max === null || x <= t.max);
      case 'boolean':
        return typeof x === 'boolean';
      case 'path':
        return typeof x === 'string' && x.length > 0;
      case 'array':
        return Array.isArray(x) && x.length <= t.max_items && x.every((i) => fits(t.items, i));
    }
  };
  return v === undefined || fits(spec, v);
}

/** `args: {name: spec, ...}`: the arguments whose specs read (a refused one is reported, and left out). */
export function argSpecs(c: Checker, p: YPath, raw: unknown, cwd: Dir, offeredTo: string[] | null): Record<string, ArgSpec> {
  const args: Record<string, ArgSpec> = {};
  if (raw === undefined || raw === null) return args;
  if (!isObj(raw)) {
    c.add(p, 'must be a mapping of argument name to its type');
    return args;
  }
  for (const [an, spec] of Object.entries(raw)) {
    if (!ARG_NAME.test(an) || an === '__proto__') {
      c.add([...p, an], 'argument names must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$ (and not be __proto__)');
      if (an === '__proto__') continue; // assigning it would replace the object's prototype
    } else if (an.startsWith('dumbwaiter_')) {
      // The MCP server adds dumbwaiter_intent (and may add more) to every operation's inputs.
      c.add([...p, an], 'argument names starting with "dumbwaiter_" are reserved for the MCP server\'s own inputs (dumbwaiter_intent, dumbwaiter_plan_id)');
    }
    const s = argSpec(c, [...p, an], spec, cwd, offeredTo);
    if (s) {
      if (!defaultFits(s)) c.add([...p, an, 'default'], 'does not fit the argument\'s own type and constraints');
      args[an] = s;
    }
  }
  return args;
}
