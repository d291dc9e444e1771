// The allowlist editor's form of an operation: plain values as typed (numbers stay text until written,
// so half-typed values are kept), and what a new operation, argument or type starts as.
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

interface EnvForm {
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
  /** The spools that see it, as the file lists them; empty: the field is left out (every spool). */
  spools: string[];
}

export const REQUIRED = ['required', 'optional'] as const;

export function emptyType(type = 'string'): TypeForm {
  return { type, pattern: '', max_length: '', enum: [], allow_dash: null, min: '', max: '', flag: '', within: '', must_exist: null, shared_with_sandbox: null };
}

export function emptyArg(name = ''): ArgForm {
  return { ...emptyType(), key: null, name, description: '', required: '', hasDefault: false, default: '', items: emptyType(), max_items: '' };
}

export function emptyOp(name = ''): OpForm {
  return { name, description: '', command: [''], cwd: '', cwd_shared_with_sandbox: null, env: [], args: [], scope: '', approval: '', timeout_s: '', max_output_bytes: '', concurrency: '', cost: '', reconcile: null, spools: [] };
}

/** The form as it stands once written: each argument's key is now its name in the file. */
export function settled(f: OpForm): OpForm {
  return f.args.every((a) => a.key === a.name) ? f : { ...f, args: f.args.map((a) => (a.key === a.name ? a : { ...a, key: a.name })) };
}
