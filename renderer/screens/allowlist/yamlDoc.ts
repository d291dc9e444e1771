// The allowlist editor's model of allowlist.yaml: operations read into plain form values, and form
// values written back into the YAML document node by node (yaml's Document API), so that comments,
// key order and everything the form did not touch survive. Only the fields that changed between the
// previous form and the new one are written: an untouched field's node stays exactly as it is, even
// when the form cannot represent it (a number with a fraction, a misspelt scope, a value with commas).
// Lines the edit did not change are kept byte for byte from the original text (comment alignment,
// spacing, blank lines). Pure: no DOM, no IPC.
import { isMap, isScalar, isSeq, parseDocument, stringify, type Document, type Node, type Pair, type YAMLMap } from 'yaml';

export type ArgTypeName = 'string' | 'integer' | 'boolean' | 'path' | 'array';
export type ScalarTypeName = Exclude<ArgTypeName, 'array'>;
export const ARG_TYPES: ArgTypeName[] = ['string', 'integer', 'boolean', 'path', 'array'];
export const SCALAR_TYPES: ScalarTypeName[] = ['string', 'integer', 'boolean', 'path'];

/** One type's constraints as typed (numbers stay text until written, so half-typed values are kept). */
export interface TypeForm {
  type: string;
  pattern: string;
  max_length: string;
  /** The allowed values, one per entry, exactly as typed (commas and spaces are part of a value). */
  enum: string[];
  allow_dash: boolean | null;
  min: string;
  max: string;
  flag: string;
  /** One folder per line. */
  within: string;
  must_exist: boolean | null;
  shared_with_sandbox: boolean | null;
}

export interface ArgForm extends TypeForm {
  /**
   * The argument's name in the file as last read or written (null for one not yet written): a rename
   * keeps its place, and the fields are compared with the same argument's previous form.
   */
  key: string | null;
  name: string;
  description: string;
  /** '' (automatic), 'required', 'optional', or what else the file says (JSON, e.g. `"yes"`): kept until changed. */
  required: string;
  hasDefault: boolean;
  /** The default as text; for arrays one item per line. */
  default: string;
  items: TypeForm;
  max_items: string;
}

export interface EnvForm {
  name: string;
  value: string;
}

/** An operation's reconcile command: the lookup that says whether a run the host lost track of took effect. */
export interface ReconcileForm {
  /** argv template: the op's {args} and {request_id}. */
  command: string[];
  timeout_s: string;
}

export interface OpForm {
  name: string;
  description: string;
  command: string[];
  cwd: string;
  cwd_shared_with_sandbox: boolean | null;
  env: EnvForm[];
  args: ArgForm[];
  /** '' (the default), 'read', 'write', or whatever else the file says (see `choice`): kept until changed. */
  scope: string;
  /** '' (the default), 'never', 'always', or whatever else the file says: kept until changed. */
  approval: string;
  timeout_s: string;
  max_output_bytes: string;
  concurrency: string;
  cost: string;
  /** null: the operation declares none. */
  reconcile: ReconcileForm | null;
}

export const SCOPES = ['read', 'write'] as const;
export const APPROVALS = ['always', 'never'] as const;
export const REQUIRED = ['required', 'optional'] as const;

export const OP_DEFAULTS = { timeout_s: '600', max_output_bytes: '1048576', concurrency: '1', cost: '0' } as const;
export const RECONCILE_DEFAULTS = { timeout_s: '30' } as const;

export function emptyType(type = 'string'): TypeForm {
  return { type, pattern: '', max_length: '', enum: [], allow_dash: null, min: '', max: '', flag: '', within: '', must_exist: null, shared_with_sandbox: null };
}

export function emptyArg(name = ''): ArgForm {
  return { ...emptyType(), key: null, name, description: '', required: '', hasDefault: false, default: '', items: emptyType(), max_items: '' };
}

export function emptyOp(name = ''): OpForm {
  return { name, description: '', command: [''], cwd: '', cwd_shared_with_sandbox: null, env: [], args: [], scope: '', approval: '', timeout_s: '', max_output_bytes: '', concurrency: '', cost: '', reconcile: null };
}

// ---------------------------------------------------------------- reading

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
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
  };
}

