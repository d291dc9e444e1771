// Checks a request's `args` against an operation's declared arguments (the `bad_args` rule).
import { checkPath } from './pathArg';
import { leadingArgs } from './template';
import type { ArgSpec, Operation, ScalarArg } from './types';

export type ArgsCheck = { ok: true; values: Record<string, unknown> } | { ok: false; message: string };

class BadArg extends Error {}

function checkScalar(spec: ScalarArg, v: unknown, where: string, op: Operation, startsElement: boolean): unknown {
  switch (spec.type) {
    case 'string': {
      if (typeof v !== 'string') throw new BadArg(`${where} must be a string`);
      if (v.includes('\0')) throw new BadArg(`${where} contains a NUL byte`);
      if ([...v].length > spec.max_length) throw new BadArg(`${where} is longer than ${spec.max_length} characters`);
      if (spec.enum && !spec.enum.includes(v)) throw new BadArg(`${where} must be one of ${spec.enum.map((e) => JSON.stringify(e)).join(', ')}`);
      if (spec.pattern && !spec.pattern.matches(v)) throw new BadArg(`${where} does not match the pattern ${spec.patternSource}`);
      if (startsElement && !spec.allow_dash && v.startsWith('-')) {
        throw new BadArg(`${where} must not start with "-" (it would be read as an option)`);
      }
      return v;
    }
    case 'integer': {
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new BadArg(`${where} must be an integer`);
      if (spec.min !== null && v < spec.min) throw new BadArg(`${where} must be at least ${spec.min}`);
      if (spec.max !== null && v > spec.max) throw new BadArg(`${where} must be at most ${spec.max}`);
      if (startsElement && v < 0 && !(spec.min !== null && spec.min < 0)) {
        throw new BadArg(`${where} must not be negative here: "${v}" would be read as an option (an argument with a min below 0 allows it)`);
      }
      return v;
    }
    case 'boolean': {
      if (typeof v !== 'boolean') throw new BadArg(`${where} must be true or false`);
      return v;
    }
    case 'path': {
      if (typeof v !== 'string') throw new BadArg(`${where} must be a string path`);
      const r = checkPath(v, op.cwd, spec.within, spec.must_exist);
      if (!r.ok) throw new BadArg(`${where} ${r.message}`);
      return r.path;
    }
  }
}

function checkOne(spec: ArgSpec, v: unknown, name: string, op: Operation, startsElement: boolean): unknown {
  if (spec.type !== 'array') return checkScalar(spec, v, `argument "${name}"`, op, startsElement);
  if (!Array.isArray(v)) throw new BadArg(`argument "${name}" must be an array`);
  if (v.length > spec.max_items) throw new BadArg(`argument "${name}" has more than ${spec.max_items} items`);
  return v.map((item, i) => checkScalar(spec.items, item, `argument "${name}"[${i}]`, op, true));
}

/** The values to render: validated, with defaults filled in; absent optional arguments left out. */
export function validateArgs(op: Operation, args: Record<string, unknown>): ArgsCheck {
  try {
    for (const name of Object.keys(args)) {
      if (!Object.hasOwn(op.args, name)) {
        const known = Object.keys(op.args);
        throw new BadArg(`unknown argument "${name}" (${known.length ? 'expected: ' + known.join(', ') : 'this operation takes none'})`);
      }
    }
    // Reconcile's template too: a value checked here is rendered there as well, where it may lead an element.
    const leading = new Set([...op.template, ...(op.reconcile?.template ?? [])].flatMap(leadingArgs));
    const values: Record<string, unknown> = {};
    for (const [name, spec] of Object.entries(op.args)) {
      if (Object.hasOwn(args, name)) values[name] = checkOne(spec, args[name], name, op, leading.has(name));
      else if (spec.default !== undefined) values[name] = checkOne(spec, spec.default, name, op, leading.has(name));
      else if (spec.required) throw new BadArg(`missing required argument "${name}"`);
    }
    return { ok: true, values };
  } catch (e) {
    if (e instanceof BadArg) return { ok: false, message: e.message };
    throw e;
  }
}
