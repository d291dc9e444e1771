// Reading allowlist.yaml into the editor's forms: every field as the file has it (a value the form
// cannot represent is kept as its text, never replaced by a default), one form per operation.
import { isMap, isSeq } from 'yaml';
import type { ArgForm, OpForm, ReconcileForm, TypeForm } from './form';
import { lineAt, parse } from './yamlText';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v));
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
const list = (v: unknown, sep: string): string => (Array.isArray(v) ? v.map(text).join(sep) : text(v));
const items = (v: unknown): string[] => (Array.isArray(v) ? v.map(text) : v === undefined ? [] : [text(v)]);
/**
 * A select's value as the file has it: '' when absent, the text of a string, else its JSON (`null`,
 * `5`, `""`). A value the select does not offer is shown as invalid and never replaced by a default.
 */
export const choice = (v: unknown): string => (v === undefined ? '' : typeof v === 'string' && v !== '' ? v : (JSON.stringify(v) ?? String(v)));

function typeForm(raw: Obj): TypeForm {
  return {
    type: text(raw.type),
    pattern: text(raw.pattern),
    max_length: text(raw.max_length),
    enum: items(raw.enum),
    allow_dash: bool(raw.allow_dash),
    min: text(raw.min),
    max: text(raw.max),
    flag: text(raw.flag),
    within: list(raw.within, '\n'),
    must_exist: bool(raw.must_exist),
    shared_with_sandbox: bool(raw.shared_with_sandbox),
  };
}

function argForm(name: string, raw: unknown): ArgForm {
  const r = isObj(raw) ? raw : {};
  return {
    ...typeForm(r),
    key: name,
    name,
    description: text(r.description),
    required: r.required === true ? 'required' : r.required === false ? 'optional' : r.required === undefined ? '' : (JSON.stringify(r.required) ?? String(r.required)),
    hasDefault: r.default !== undefined,
    default: Array.isArray(r.default) ? r.default.map(text).join('\n') : text(r.default),
    items: typeForm(isObj(r.items) ? r.items : {}),
    max_items: text(r.max_items),
  };
}

const commandOf = (v: unknown): string[] => (Array.isArray(v) ? v.map(text) : v === undefined ? [] : [text(v)]);

function reconcileForm(raw: unknown): ReconcileForm | null {
  if (raw === undefined || raw === null) return null;
  const r = isObj(raw) ? raw : {};
  return { command: commandOf(r.command), timeout_s: text(r.timeout_s) };
}

/** The form values of one operation (as plain data from the YAML). */
export function opForm(raw: unknown): OpForm {
  const r = isObj(raw) ? raw : {};
  return {
    name: text(r.name),
    description: text(r.description),
    command: commandOf(r.command),
    cwd: text(r.cwd),
    cwd_shared_with_sandbox: bool(r.cwd_shared_with_sandbox),
    env: isObj(r.env) ? Object.entries(r.env).map(([name, value]) => ({ name, value: text(value) })) : [],
    args: isObj(r.args) ? Object.entries(r.args).map(([n, spec]) => argForm(n, spec)) : [],
    scope: choice(r.scope),
    approval: choice(r.approval),
    timeout_s: text(r.timeout_s),
    max_output_bytes: text(r.max_output_bytes),
    concurrency: text(r.concurrency),
    cost: text(r.cost),
    reconcile: reconcileForm(r.reconcile),
    spools: items(r.spools),
  };
}

export interface ReadResult {
  /** YAML syntax errors (the form cannot be used until they are fixed in the text). */
  syntaxErrors: { line: number; message: string }[];
  /** One entry per item of `operations` (null when an item is not a mapping). */
  ops: (OpForm | null)[];
}

export function readOperations(src: string): ReadResult {
  const doc = parse(src);
  if (doc.errors.length > 0) return { syntaxErrors: doc.errors.map((e) => ({ line: lineAt(src, e.pos[0]), message: e.message.split('\n')[0]! })), ops: [] };
  const ops = doc.get('operations', true);
  if (!isSeq(ops)) return { syntaxErrors: [], ops: [] };
  return { syntaxErrors: [], ops: ops.items.map((item) => (isMap(item) ? opForm(item.toJSON()) : null)) };
}