export interface ReadResult {
  /** YAML syntax errors (the form cannot be used until they are fixed in the text). */
  syntaxErrors: { line: number; message: string }[];
  /** One entry per item of `operations` (null when an item is not a mapping). */
  ops: (OpForm | null)[];
}

function parse(src: string): Document.Parsed {
  return parseDocument(src, { uniqueKeys: true, prettyErrors: false, keepSourceTokens: false });
}

function lineAt(src: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset && i < src.length; i++) if (src.charCodeAt(i) === 10) n++;
  return n;
}

export function readOperations(src: string): ReadResult {
  const doc = parse(src);
  if (doc.errors.length > 0) return { syntaxErrors: doc.errors.map((e) => ({ line: lineAt(src, e.pos[0]), message: e.message.split('\n')[0]! })), ops: [] };
  const ops = doc.get('operations', true);
  if (!isSeq(ops)) return { syntaxErrors: [], ops: [] };
  return { syntaxErrors: [], ops: ops.items.map((item) => (isMap(item) ? opForm(item.toJSON()) : null)) };
}

// ---------------------------------------------------------------- writing

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

function typeValue(t: TypeForm, forItems: boolean): Obj {
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
function argValue(a: ArgForm): Obj {
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
function opValue(f: OpForm): Obj {
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
  };
}

function reconcileValue(r: ReconcileForm | null): Obj | undefined {
  return r ? { command: r.command, timeout_s: num(r.timeout_s) } : undefined;
}

/** A new reconcile block: a block mapping, its command on one line as the operation's is. */
function reconcileNode(doc: Document, r: ReconcileForm): YAMLMap {
  const node = doc.createNode(reconcileValue(r)) as YAMLMap;
  const command = node.get('command', true);
  if (isSeq(command)) command.flow = true;
  return node;
}

/** Keys of an argument the form owns: others in the file (say a misspelt field) are left for the YAML view. */
const ARG_KEYS = ['type', 'description', 'required', 'default', 'pattern', 'max_length', 'enum', 'allow_dash', 'min', 'max', 'flag', 'within', 'must_exist', 'shared_with_sandbox', 'items', 'max_items'];
/** Collections written compactly on one line, like the example file. */
const FLOW_KEYS = new Set(['command', 'env', 'enum', 'within', 'items', 'default']);

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

const scalarish = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** Node value as data. */
const js = (n: unknown): unknown => (n && typeof n === 'object' && 'toJSON' in n ? (n as { toJSON(): unknown }).toJSON() : n);

/**
 * Makes `node` hold `value`, changing it in place where it can (so its comments stay). Returns the
 * node to keep under its key. `loose`: a number standing for the same text is left alone (command, env).
 */
function sync(doc: Document, node: unknown, value: unknown, flow: boolean, loose: boolean, owned?: string[]): unknown {
  if (isScalar(node) && scalarish(value)) {
    const cur = node.value;
    if (cur === value || (loose && typeof value === 'string' && scalarish(cur) && String(cur) === value)) return node;
    // Quotes the author chose stay; quotes the old text needed ("", "{x}", "~") go if the new one does not.
    const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
    if (!quoted || /^["']/.test(stringify(cur, STRINGIFY))) node.type = undefined;
    node.value = value;
    delete (node as { source?: string }).source;
    return node;
  }
  if (isSeq(node) && Array.isArray(value)) {
    value.forEach((v, i) => {
      if (i < node.items.length) {
        const kept = sync(doc, node.items[i], v, true, loose);
        if (kept !== node.items[i]) node.items[i] = kept;
      } else node.items.push(create(doc, v, true));
    });
    node.items.splice(value.length);
    return node;
  }
  if (isMap(node) && isObj(value)) {
    syncMap(doc, node, value, loose, owned);
    return node;
  }
  return create(doc, value, flow || (isMap(node) || isSeq(node) ? Boolean(node.flow) : false));
}

function create(doc: Document, value: unknown, flow: boolean): Node {
  const n = doc.createNode(value, { flow }) as Node;
  return n;
}

function keyOf(p: Pair): unknown {
  return isScalar(p.key) ? p.key.value : p.key;
}

function syncMap(doc: Document, map: YAMLMap, value: Obj, loose: boolean, owned?: string[]): void {
  for (const p of [...map.items]) {
    const k = keyOf(p);
    if (typeof k === 'string' && (owned ? owned.includes(k) : true) && value[k] === undefined) map.delete(k);
  }
  for (const [k, v] of Object.entries(value)) if (v !== undefined) setKey(doc, map, k, v, loose);
}

/** Makes `map[k]` hold `v` (undefined: no such key), changing the node in place where it can. */
function setKey(doc: Document, map: YAMLMap, k: string, v: unknown, loose: boolean): void {
  const pair = map.items.find((p) => keyOf(p) === k);
  if (v === undefined) {
    if (pair) map.delete(k);
    return;
  }
  const flow = FLOW_KEYS.has(k);
  if (!pair) {
    map.add(doc.createPair(k, v, { flow }) as Pair);
    return;
  }
  if (deepEqual(js(pair.value), v)) return;
  const kept = sync(doc, pair.value, v, flow, loose || k === 'env' || k === 'command', k === 'items' ? ARG_KEYS : undefined);
  if (kept !== pair.value) pair.value = kept;
}

/** The type's own fields (which of them a type uses: `typeValue`). */
const TYPE_FIELDS = ['pattern', 'max_length', 'enum', 'allow_dash', 'min', 'max', 'flag', 'within', 'must_exist', 'shared_with_sandbox'] as const;

/**
 * Writes the fields of a type that changed from `prev` to `t` into `map`. A changed type rewrites the
 * whole specification (its constraints belong to the old type); keys the form does not know stay.
 */
function syncType(doc: Document, map: YAMLMap, t: TypeForm, prev: TypeForm, forItems: boolean): void {
  const v = typeValue(t, forItems);
  if (t.type !== prev.type) {
    syncMap(doc, map, v, false, ['type', ...TYPE_FIELDS]);
    return;
  }
  for (const k of TYPE_FIELDS) if (!deepEqual(t[k], prev[k])) setKey(doc, map, k, v[k], false);
}

/** Writes what changed in one argument (its node is `map`) from `prev` to `a`. */
function syncArg(doc: Document, map: YAMLMap, a: ArgForm, prev: ArgForm): void {
  const v = argValue(a);
  if (a.type !== prev.type) {
    syncMap(doc, map, v, false, ARG_KEYS);
    return;
  }
  if (a.type === 'array') {
    if (!deepEqual(a.items, prev.items)) {
      const items = map.get('items', true);
      if (isMap(items)) syncType(doc, items, a.items, prev.items, true);
      else setKey(doc, map, 'items', v.items, false);
    }
    if (a.max_items !== prev.max_items) setKey(doc, map, 'max_items', v.max_items, false);
  } else syncType(doc, map, a, prev, false);
  if (a.description !== prev.description) setKey(doc, map, 'description', v.description, false);
  if (a.required !== prev.required) setKey(doc, map, 'required', v.required, false);
  if (a.hasDefault !== prev.hasDefault || a.default !== prev.default || (a.type === 'array' && a.items.type !== prev.items.type)) setKey(doc, map, 'default', v.default, false);
}

function syncArgs(doc: Document, op: YAMLMap, args: ArgForm[], prev: ArgForm[]): void {
  if (deepEqual(args, prev)) return;
  if (args.length === 0) {
    op.delete('args');
    return;
  }
  const map = op.get('args', true);
  if (!isMap(map)) {
    const value: Obj = {};
    for (const a of args) value[a.name] = argValue(a);
    const created = doc.createNode(value) as YAMLMap;
    for (const p of created.items) if (isMap(p.value)) p.value.flow = true;
    if (op.has('args')) op.set('args', created);
    else op.add(doc.createPair('args', created) as Pair);
    return;
  }
  // Each argument with its previous form (by the name it has in the file), if it had one.
  const before = new Map<ArgForm, ArgForm>();
  for (const a of args) {
    const p = a.key === null ? undefined : prev.find((x) => x.name === a.key);
    if (p && ![...before.values()].includes(p)) before.set(a, p);
  }
  const pairOf = (name: string) => map.items.find((p) => keyOf(p) === name);
  // Arguments removed in the form go; the ones kept, renamed or not, keep their place and comments.
  const kept = new Map<ArgForm, Pair>();
  for (const [a, p] of before) {
    const pair = pairOf(p.name);
    if (pair) kept.set(a, pair);
  }
  const keptPairs = new Set(kept.values());
  for (const p of [...map.items]) if (typeof keyOf(p) === 'string' && !keptPairs.has(p)) map.items.splice(map.items.indexOf(p), 1);
  for (const [a, pair] of kept) {
    if (keyOf(pair) === a.name) continue;
    if (isScalar(pair.key)) {
      pair.key.value = a.name;
      delete (pair.key as { source?: string }).source;
    } else pair.key = doc.createNode(a.name);
  }
  for (const a of args) {
    const pair = kept.get(a);
    const p = before.get(a);
    if (!pair || !p) {
      map.add(doc.createPair(a.name, argValue(a), { flow: true }) as Pair);
      continue;
    }
    if (isMap(pair.value)) syncArg(doc, pair.value, a, p);
    else if (!deepEqual(js(pair.value), argValue(a)) && !deepEqual(a, p)) pair.value = doc.createNode(argValue(a), { flow: true });
  }
}

/** Keys an operation's form writes one by one (`args` has its own). */
const OP_FIELDS = ['name', 'description', 'command', 'cwd', 'cwd_shared_with_sandbox', 'env', 'scope', 'approval', 'timeout_s', 'max_output_bytes', 'concurrency', 'cost'] as const;

/** Writes what changed in the reconcile block field by field: its comments and keys the form does not know stay. */
function syncReconcile(doc: Document, op: YAMLMap, r: ReconcileForm | null, prev: ReconcileForm | null): void {
  if (deepEqual(r, prev)) return;
  const map = op.get('reconcile', true);
  if (r === null) {
    op.delete('reconcile');
    return;
  }
  if (prev === null || !isMap(map)) {
    if (op.has('reconcile')) op.set('reconcile', reconcileNode(doc, r));
    else op.add(doc.createPair('reconcile', reconcileNode(doc, r)) as Pair);
    return;
  }
  const v = reconcileValue(r)!;
  if (!deepEqual(r.command, prev.command)) setKey(doc, map, 'command', v.command, true);
  if (r.timeout_s !== prev.timeout_s) setKey(doc, map, 'timeout_s', v.timeout_s, false);
}

function syncOp(doc: Document, node: YAMLMap, f: OpForm, prev: OpForm): void {
  const v = opValue(f);
  for (const k of OP_FIELDS) if (!deepEqual(f[k], prev[k])) setKey(doc, node, k, v[k], false);
  syncArgs(doc, node, f.args, prev.args);
  syncReconcile(doc, node, f.reconcile, prev.reconcile);
}

/** Why a form cannot be written as it stands (two entries the file would hold under one key), or null. */
function formConflict(f: OpForm): string | null {
  const twice = (names: string[]) => names.find((n, i) => names.indexOf(n) !== i);
  const arg = twice(f.args.map((a) => a.name));
  if (arg !== undefined) return `Two arguments are named “${arg}”: rename one. Until then the file keeps the last version without the clash.`;
  const env = twice(f.env.map((e) => e.name));
  if (env !== undefined) return `Two environment variables are named “${env}”: rename one. Until then the file keeps the last version without the clash.`;
  return null;
}

/** The form as it stands once written: each argument's key is now its name in the file. */
export function settled(f: OpForm): OpForm {
  return f.args.every((a) => a.key === a.name) ? f : { ...f, args: f.args.map((a) => (a.key === a.name ? a : { ...a, key: a.name })) };
}

/** A new operation's node: the operation a block mapping, its lists and argument specs on one line each. */
function createOp(doc: Document, f: OpForm): YAMLMap {
  const node = doc.createNode(opValue(f)) as YAMLMap;
  for (const p of node.items) {
    const k = keyOf(p);
    if (typeof k === 'string' && FLOW_KEYS.has(k) && (isMap(p.value) || isSeq(p.value))) p.value.flow = true;
    if (k === 'args' && isMap(p.value)) for (const a of p.value.items) if (isMap(a.value)) a.value.flow = true;
    if (k === 'reconcile' && f.reconcile) p.value = reconcileNode(doc, f.reconcile);
  }
  return node;
}

const STRINGIFY = { lineWidth: 0, flowCollectionPadding: false } as const;

function operationsSeq(doc: Document) {
  const ops = doc.get('operations', true);
  if (isSeq(ops)) return ops;
  return null;
}

function loadDoc(src: string): Document.Parsed {
  const doc = parse(src);
  if (doc.errors.length > 0) throw new Error(`the YAML has syntax errors (line ${lineAt(src, doc.errors[0]!.pos[0])}): fix them in the YAML view first`);
  return doc;
}

/**
 * Writes the form of operation `index` into the text: only the fields that differ from `prev` (the
 * form as it was before this edit; by default the operation as the text has it now), so every field
 * the person did not change stays exactly as it is in the file.
 */
export function applyOperation(src: string, index: number, form: OpForm, prev?: OpForm): string {
  const conflict = formConflict(form);
  if (conflict) throw new Error(conflict);
  const doc = loadDoc(src);
  const node = operationsSeq(doc)?.items[index];
  if (!isMap(node)) throw new Error(`there is no operation ${index + 1} to change`);
  syncOp(doc, node, form, prev ?? opForm(node.toJSON()));
  return finish(src, doc);
}

/** Appends an operation; answers the new text and the new operation's index. */
export function addOperation(src: string, form: OpForm): { text: string; index: number } {
  const doc = src.trim() === '' ? parse('version: 1\noperations: []\n') : loadDoc(src);
  if (!isMap(doc.contents)) throw new Error('the file is not a mapping with "version: 1" and "operations:"; fix it in the YAML view');
  if (!doc.has('version')) doc.set('version', 1);
  let seq = operationsSeq(doc);
  if (!seq) {
    doc.set('operations', doc.createNode([]));
    seq = operationsSeq(doc)!;
  }
  seq.flow = false;
  const node = createOp(doc, form);
  if (seq.items.length > 0) node.spaceBefore = true;
  seq.items.push(node);
  return { text: finish(src, doc), index: seq.items.length - 1 };
}

export function deleteOperation(src: string, index: number): string {
  const doc = loadDoc(src);
  const seq = operationsSeq(doc);
  if (!seq || index < 0 || index >= seq.items.length) throw new Error(`there is no operation ${index + 1} to delete`);
  seq.items.splice(index, 1);
  return finish(src, doc);
}

/** An unused name like "new-operation-2". */
export function freshName(src: string, base = 'new-operation'): string {
  const taken = new Set(readOperations(src).ops.map((o) => o?.name));
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
}

// ---------------------------------------------------------------- keeping untouched lines

const norm = (l: string) => l.replace(/\s+/g, ' ').replace(/ #/g, ' #').trim();

/** Pairs of equal lines (longest common subsequence), as a map from a's index to b's. */
function lcs(a: string[], b: string[], eq: (x: string, y: string) => boolean): Map<number, number> {
  const n = a.length;
  const m = b.length;
  const t = new Array<Uint32Array>(n + 1);
  for (let i = 0; i <= n; i++) t[i] = new Uint32Array(m + 1);
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) t[i]![j] = eq(a[i]!, b[j]!) ? t[i + 1]![j + 1]! + 1 : Math.max(t[i + 1]![j]!, t[i]![j + 1]!);
  const out = new Map<number, number>();
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (eq(a[i]!, b[j]!)) out.set(i++, j++);
    else if (t[i + 1]![j]! >= t[i]![j + 1]!) i++;
    else j++;
  }
  return out;
}

const COMMENTED = /^(\s*)(\S.*?) (#.*)$/;

/** A changed line whose trailing comment the original aligned to a column keeps that column. */
function alignComment(line: string, original: string[]): string {
  const m = COMMENTED.exec(line);
  if (!m) return line;
  const [, indent, content, comment] = m as unknown as [string, string, string, string];
  const key = `${indent}${content.split(':')[0]}:`;
  for (const o of original) {
    if (!o.startsWith(key) || !o.endsWith(comment)) continue;
    const col = o.length - comment.length;
    const width = indent.length + content.length;
    return col > width + 1 && /\s$/.test(o.slice(0, col)) ? `${indent}${content}${' '.repeat(col - width)}${comment}` : line;
  }
  return line;
}

/**
 * The edited document as text, with every line the edit did not change taken from the original
 * (the library re-spaces comments and flow collections; people's files should not churn). Falls
 * back to the library's text whenever the result would mean anything else.
 */
function finish(original: string, doc: Document): string {
  const edited = doc.toString(STRINGIFY);
  const before = parse(original).toString(STRINGIFY);
  const o = original.split('\n');
  const b = before.split('\n');
  const e = edited.split('\n');
  if (o.length * b.length > 4_000_000 || b.length * e.length > 4_000_000) return edited;
  const bToO = lcs(b, o, (x, y) => norm(x) === norm(y));
  const bToE = lcs(b, e, (x, y) => x === y);
  const eFromB = new Map<number, number>();
  for (const [bi, ei] of bToE) eFromB.set(ei, bi);
  const out: string[] = [];
  let lastO = -1;
  e.forEach((line, ei) => {
    const bi = eFromB.get(ei);
    const oi = bi === undefined ? undefined : bToO.get(bi);
    if (oi !== undefined) {
      // Blank lines the library dropped between two kept lines come back too.
      const gap = lastO >= 0 ? o.slice(lastO + 1, oi) : [];
      if (gap.every((l) => l.trim() === '') && out[out.length - 1]?.trim() !== '') out.push(...gap);
      out.push(o[oi]!);
      lastO = oi;
    } else out.push(alignComment(line, o));
  });
  const merged = out.join('\n');
  const check = parse(merged);
  if (check.errors.length > 0 || !deepEqual(check.toJS(), parse(edited).toJS())) return edited;
  return merged;
}

// ---------------------------------------------------------------- merging with an outside edit

export interface MergeResult {
  /** The disk version with the editor's changes applied (when there are no conflicts). */
  text: string;
  /** Operations both sides changed differently: the merge is refused when there are any. */
  conflicts: string[];
}

/**
 * Applies the changes made in the editor (`base` -> `mine`) to the version now on disk, operation by
 * operation (by name): changed, added and deleted operations. An operation changed on both sides,
 * or deleted on one and changed on the other, is a conflict. Comments of the disk version are kept.
 */
export function mergeEdits(base: string, mine: string, disk: string): MergeResult {
  const b = readOperations(base);
  const m = readOperations(mine);
  const d = readOperations(disk);
  if (b.syntaxErrors.length || m.syntaxErrors.length || d.syntaxErrors.length) throw new Error('a version has YAML syntax errors: merge by hand');
  const byName = (ops: (OpForm | null)[]) => new Map(ops.flatMap((o) => (o ? [[o.name, o] as const] : [])));
  const bm = byName(b.ops);
  const mm = byName(m.ops);
  const same = (x: OpForm | undefined, y: OpForm | undefined) => (x && y ? deepEqual(opValue(x), opValue(y)) : x === y);
  const conflicts: string[] = [];
  let text = disk;
  const diskIndex = (name: string) => readOperations(text).ops.findIndex((o) => o?.name === name);
  for (const [name, mo] of mm) {
    const bo = bm.get(name);
    if (same(bo, mo)) continue;
    const at = diskIndex(name);
    const dop = at >= 0 ? readOperations(text).ops[at]! : undefined;
    if (bo === undefined) {
      if (dop === undefined) text = addOperation(text, mo).text;
      else if (!same(dop, mo)) conflicts.push(name);
    } else if (dop === undefined || !same(dop, bo)) {
      if (!same(dop, mo)) conflicts.push(name);
    } else text = applyOperation(text, at, { ...mo, args: mo.args.map((a) => ({ ...a, key: dop.args.some((x) => x.name === a.key) ? a.key : null })) });
  }
  for (const [name, bo] of bm) {
    if (mm.has(name)) continue;
    const at = diskIndex(name);
    if (at < 0) continue;
    if (same(readOperations(text).ops[at]!, bo)) text = deleteOperation(text, at);
    else conflicts.push(name);
  }
  return { text, conflicts };
}
