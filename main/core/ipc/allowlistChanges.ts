// What an allowlist save changes in what may run: the operations added (every field, with its value),
// changed (each changed field before and after) and removed. The native question before a save from a
// page shows this, so the person sees what decides each run (command, folder, environment, roots,
// reconcile command...) and not only the page's word for it.
import { parseAllowlist } from '../allowlist/load';
import type { ArgType, Operation } from '../allowlist/types';
import { changedFields, describeChange, describeOperation, type OperationValues } from '../../../shared/allowlist/describe';
import { visible } from '../../../shared/text/visible';

export interface AllowlistChanges {
  added: Operation[];
  /** `fields`: the described fields that differ (`env`, `args.file.within`, ...). */
  changed: { before: Operation; after: Operation; fields: string[] }[];
  removed: string[];
}

function operationsOf(text: string, file: string): Map<string, Operation> {
  try {
    return parseAllowlist(text, file).operations;
  } catch {
    return new Map(); // an invalid file allows nothing: everything in the new one is added
  }
}

/** An argument's values as the schema names them: a string's compiled pattern by its source text. */
function argValues(a: ArgType): Record<string, unknown> {
  if (a.type === 'string') return { ...a, pattern: a.patternSource };
  if (a.type === 'array') return { ...a, items: argValues(a.items) };
  return { ...a };
}

/** An operation as the schema's plain values, for the description (shared/allowlist/describe.ts). */
export function valuesOf(op: Operation): OperationValues {
  return { ...op, args: Object.fromEntries(Object.entries(op.args).map(([n, a]) => [n, argValues(a)])) };
}

/** Compared field by field as described, so that whatever an operation gains in the schema counts. */
export function allowlistChanges(beforeText: string, afterText: string, file: string): AllowlistChanges {
  const before = operationsOf(beforeText, file);
  const after = operationsOf(afterText, file);
  const changes: AllowlistChanges = { added: [], changed: [], removed: [...before.keys()].filter((n) => !after.has(n)) };
  for (const [name, op] of after) {
    const old = before.get(name);
    if (!old) {
      changes.added.push(op);
      continue;
    }
    const fields = changedFields(valuesOf(old), valuesOf(op)).map((f) => f.field);
    if (fields.length) changes.changed.push({ before: old, after: op, fields });
  }
  return changes;
}

/** Whether the save lets anything run that could not before (added or changed operations): removing
 *  operations, comments, layout or descriptions (the agent's text, not what runs) need no question. */
export function widensWhatRuns(c: AllowlistChanges): boolean {
  return c.added.length > 0 || c.changed.some((x) => x.fields.some((f) => f !== 'description'));
}

/** The changes as the native question's detail: one paragraph per operation. */
export function describeChanges(c: AllowlistChanges): string {
  const parts: string[] = [];
  for (const op of c.added) parts.push(`+ ${visible(op.name)} (new):\n${describeOperation(valuesOf(op), '    ')}`);
  for (const { before, after, fields } of c.changed) {
    parts.push(`~ ${visible(after.name)} (changed: ${fields.join(', ')}):\n${describeChange(valuesOf(before), valuesOf(after), '    ')}`);
  }
  if (c.removed.length) parts.push(`- removed: ${c.removed.map(visible).join(', ')}`);
  return parts.join('\n\n');
}
