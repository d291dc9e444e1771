// The allowlist's fields, written once: each field's name, how its value is written, its default and
// bounds, and a line saying what it does. The host's loader validates with it and takes its defaults
// from it, the editor builds its form from it, and docs/PROTOCOL.md's field table is generated from it
// (fieldTable.ts). Only data here: no file or YAML access, so every side may import it.
import { OP_NAME } from '../protocol/ids';

/** How a field's value is written, with its default (what an absent field means). */
export type FieldType =
  /** A whole number from `min` to `max`. */
  | { kind: 'whole'; min: number; max: number; default: number }
  /** true or false. */
  | { kind: 'flag'; default: boolean }
  /** One of `options`; `default` null when it depends on another field (`defaultText` says how). */
  | { kind: 'choice'; options: readonly string[]; default: string | null }
  /** Anything else (a string, a list, a mapping): `shape` says what, in words. */
  | { kind: 'other'; shape: string; default: null };

export interface FieldSpec {
  type: FieldType;
  /** What an absent field means, in words, when that is not simply `type.default` ('' for none). */
  defaultText?: string;
  /** One line for the docs' table and the editor's hints. */
  about: string;
}

const whole = (min: number, max: number, dflt: number) => ({ kind: 'whole', min, max, default: dflt }) as const;
const flag = (dflt: boolean) => ({ kind: 'flag', default: dflt }) as const;
const choice = <const O extends readonly string[], const D extends O[number] | null>(options: O, dflt: D) => ({ kind: 'choice', options, default: dflt }) as const;
const other = (shape: string) => ({ kind: 'other', shape, default: null }) as const;

export const SCOPES = ['read', 'write'] as const;
export const APPROVALS = ['never', 'always'] as const;
export type Scope = (typeof SCOPES)[number];
export type Approval = (typeof APPROVALS)[number];

/** An operation asks for approval by default when it may write. */
export function approvalDefault(scope: Scope): Approval {
  return scope === 'read' ? 'never' : 'always';
}

/** The top level of allowlist.yaml. */
export const FILE_FIELDS = {
  version: { type: other('1'), defaultText: 'required', about: 'The format of the file; 1 is the only one.' },
  operations: { type: other('list of operations'), defaultText: 'none', about: 'What the sandbox may ask for, one mapping each.' },
} as const satisfies Record<string, FieldSpec>;

export const OPERATION_FIELDS = {
  name: { type: other(`string, ${OP_NAME.source}`), defaultText: 'required', about: 'What the agent asks for; may not start with "dumbwaiter".' },
  description: { type: other('string'), defaultText: '""', about: 'Tells the agent what it does and when to use it.' },
  command: { type: other('argv template: list of strings'), defaultText: 'required', about: 'The program, then its arguments, with {arg} placeholders; never a shell string.' },
  cwd: { type: other('absolute folder, or ~/...'), defaultText: 'an empty folder private to the host user', about: 'Where the program runs.' },
  cwd_shared_with_sandbox: { type: flag(false), about: 'The sandbox can write in cwd: allowed to overlap the spool the operation alone is offered to, and warned about.' },
  env: { type: other('mapping NAME: value'), defaultText: 'none', about: "Variables added to the host's own; a request can never set any." },
  args: { type: other('mapping name: argument'), defaultText: 'none', about: 'The arguments a request may fill in (below).' },
  scope: { type: choice(SCOPES, 'write'), about: 'Which keys may ask: a read key only read operations.' },
  approval: { type: choice(APPROVALS, null), defaultText: 'always for write, never for read', about: 'Whether a person must approve each run.' },
  timeout_s: { type: whole(1, 7 * 86400, 600), about: 'Seconds a run may take before it is ended.' },
  max_output_bytes: { type: whole(1024, 64 * 1024 * 1024, 1024 * 1024), about: 'Bytes of output (stdout and stderr together) the run\'s log keeps; the result carries the last 256 KiB of each at most.' },
  concurrency: { type: whole(1, 64, 1), about: 'Runs of this operation at once.' },
  cost: { type: whole(0, 1_000_000, 0), about: 'Spend units charged per run (see spend ceilings).' },
  leaves_processes: { type: flag(false), about: 'What it starts may outlive it (a service); else ended when it exits.' },
  reconcile: { type: other('mapping (below)'), defaultText: 'none', about: 'The lookup that says whether a run the host lost track of took effect.' },
  spools: { type: other('non-empty list of spool names'), defaultText: 'every spool', about: "The spools whose agents see it; another spool's catalog leaves it out." },
} as const satisfies Record<string, FieldSpec>;

