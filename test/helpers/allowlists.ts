// Allowlists for tests, built instead of written out: most tests need a few plain operations (a quick
// one, one a human must approve, one that counts its runs), and what differs between them is a field or
// two. Values are written as JSON, which YAML reads as the same values. A test about a form of the file
// itself (the loader's, a comment, an odd field) keeps its literal YAML.

/** The allowlist a TestHost starts with before the test writes its own. */
export const NO_OPERATIONS = 'version: 1\noperations: []\n';

export interface OpSpec {
  name: string;
  /** The argv template: the program, then its elements ("{arg}" placeholders as in the file). */
  command: (string | number)[];
  /** Argument name to its spec, e.g. {msg: {type: 'string', max_length: 100}}. */
  args?: Record<string, Record<string, unknown>>;
  /** Default read (what a read key may ask for). */
  scope?: 'read' | 'write';
  /** Default never (runs at once). */
  approval?: 'never' | 'always';
  /** Any other field of an operation (concurrency, cwd, reconcile, timeout_s, spools...), as its value. */
  [field: string]: unknown;
}

/** One entry under `operations:`. */
export function operation({ name, command, scope = 'read', approval = 'never', ...fields }: OpSpec): string {
  const lines = [`  - name: ${name}`, `    command: ${JSON.stringify(command)}`];
  for (const [field, value] of Object.entries(fields)) if (value !== undefined) lines.push(`    ${field}: ${JSON.stringify(value)}`);
  lines.push(`    scope: ${scope}`, `    approval: ${approval}`);
  return `${lines.join('\n')}\n`;
}

/** A whole allowlist.yaml: each operation a spec, or an entry already written (GATED_OP, GatedRuns.op). */
export function allowlistYaml(...ops: (OpSpec | string)[]): string {
  const entries = ops.map((o) => (typeof o === 'string' ? `${o.replace(/^\n+/, '').replace(/\n*$/, '')}\n` : operation(o)));
  return `version: 1\noperations:\n${entries.join('')}`;
}

/** A shell command that appends the run's request id (DUMBWAITER_REQUEST_ID) to `file`, then runs
 *  `then` (with `file` as $0 and `more` as $1...): a second run of anything shows in the file. */
export function countingCommand(file: string, then = '', ...more: string[]): string[] {
  return ['/bin/sh', '-c', `echo "$DUMBWAITER_REQUEST_ID" >> "$0"${then ? `; ${then}` : ''}`, file, ...more];
}

/** Appends the run's request id to `file` (what ran, and how often), then prints "marked". */
export function markOp(file: string): OpSpec {
  return { name: 'mark', command: countingCommand(file, 'echo marked'), concurrency: 4 };
}

/** The `go` argument of a run that waits for a file (GatedRuns, GATED_OP): the file's path. */
export const GO_ARG = { go: { type: 'string', max_length: 500 } };

/** `true`, at once. */
export const QUICK: OpSpec = { name: 'quick', command: ['true'] };
/** `true`, once a human approves it. */
export const GUARDED: OpSpec = { name: 'guarded', command: ['true'], approval: 'always' };

/** Echoes its one argument, msg. */
export function echoOp(fields: Partial<OpSpec> = {}): OpSpec {
  return { name: 'echo', command: ['echo', '{msg}'], args: { msg: { type: 'string', max_length: 100 } }, ...fields };
}

/** Echoes msg, a few lower-case words at most. */
export const PLAIN_ECHO = echoOp({ command: ['/bin/echo', '{msg}'], args: { msg: { type: 'string', pattern: '[a-z0-9 ]*', max_length: 40 } } });

/** Says hello to name, a short string, at once. */
export const GREET: OpSpec = { name: 'greet', command: ['/bin/echo', 'hello', '{name}'], args: { name: { type: 'string', max_length: 40 } } };
/** Deploys to staging or production (a write), once a human approves it. */
export const DEPLOY: OpSpec = {
  name: 'deploy',
  command: ['/bin/echo', 'deploy', '{target}'],
  args: { target: { type: 'string', enum: ['staging', 'production'] } },
  scope: 'write',
  approval: 'always',
};
/** An operation that runs without asking (a read) and one that always asks (a write). */
export const GREET_AND_DEPLOY = allowlistYaml(GREET, DEPLOY);
