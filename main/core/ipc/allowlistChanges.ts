// What an allowlist save changes in what may run: the operations added and changed (with the command,
// folder, approval and scope they get) and those removed. The native question before a save from a
// page shows this, so the person sees the commands themselves and not only the page's word for them.
import { parseAllowlist } from '../allowlist/load';
import type { Operation } from '../allowlist/types';
import { visible, visibleJson } from '../../../shared/text/visible';

export interface AllowlistChanges {
  added: Operation[];
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

/** Every field of an operation as comparable text (a compiled pattern by its source, `patternSource`). */
function fieldsOf(op: Operation): Map<string, string> {
  const text = (v: unknown) => JSON.stringify(v, (k, x: unknown) => (k === 'pattern' ? undefined : x));
  return new Map(Object.entries(op).map(([k, v]) => [k, text(v)]));
}

/** Compared field by field, so that whatever an operation gains (now or in a later version) counts. */
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
    const a = fieldsOf(old);
    const b = fieldsOf(op);
    const fields = [...new Set([...a.keys(), ...b.keys()])].filter((k) => k !== 'description' && a.get(k) !== b.get(k));
    if (fields.length) changes.changed.push({ before: old, after: op, fields });
  }
  return changes;
}

/** Whether the save lets anything run that could not before (added or changed operations): removing
 *  operations, comments, layout or descriptions only narrow or leave what runs, and need no question. */
export function widensWhatRuns(c: AllowlistChanges): boolean {
  return c.added.length > 0 || c.changed.length > 0;
}

// Escaped like everything shown to a person: a bidi override in the text cannot reorder what is read.
const argvText = (op: Operation) => visibleJson(op.command.map((a) => JSON.stringify(a)).join(' '));
const summary = (op: Operation) => `${argvText(op)}\n      in ${visible(op.cwd)}; approval: ${op.approval}; scope: ${op.scope}`;

/** The changes as the native question's detail: one paragraph per operation. */
export function describeChanges(c: AllowlistChanges): string {
  const parts: string[] = [];
  for (const op of c.added) parts.push(`+ ${op.name} (new):\n    ${summary(op)}`);
  for (const { before, after, fields } of c.changed) {
    parts.push(`~ ${after.name} (changed: ${fields.join(', ')}):\n    now:  ${summary(after)}\n    was:  ${summary(before)}`);
  }
  if (c.removed.length) parts.push(`- removed: ${c.removed.join(', ')}`);
  return parts.join('\n\n');
}
