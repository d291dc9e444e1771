// Merging with an outside edit: the editor's unsaved changes applied, operation by operation, to the
// version of allowlist.yaml now on disk.
import { addOperation, applyOperation, deleteOperation } from './edits';
import type { OpForm } from './form';
import { deepEqual, opValue } from './formValue';
import { readOperations } from './readForm';

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
