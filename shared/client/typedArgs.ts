// Turns `name=value` words into the typed `args` an operation's args_schema asks for, and checks them,
// so that a mistake is caught (naming the argument) before anything is written to the spool.

export class ArgError extends Error {}

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  pattern?: string;
  maxLength?: number;
  minLength?: number;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  maxItems?: number;
}

function convert(name: string, s: Schema, text: string): unknown {
  switch (s.type) {
    case 'integer': {
      if (!/^-?\d+$/.test(text.trim())) throw new ArgError(`argument "${name}" must be an integer, not "${text}"`);
      return Number(text);
    }
    case 'boolean': {
      const t = text.trim().toLowerCase();
      if (['true', 'yes', '1', 'on'].includes(t)) return true;
      if (['false', 'no', '0', 'off'].includes(t)) return false;
      throw new ArgError(`argument "${name}" must be true or false, not "${text}"`);
    }
    default:
      return text;
  }
}

function check(name: string, s: Schema, v: unknown): void {
  const fail = (why: string) => {
    throw new ArgError(`argument "${name}" ${why}`);
  };
  switch (s.type) {
    case 'string':
      if (typeof v !== 'string') fail('must be a string');
      if (s.maxLength !== undefined && [...(v as string)].length > s.maxLength) fail(`is longer than ${s.maxLength} characters`);
      if (s.minLength !== undefined && [...(v as string)].length < s.minLength) fail('must not be empty');
      if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v as string)) fail(`does not match ${s.pattern}`);
      break;
    case 'integer':
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) fail('must be an integer');
      if (s.minimum !== undefined && (v as number) < s.minimum) fail(`must be at least ${s.minimum}`);
      if (s.maximum !== undefined && (v as number) > s.maximum) fail(`must be at most ${s.maximum}`);
      break;
    case 'boolean':
      if (typeof v !== 'boolean') fail('must be true or false');
      break;
    case 'array':
      if (!Array.isArray(v)) fail('must be a list');
      if (s.maxItems !== undefined && (v as unknown[]).length > s.maxItems) fail(`has more than ${s.maxItems} items`);
      (v as unknown[]).forEach((item, i) => check(`${name}[${i}]`, s.items ?? {}, item));
      break;
  }
  if (s.enum && !s.enum.includes(v)) fail(`must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`);
}

/** Checks a whole args object against the schema (for --args-json, and after building from pairs). */
export function checkArgs(schema: Schema, args: Record<string, unknown>): void {
  const props = schema.properties ?? {};
  for (const name of Object.keys(args)) {
    if (!Object.hasOwn(props, name)) {
      const known = Object.keys(props);
      throw new ArgError(`unknown argument "${name}" (${known.length ? `expected: ${known.join(', ')}` : 'this operation takes none'})`);
    }
    check(name, props[name]!, args[name]);
  }
  for (const name of schema.required ?? []) if (!Object.hasOwn(args, name)) throw new ArgError(`missing required argument "${name}"`);
}

/** `name=value` words, typed by the schema; an array argument may repeat or be given as a JSON array. */
export function argsFromPairs(schema: Schema, pairs: string[], base: Record<string, unknown> = {}): Record<string, unknown> {
  const props = schema.properties ?? {};
  const args: Record<string, unknown> = { ...base };
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ArgError(`"${pair}" is not name=value`);
    const name = pair.slice(0, eq);
    const text = pair.slice(eq + 1);
    // Own properties only: `__proto__` or `constructor` would find Object.prototype's.
    const s = Object.hasOwn(props, name) ? props[name] : undefined;
    if (!s) {
      const known = Object.keys(props);
      throw new ArgError(`unknown argument "${name}" (${known.length ? `expected: ${known.join(', ')}` : 'this operation takes none'})`);
    }
    if (s.type === 'array') {
      let items: unknown[];
      if (text.trim().startsWith('[')) {
        try {
          items = JSON.parse(text) as unknown[];
        } catch {
          throw new ArgError(`argument "${name}": "${text}" is not a JSON array`);
        }
      } else items = [convert(name, s.items ?? {}, text)];
      args[name] = [...((args[name] as unknown[] | undefined) ?? []), ...items];
    } else args[name] = convert(name, s, text);
  }
  checkArgs(schema, args);
  return args;
}

/** One line per argument, for `dw ops`. */
export function describeArgs(schema: Schema): string[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, s]) => {
    const t = s.type === 'array' ? `list of ${s.items?.type ?? 'values'}` : (s.type ?? 'value');
    const bits = [
      s.enum ? `one of ${s.enum.map((e) => JSON.stringify(e)).join('|')}` : null,
      s.pattern ? `matching ${s.pattern}` : null,
      s.maxLength !== undefined ? `at most ${s.maxLength} chars` : null,
      s.minimum !== undefined ? `>= ${s.minimum}` : null,
      s.maximum !== undefined ? `<= ${s.maximum}` : null,
      s.maxItems !== undefined ? `at most ${s.maxItems} items` : null,
      required.has(name) ? 'required' : 'default' in (s as object) ? `default ${JSON.stringify((s as { default: unknown }).default)}` : 'optional',
    ].filter(Boolean);
    const desc = (s as { description?: string }).description;
    return `${name}: ${t}${bits.length ? ` (${bits.join(', ')})` : ''}${desc ? ` - ${desc}` : ''}`;
  });
}
