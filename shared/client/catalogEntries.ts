// catalog.json's operations as the clients use them. Anyone who can write the spool can write that file,
// so each entry must have the shape the host writes; one that does not is left out with a note (never a
// crash of dw ops, nor an MCP tool list lost to one bad entry), and so is a second entry of one name.
import { OP_NAME } from '../protocol/ids';
import type { CatalogOperation } from '../protocol/types';
import { visible } from '../text/visible';
import { describeArgs } from './typedArgs';

export interface CheckedOperations {
  operations: CatalogOperation[];
  /** One line for each entry left out, saying which and why. */
  skipped: string[];
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Why `e` is not an operation as the host writes it; null when it is. */
function flaw(e: unknown): string | null {
  if (!isObject(e)) return 'not an object';
  if (typeof e.name !== 'string' || !OP_NAME.test(e.name)) return 'its name is not an operation name';
  if (typeof e.description !== 'string') return 'its description is not text';
  if (e.scope !== 'read' && e.scope !== 'write') return 'its scope is neither read nor write';
  if (e.approval !== 'never' && e.approval !== 'always') return 'its approval is neither never nor always';
  if (typeof e.timeout_s !== 'number' || !(e.timeout_s > 0) || !Number.isFinite(e.timeout_s)) return 'its timeout_s is not a number of seconds';
  const schema = e.args_schema;
  if (!isObject(schema) || schema.type !== 'object') return 'its args_schema is not an object schema';
  if (schema.properties !== undefined && !(isObject(schema.properties) && Object.values(schema.properties).every(isObject))) return "its args_schema's properties are not schemas";
  if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === 'string'))) return "its args_schema's required is not a list of names";
  if (e.reconcile !== undefined && e.reconcile !== true) return 'its reconcile is not true';
  return null;
}

/** The entries of `entries` that are operations (the first of each name), and a note for each other one. */
export function checkedOperations(entries: unknown[]): CheckedOperations {
  const operations: CatalogOperation[] = [];
  const skipped: string[] = [];
  entries.forEach((e, i) => {
    const name = isObject(e) && typeof e.name === 'string' ? ` "${visible(e.name)}"` : '';
    const why = flaw(e) ?? (operations.some((o) => o.name === (e as CatalogOperation).name) ? 'an operation of that name came before it' : null);
    if (why) skipped.push(`catalog.json: operation ${i + 1}${name} is left out: ${why}`);
    else operations.push(e as CatalogOperation);
  });
  return { operations, skipped };
}

const BUILT_IN_OPS = 'Built in: dumbwaiter.ping, dumbwaiter.cancel (dw cancel ID), dumbwaiter.plan (dw plan FILE)';

/** `dw ops`: each operation on one line (its scope, whether a human approves it, its time limit, what it
 *  does), its arguments under it. Anyone who can write the spool can write catalog.json: its text is
 *  shown escaped. dw.py's ops_lines says the same (a test holds them equal). */
export function opsLines(ops: CatalogOperation[]): string[] {
  if (ops.length === 0) return ['This host offers no operations (yet): its allowlist is empty.'];
  const lines: string[] = [];
  for (const op of ops) {
    lines.push(visible(`${op.name}  [${op.scope}${op.approval === 'always' ? ', asks a human' : ''}, timeout ${op.timeout_s} s]  ${op.description}`));
    for (const line of describeArgs(op.args_schema)) lines.push(`    ${visible(line)}`);
  }
  return [...lines, BUILT_IN_OPS];
}
