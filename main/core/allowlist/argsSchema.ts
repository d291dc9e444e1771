// The JSON Schema (draft 2020-12) of an operation's args, published in catalog.json.
import type { ArgSpec, Operation, ScalarArg } from './types';

/**
 * JSON Schema's `pattern` is an ECMA-262 regular expression; the host matches with RE2, whose syntax
 * mostly agrees. A pattern is published only when a JavaScript engine accepts it too (clients may
 * check a value with it before sending; the host's RE2 check is the one that counts), and the RE2
 * source is always given as `x-re2-pattern`.
 */
function publishedPattern(source: string): Record<string, string> {
  const anchored = `^(?:${source})$`;
  try {
    new RegExp(anchored, 'u');
    return { pattern: anchored, 'x-re2-pattern': source };
  } catch {
    return { 'x-re2-pattern': source };
  }
}

function scalarSchema(t: ScalarArg): Record<string, unknown> {
  switch (t.type) {
    case 'string':
      return {
        type: 'string',
        maxLength: t.max_length,
        ...(t.patternSource !== null ? publishedPattern(t.patternSource) : {}),
        ...(t.enum ? { enum: t.enum } : {}),
      };
    case 'integer':
      return { type: 'integer', ...(t.min !== null ? { minimum: t.min } : {}), ...(t.max !== null ? { maximum: t.max } : {}) };
    case 'boolean':
      return { type: 'boolean' };
    case 'path':
      return {
        type: 'string',
        minLength: 1,
        description: `A path inside ${t.within.join(' or ')}${t.must_exist ? ' that exists' : ''}`,
      };
  }
}

function argSchema(spec: ArgSpec): Record<string, unknown> {
  const base = spec.type === 'array' ? { type: 'array', items: scalarSchema(spec.items), maxItems: spec.max_items } : scalarSchema(spec);
  return {
    ...base,
    ...(spec.description ? { description: spec.description } : {}),
    ...(spec.default !== undefined ? { default: spec.default } : {}),
  };
}

export function argsSchema(op: Operation): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, spec] of Object.entries(op.args)) {
    properties[name] = argSchema(spec);
    if (spec.required) required.push(name);
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties,
    required,
    additionalProperties: false,
  };
}
