// What a person is asked to approve, written out from the allowlist's schema: every field of an
// operation with its value, a changed operation as each changed field before and after, and the
// resolved run of a dry run. Built by walking OPERATION_FIELDS, RECONCILE_FIELDS, ARG_FIELDS and
// ARG_TYPE_FIELDS, so a field added to the schema is in every question without anyone remembering it.
// Every value is shown escaped (shared/text/visible.ts): the text comes from a page or a sandbox. Only
// data here (no Node, no YAML), so the core and the renderer may both import it.
import { ARG_FIELDS, ARG_TYPE_FIELDS, OPERATION_FIELDS, RECONCILE_FIELDS, defaultWords, type FieldSpec } from './schema';
import { visible, visibleJson } from '../text/visible';

/** An operation as plain values under the schema's field names (the core's Operation fits, once a
 *  string argument's `pattern` is given by its source text). */
export type OperationValues = Readonly<Record<string, unknown>>;

/** One field of a description: where it is (`timeout_s`, `args.file.within`, `reconcile.command`)
 *  and its value as shown, which may take several lines. */
export interface DescribedField {
  field: string;
  text: string;
}

type Fields = Readonly<Record<string, FieldSpec>>;

const INDENT = '    ';
const quoted = (s: string) => visibleJson(JSON.stringify(s));

/** A value as shown: strings quoted and escaped, lists element by element, absent as the schema's default. */
function shown(value: unknown, spec: FieldSpec | undefined): string {
  if (value === undefined || value === null) return spec ? defaultWords(spec) : 'none';
  if (typeof value === 'string') return spec?.type.kind === 'choice' ? visible(value) : quoted(value); // a keyword (scope, approval)
  if (Array.isArray(value)) return value.length ? value.map((v) => shown(v, undefined)).join(', ') : '(empty list)';
  if (typeof value === 'object') return visibleJson(JSON.stringify(value));
  return String(value);
}

/** A command, program and arguments one to a line, so no element can pass for part of another. */
export function commandText(argv: readonly string[]): string {
  return argv.map((a, i) => `${i === 0 ? 'program' : `argument ${i}`}: ${quoted(a)}`).join('\n');
}

/** Environment variables, one to a line, name and value. */
export function envText(env: Readonly<Record<string, unknown>> | null | undefined): string {
  const entries = Object.entries(env ?? {});
  return entries.length ? entries.map(([k, v]) => `${visible(k)}=${shown(v, undefined)}`).join('\n') : 'none';
}

const lines = (field: string, text: string): DescribedField => ({ field, text });
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An argument's fields: the common ones, then its type's (an array's items as an argument of their own). */
function argFields(prefix: string, arg: Record<string, unknown>, common: boolean): DescribedField[] {
  const type = typeof arg.type === 'string' ? arg.type : '';
  const typeFields: Fields = Object.hasOwn(ARG_TYPE_FIELDS, type) ? ARG_TYPE_FIELDS[type as keyof typeof ARG_TYPE_FIELDS] : {};
  const out: DescribedField[] = [lines(`${prefix}.type`, type ? visible(type) : 'none')];
  if (common) for (const [f, spec] of Object.entries(ARG_FIELDS)) if (f !== 'type') out.push(lines(`${prefix}.${f}`, shown(arg[f], spec)));
  for (const [f, spec] of Object.entries(typeFields)) {
    const v = arg[f];
    if (f === 'items' && isRecord(v)) out.push(...argFields(`${prefix}.items`, v, false));
    else out.push(lines(`${prefix}.${f}`, shown(v, spec)));
  }
  return out;
}

/** How each operation field whose value has parts is written out; every other field is one value. */
const PARTS: Partial<Record<keyof typeof OPERATION_FIELDS, (v: unknown, spec: FieldSpec) => DescribedField[]>> = {
  command: (v) => [lines('command', Array.isArray(v) ? commandText(v.map(String)) : shown(v, undefined))],
  env: (v) => [lines('env', envText(isRecord(v) ? v : null))],
  args: (v) => {
    const args = Object.entries(isRecord(v) ? v : {});
    if (!args.length) return [lines('args', 'none')];
    return args.flatMap(([name, a]) => argFields(`args.${visible(name)}`, isRecord(a) ? a : {}, true));
  },
  reconcile: (v, spec) => {
    if (!isRecord(v)) return [lines('reconcile', shown(v, spec))];
    return Object.entries(RECONCILE_FIELDS as Fields).map(([f, s]) =>
      lines(`reconcile.${f}`, f === 'command' && Array.isArray(v[f]) ? commandText((v[f] as unknown[]).map(String)) : shown(v[f], s)),
    );
  },
};

/** Every field of an operation, in the schema's order, with its value (absent: the schema's default). */
export function operationFields(op: OperationValues): DescribedField[] {
  return Object.entries(OPERATION_FIELDS as Fields).flatMap(([f, spec]) => PARTS[f as keyof typeof OPERATION_FIELDS]?.(op[f], spec) ?? [lines(f, shown(op[f], spec))]);
}

/** `field: value`, a value of several lines indented below its field. */
function fieldLine({ field, text }: DescribedField, indent: string): string {
  return text.includes('\n') ? `${indent}${field}:\n${text.split('\n').map((l) => `${indent}${INDENT}${l}`).join('\n')}` : `${indent}${field}: ${text}`;
}

/** An operation as a question shows it: every field with its value, one to a line. */
export function describeOperation(op: OperationValues, indent = ''): string {
  return operationFields(op).map((f) => fieldLine(f, indent)).join('\n');
}

/** The fields that differ between two versions of an operation (one present in only one version
 *  differs too: its other side is "none"). */
export function changedFields(before: OperationValues, after: OperationValues): { field: string; was: string; now: string }[] {
  const was = new Map(operationFields(before).map((f) => [f.field, f.text]));
  const now = new Map(operationFields(after).map((f) => [f.field, f.text]));
  const names = [...new Set([...now.keys(), ...was.keys()])];
  return names.filter((n) => was.get(n) !== now.get(n)).map((n) => ({ field: n, was: was.get(n) ?? 'none', now: now.get(n) ?? 'none' }));
}

/** A changed operation as a question shows it: each changed field's value before and after. */
export function describeChange(before: OperationValues, after: OperationValues, indent = ''): string {
  return changedFields(before, after)
    .map(({ field, was, now }) => `${indent}${field}:\n${fieldLine({ field: 'was', text: was }, indent + INDENT)}\n${fieldLine({ field: 'now', text: now }, indent + INDENT)}`)
    .join('\n');
}

/** A run resolved from an operation and arguments: what decides it on this computer. */
export interface RunValues {
  argv: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  timeout_s: number | null;
  max_output_bytes: number | null;
  leaves_processes?: boolean;
}

/** The run as a question shows it: each argv element, the folder, the environment (names and
 *  values), the time and output limits, and whether what it starts may outlive it. */
export function describeRun(run: RunValues): string {
  return [
    commandText(run.argv),
    `in folder: ${quoted(run.cwd)}`,
    fieldLine({ field: 'environment (added to the host\'s own)', text: envText(run.env) }, ''),
    `timeout: ${run.timeout_s === null ? 'none' : `${run.timeout_s} s`}`,
    `output logged: ${run.max_output_bytes === null ? 'no limit' : `at most ${run.max_output_bytes} bytes`} (stdout and stderr together)`,
    `processes it starts: ${run.leaves_processes ? 'may outlive it (leaves_processes)' : 'ended when it exits'}`,
  ].join('\n');
}
