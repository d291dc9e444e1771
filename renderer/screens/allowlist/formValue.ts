// A form as the data it stands for in the file (undefined: no such key): what writing compares with
// the nodes, and what merging compares operations by.
import type { ArgForm, OpForm, ReconcileForm, TypeForm } from './form';
import { isObj, type Obj } from './readForm';

const INT = /^-?\d+$/;
const NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;
/**
 * A number when it reads as one (a fraction too: the validator then says it must be whole); otherwise
 * the text itself, so the validator names the field.
 */
function num(s: string): number | string | undefined {
  const t = s.trim();
  if (t === '') return undefined;
  if (INT.test(t)) return Number.isSafeInteger(Number(t)) ? Number(t) : s;
  return NUMBER.test(t) && Number.isFinite(Number(t)) ? Number(t) : s;
}
const opt = (s: string): string | undefined => (s === '' ? undefined : s);
const lines = (s: string): string[] | undefined => {
  const l = s.split('\n').map((x) => x.trim()).filter((x) => x !== '');
  return l.length ? l : undefined;
};

export function typeValue(t: TypeForm, forItems: boolean): Obj {
  const o: Obj = { type: t.type };
  switch (t.type) {
    case 'string':
      o.pattern = opt(t.pattern);
      o.max_length = num(t.max_length);
      o.enum = t.enum.length ? [...t.enum] : undefined;
      o.allow_dash = t.allow_dash ?? undefined;
      break;
    case 'integer':
      o.min = num(t.min);
      o.max = num(t.max);
      break;
    case 'boolean':
      if (!forItems) o.flag = opt(t.flag);
      break;
    case 'path':
      o.within = lines(t.within);
      o.must_exist = t.must_exist ?? undefined;
      o.shared_with_sandbox = t.shared_with_sandbox ?? undefined;
      break;
  }
  return o;
}

function scalarDefault(type: string, s: string): unknown {
  if (type === 'integer') return num(s) ?? s;
  if (type === 'boolean') return s === 'true' ? true : s === 'false' ? false : s;
  return s;
}

/** An argument's specification as it should stand in the file (undefined: no such key). */
export function argValue(a: ArgForm): Obj {
  const o = a.type === 'array' ? { type: 'array', items: typeValue(a.items, true), max_items: num(a.max_items) } : typeValue(a, false);
  o.description = opt(a.description);
  o.required = a.required === 'required' ? true : a.required === 'optional' ? false : a.required === '' ? undefined : rawJson(a.required);
  o.default = !a.hasDefault
    ? undefined
    : a.type === 'array'
      ? (lines(a.default) ?? []).map((x) => scalarDefault(a.items.type, x))
      : scalarDefault(a.type, a.default);
  return o;
}

/** Back from `choice`/`required`'s JSON form (only reached when the person picked that value again). */
function rawJson(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return s;
  }
}

/** The operation as it should stand in the file. */
export function opValue(f: OpForm): Obj {
  const args: Obj = {};
  for (const a of f.args) args[a.name] = argValue(a);
  const env: Obj = {};
  for (const e of f.env) env[e.name] = e.value;
  return {
    name: f.name,
    description: opt(f.description),
    command: f.command,
    cwd: opt(f.cwd),
    cwd_shared_with_sandbox: f.cwd_shared_with_sandbox ?? undefined,
    env: f.env.length ? env : undefined,
    args: f.args.length ? args : undefined,
    scope: f.scope === '' ? undefined : rawJson(f.scope),
    approval: f.approval === '' ? undefined : rawJson(f.approval),
    timeout_s: num(f.timeout_s),
    max_output_bytes: num(f.max_output_bytes),
    concurrency: num(f.concurrency),
    cost: num(f.cost),
    reconcile: reconcileValue(f.reconcile),
    spools: f.spools.length ? [...f.spools] : undefined,
  };
}

export function reconcileValue(r: ReconcileForm | null): Obj | undefined {
  return r ? { command: r.command, timeout_s: num(r.timeout_s) } : undefined;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}
