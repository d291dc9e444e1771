// Writing a form back into the YAML document node by node (yaml's Document API), so that comments, key
// order and everything the form did not touch survive: only the fields that changed between the
// previous form and the new one are written, and an untouched field's node stays exactly as it is,
// even when the form cannot represent it (a number with a fraction, a misspelt scope, a value with commas).
import { isMap, isScalar, isSeq, stringify, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import { ALL_TYPE_FIELDS, ARG_FIELDS, ARG_TYPE_FIELDS, type OperationField } from '../../../shared/allowlist/schema';
import type { ArgForm, OpForm, ReconcileForm, TypeForm } from './form';
import { argValue, deepEqual, opValue, reconcileValue, typeValue } from './formValue';
import { isObj, type Obj } from './readForm';
import { STRINGIFY } from './yamlText';
/** A new reconcile block: a block mapping, its command on one line as the operation's is. */
function reconcileNode(doc: Document, r: ReconcileForm): YAMLMap {
  const node = doc.createNode(reconcileValue(r)) as YAMLMap;
  const command = node.get('command', true);
  if (isSeq(command)) command.flow = true;
  return node;
}

/** Keys of an argument the form owns: others in the file (say a misspelt field) are left for the YAML view. */
const ARG_KEYS = [...Object.keys(ARG_FIELDS), ...ALL_TYPE_FIELDS, ...Object.keys(ARG_TYPE_FIELDS.array)];
/** Collections written compactly on one line, like the example file. */
const FLOW_KEYS = new Set(['command', 'env', 'enum', 'within', 'items', 'default', 'spools']);

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
const TYPE_FIELDS = ALL_TYPE_FIELDS;

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
const OP_FIELDS = ['name', 'description', 'command', 'cwd', 'cwd_shared_with_sandbox', 'env', 'scope', 'approval', 'timeout_s', 'max_output_bytes', 'concurrency', 'cost', 'spools'] as const satisfies readonly (OperationField & keyof OpForm)[];

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

export function syncOp(doc: Document, node: YAMLMap, f: OpForm, prev: OpForm): void {
  const v = opValue(f);
  for (const k of OP_FIELDS) if (!deepEqual(f[k], prev[k])) setKey(doc, node, k, v[k], false);
  syncArgs(doc, node, f.args, prev.args);
  syncReconcile(doc, node, f.reconcile, prev.reconcile);
}

/** A new operation's node: the operation a block mapping, its lists and argument specs on one line each. */
export function createOp(doc: Document, f: OpForm): YAMLMap {
  const node = doc.createNode(opValue(f)) as YAMLMap;
  for (const p of node.items) {
    const k = keyOf(p);
    if (typeof k === 'string' && FLOW_KEYS.has(k) && (isMap(p.value) || isSeq(p.value))) p.value.flow = true;
    if (k === 'args' && isMap(p.value)) for (const a of p.value.items) if (isMap(a.value)) a.value.flow = true;
    if (k === 'reconcile' && f.reconcile) p.value = reconcileNode(doc, f.reconcile);
  }
  return node;
}



export function operationsSeq(doc: Document) {
  const ops = doc.get('operations', true);
  if (isSeq(ops)) return ops;
  return null;
}