export const RECONCILE_FIELDS = {
  command: { type: other("argv template: the operation's {args} and {request_id}"), defaultText: 'required', about: 'Exit 0: the run took effect; exit 1: it did not; anything else: cannot tell.' },
  timeout_s: { type: whole(1, 3600, 30), about: 'Seconds the lookup may take; longer leaves the run to a person.' },
} as const satisfies Record<string, FieldSpec>;

/** Fields of every argument, whatever its type. */
export const ARG_FIELDS = {
  type: { type: other('string, integer, boolean, path or array'), defaultText: 'required', about: 'What the value is (the type fields below).' },
  description: { type: other('string'), defaultText: '""', about: 'Shown to the agent in the catalog.' },
  required: { type: other('true or false'), defaultText: 'true unless it has a default or is a boolean', about: 'Whether a request must give it.' },
  default: { type: other("a value of the argument's type"), defaultText: 'none', about: 'Used when a request leaves it out.' },
} as const satisfies Record<string, FieldSpec>;

export const ARG_TYPES = ['string', 'integer', 'boolean', 'path', 'array'] as const;
export type ArgTypeName = (typeof ARG_TYPES)[number];
export const SCALAR_TYPES = ['string', 'integer', 'boolean', 'path'] as const;

/** What each type of argument is, in one line. */
export const ARG_TYPE_ABOUT: Record<ArgTypeName, string> = {
  string: 'Text, optionally limited by a pattern, a length or a list of allowed values.',
  integer: 'A whole number, optionally between a minimum and a maximum.',
  boolean: 'true or false; with a flag, the flag is added to the command when true.',
  path: 'A file or folder inside the allowed folders (checked after resolving links).',
  array: 'A list of values of one type; each becomes its own argv element.',
};

/** The fields each type adds. */
export const ARG_TYPE_FIELDS = {
  string: {
    pattern: { type: other('RE2 regular expression'), defaultText: 'any', about: 'Must match the whole value; no backreferences or lookaround.' },
    max_length: { type: whole(1, 1_000_000, 4096), about: 'Characters at most.' },
    enum: { type: other('non-empty list of strings'), defaultText: 'any', about: 'The only values allowed.' },
    allow_dash: { type: flag(false), about: 'A value starting an argv element may start with "-" (read as an option).' },
  },
  integer: {
    min: { type: other('integer'), defaultText: 'none', about: 'The smallest value allowed.' },
    max: { type: other('integer'), defaultText: 'none', about: 'The largest value allowed.' },
  },
  boolean: {
    flag: { type: other('string'), defaultText: 'none', about: 'The element "{x}" becomes this flag when true and is dropped when false.' },
  },
  path: {
    within: { type: other('non-empty list of folders'), defaultText: '[cwd]', about: 'The roots a value must stay inside, links resolved.' },
    must_exist: { type: flag(true), about: 'The path must exist (else only its parent must).' },
    shared_with_sandbox: { type: flag(false), about: 'The sandbox can write in the roots: allowed to overlap the spool the operation alone is offered to, and warned about.' },
  },
  array: {
    items: { type: other('an argument type: {type: ...} and its fields'), defaultText: 'required', about: 'The type of each item (not an array).' },
    max_items: { type: whole(0, 10_000, 64), about: 'Items at most; each becomes its own argv element.' },
  },
} as const satisfies Record<ArgTypeName, Record<string, FieldSpec>>;

export type OperationField = keyof typeof OPERATION_FIELDS;
type TypeField = { [T in ArgTypeName]: keyof (typeof ARG_TYPE_FIELDS)[T] }[ArgTypeName];

/** The names of the fields an argument of `type` may have besides the common ones (own keys only, so
 *  `type: constructor` is just an unknown type). */
export function typeFieldNames(type: unknown): string[] {
  return typeof type === 'string' && Object.hasOwn(ARG_TYPE_FIELDS, type) ? Object.keys(ARG_TYPE_FIELDS[type as ArgTypeName]) : [];
}

/** Every type field, of any type, once each, in the order of the types. */
export const ALL_TYPE_FIELDS = [...new Set(ARG_TYPES.filter((t) => t !== 'array').flatMap((t) => Object.keys(ARG_TYPE_FIELDS[t])))] as Exclude<TypeField, 'items' | 'max_items'>[];

export const ARG_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A field's default in words, for the docs' table. */
export function defaultWords(f: FieldSpec): string {
  if (f.defaultText !== undefined) return f.defaultText;
  return String(f.type.default);
}

/** How a field's value is written, in words. */
export function typeWords(t: FieldType): string {
  switch (t.kind) {
    case 'whole':
      return `whole number, ${t.min} to ${t.max}`;
    case 'flag':
      return 'true or false';
    case 'choice':
      return t.options.join(' or ');
    case 'other':
      return t.shape;
  }
}
