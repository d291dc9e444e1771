// The allowlist's model after validation: what the policy, the templating and the catalog work from.
import type { RE2JS } from 're2js';
import type { Approval, Scope } from '../../../shared/allowlist/schema';
import type { AllowlistContext } from './roots';

export interface StringArg {
  type: 'string';
  /** Compiled from the author's pattern with RE2 (linear time: no pattern can stall the daemon);
   *  it must match the whole value. */
  pattern: RE2JS | null;
  patternSource: string | null;
  max_length: number;
  enum: string[] | null;
  /** A value that starts an argv element and begins with "-" could be read as an option; refused unless allowed. */
  allow_dash: boolean;
}

export interface IntegerArg {
  type: 'integer';
  min: number | null;
  max: number | null;
}

export interface BooleanArg {
  type: 'boolean';
  flag: string | null;
}

export interface PathArg {
  type: 'path';
  /** Absolute roots (tilde expanded); resolved with realpath when a request is checked. */
  within: string[];
  must_exist: boolean;
  /** The author says the sandbox can write in these roots: allowed to overlap the spool, and warned about. */
  shared_with_sandbox: boolean;
}

export type ScalarArg = StringArg | IntegerArg | BooleanArg | PathArg;

export interface ArrayArg {
  type: 'array';
  items: ScalarArg;
  max_items: number;
}

export type ArgType = ScalarArg | ArrayArg;

export type ArgSpec = ArgType & {
  description: string;
  required: boolean;
  default: unknown;
};

/** One argv element: literal text and placeholders, in order. */
export type TemplatePart = { lit: string } | { arg: string };
export type TemplateElement = TemplatePart[];

export interface Operation {
  name: string;
  description: string;
  command: string[];
  template: TemplateElement[];
  cwd: string;
  /** The author says the sandbox can write in the working folder (allowed inside the spool, warned about). */
  cwd_shared_with_sandbox: boolean;
  env: Record<string, string>;
  args: Record<string, ArgSpec>;
  scope: Scope;
  approval: Approval;
  timeout_s: number;
  max_output_bytes: number;
  concurrency: number;
  cost: number;
  /** Processes the run starts are not ended when its main process exits (they are by default). */
  leaves_processes: boolean;
  /** How to find out whether a run whose end the host missed took effect (null: it cannot be asked). */
  reconcile: Reconcile | null;
  /** The spools whose agents see it (null: every spool of the home). */
  spools: string[] | null;
}

/** Whether the agents of `spool` see the operation: it is in their catalog and they may ask for it. */
export function opVisibleTo(op: Pick<Operation, 'spools'>, spool: string): boolean {
  return op.spools === null || op.spools.includes(spool);
}

/** A lookup command, templated like `command` from the op's args and `{request_id}`: exit 0 says the
 *  run took effect, exit 1 that it did not, anything else that it cannot tell. */
export interface Reconcile {
  command: string[];
  template: TemplateElement[];
  timeout_s: number;
}

/** An operation valid as written that cannot run as the disk is now (a link leads one of its folders
 *  into a spool or the home: roots.ts linkedRootProblem). Offered to no one, refused with `reason`. */
export interface DisabledOperation {
  name: string;
  /** Its `spools:` (null: every spool): who is told why when it asks for it. */
  spools: string[] | null;
  /** Each problem, with its line and field. */
  reason: string;
  /** Its folders as written (absolute): where their links lead decides when to look again. */
  folders: string[];
}

/** The operations disabled in `a`, by name with why: for status, the log and the audit log. */
export function disabledOf(a: Allowlist): { name: string; reason: string }[] {
  return [...a.disabled.values()].map(({ name, reason }) => ({ name, reason }));
}

export interface Allowlist {
  version: 1;
  operations: Map<string, Operation>;
  disabled: Map<string, DisabledOperation>;
  /** The spools and home it was checked against: each run's plan looks at its folders again with it. */
  context: AllowlistContext;
}
