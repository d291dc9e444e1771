// The edits the allowlist screen makes to the text: an operation's form written in, an operation added
// or deleted. Each writes the changed nodes (writeNodes.ts), then keeps every line the edit did not
// change as the original had it (keepText.ts).
import { isMap } from 'yaml';
import type { OpForm } from './form';
import { keepUntouchedLines } from './keepText';
import { opForm, readOperations } from './readForm';
import { createOp, operationsSeq, syncOp } from './writeNodes';
import { loadDoc, parse } from './yamlText';

/** Why a form cannot be written as it stands (two entries the file would hold under one key), or null. */
function formConflict(f: OpForm): string | null {
  const twice = (names: string[]) => names.find((n, i) => names.indexOf(n) !== i);
  const arg = twice(f.args.map((a) => a.name));
  if (arg !== undefined) return `Two arguments are named “${arg}”: rename one. Until then the file keeps the last version without the clash.`;
  const env = twice(f.env.map((e) => e.name));
  if (env !== undefined) return `Two environment variables are named “${env}”: rename one. Until then the file keeps the last version without the clash.`;
  return null;
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
  return keepUntouchedLines(src, doc);
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
  return { text: keepUntouchedLines(src, doc), index: seq.items.length - 1 };
}

export function deleteOperation(src: string, index: number): string {
  const doc = loadDoc(src);
  const seq = operationsSeq(doc);
  if (!seq || index < 0 || index >= seq.items.length) throw new Error(`there is no operation ${index + 1} to delete`);
  seq.items.splice(index, 1);
  return keepUntouchedLines(src, doc);
}

/** An unused name like "new-operation-2". */
export function freshName(src: string, base = 'new-operation'): string {
  const taken = new Set(readOperations(src).ops.map((o) => o?.name));
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
}
