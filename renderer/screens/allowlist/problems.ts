// The validator's problems, matched to the operation and the form field they name
// (fields read like `operations[2].args.msg.max_length` or `operations[2].command[1]`).
import type { AllowlistCheck } from '../../../shared/ipc/views';

export type Problem = AllowlistCheck['problems'][number];

function under(field: string, prefix: string): boolean {
  if (!field.startsWith(prefix)) return false;
  const next = field[prefix.length];
  return next === undefined || next === '.' || next === '[';
}

/** The index of the operation a problem names, if it names one. */
export function opIndexOf(p: Problem): number | null {
  const m = /^operations\[(\d+)\]/.exec(p.field);
  return m ? Number(m[1]) : null;
}

export function problemsOf(problems: Problem[], index: number): Problem[] {
  return problems.filter((p) => under(p.field, `operations[${index}]`));
}

/** The messages about one field of an operation (`sub` like "name", "command[1]", "args.msg.type"). */
export function fieldError(problems: Problem[], index: number, sub: string, exact = false): string | null {
  const prefix = `operations[${index}]${sub.startsWith('[') ? '' : '.'}${sub}`;
  const hits = problems.filter((p) => (exact ? p.field === prefix : under(p.field, prefix)));
  if (hits.length === 0) return null;
  return hits.map((p) => (p.field === prefix ? p.message : `${p.field.slice(prefix.length + 1)}: ${p.message}`)).join('; ');
}

/** The messages about one field and its items (`spools`, `spools[1]`), without the field names: for a
 *  field whose messages name the item themselves. */
export function itemErrors(problems: Problem[], index: number, sub: string): string | null {
  const prefix = `operations[${index}].${sub}`;
  const hits = problems.filter((p) => p.field === prefix || p.field.startsWith(`${prefix}[`));
  return hits.length ? hits.map((p) => p.message).join('; ') : null;
}

/** "Line 6: say › command[1]: uses {text}, …" (the operation by its name when it has one). */
export function describeProblem(p: Problem, names: (string | undefined)[] = []): string {
  const m = /^operations\[(\d+)\]\.?(.*)$/.exec(p.field);
  const field = m ? `${names[Number(m[1])] || `operation ${Number(m[1]) + 1}`}${m[2] ? ` › ${m[2]}` : ''}` : p.field;
  return `${p.line !== null ? `Line ${p.line}: ` : ''}${field ? `${field}: ` : ''}${p.message}`;
}
