// Loads allowlist.yaml and validates it, with errors that name the line and the field. Each part of an
// operation is read by a module of its own: its args (argSpecs.ts), its command and reconcile
// (commandTemplate.ts), the fields' checks and folders (fields.ts).
import { LineCounter, parseDocument, type Document } from 'yaml';
import { OP_NAME, SPOOL_NAME } from '../../../shared/protocol/ids';
import { ENV_NAME, FILE_FIELDS, OPERATION_FIELDS, SCOPES, APPROVALS, approvalDefault } from '../../../shared/allowlist/schema';
import { HOST_VARS } from '../exec/baseEnv';
import { placeholders } from './template';
import { NO_CONTEXT, type AllowlistContext } from './roots';
import { DEFAULT_CWD } from './defaultCwd';
import { Checker, absDir, checkFolder, fieldName, flag, int, isObj, oneOf, str, unknownFields, type YPath } from './fields';
import { argSpecs } from './argSpecs';
import { argvTemplate, placeholderSpec, reconcile } from './commandTemplate';
import type { Allowlist, DisabledOperation, Operation } from './types';

export interface AllowlistProblem {
  line: number | null;
  field: string;
  message: string;
}

export class AllowlistError extends Error {
  constructor(
    readonly file: string,
    readonly problems: AllowlistProblem[],
  ) {
    super(
      `${file} is invalid:\n` +
        problems.map((p) => `  ${p.line !== null ? `line ${p.line}` : 'file'}: ${p.field ? p.field + ': ' : ''}${p.message}`).join('\n'),
    );
    this.name = 'AllowlistError';
  }
}

/**
 * `spools: [name, ...]`: the spools whose agents see the operation (null: every spool). Each name must
 * be one of the home's spools when they are known: a typo would hide the operation from every agent.
 */
function spools(c: Checker, p: YPath, v: unknown): string[] | null {
  if (v === undefined) return null;
  if (!Array.isArray(v) || v.length === 0) {
    c.add(p, 'must be a non-empty list of spool names (leave it out for every spool)');
    return null;
  }
  const known = c.ctx.spools.map((s) => s.name);
  v.forEach((n: unknown, i) => {
    if (typeof n !== 'string' || !SPOOL_NAME.test(n)) c.add([...p, i], `must be a spool name matching ${SPOOL_NAME.source} (got ${JSON.stringify(n)})`);
    else if (v.indexOf(n) !== i) c.add([...p, i], `"${n}" is listed twice`);
    else if (known.length > 0 && !known.includes(n)) c.add([...p, i], `"${n}" is not a spool of this home (its spools: ${known.join(', ')})`);
  });
  return v.filter((n): n is string => typeof n === 'string');
}

function operation(c: Checker, p: YPath, raw: unknown): Operation | null {
  if (!isObj(raw)) {
    c.add(p, 'each operation must be a mapping with at least name and command');
    return null;
  }
  unknownFields(c, p, raw, Object.keys(OPERATION_FIELDS));
  const name = str(c, [...p, 'name'], raw.name, null);
  // dumbwaiter.* are the built-in operations; dumbwaiter_* the MCP server's own tools (dw mcp).
  if (name === null) c.add([...p, 'name'], 'is required');
  else if (!OP_NAME.test(name)) c.add([...p, 'name'], 'must match ^[a-z][a-z0-9._-]{0,63}$');
  else if (name.startsWith('dumbwaiter')) c.add([...p, 'name'], 'names starting with "dumbwaiter" are reserved for built-in operations and the MCP server\'s own tools');

  const cwdRaw = str(c, [...p, 'cwd'], raw.cwd, null);
  const cwd = cwdRaw === null ? { written: DEFAULT_CWD, real: DEFAULT_CWD } : absDir(c, [...p, 'cwd'], cwdRaw);
  const cwdShared = flag(c, [...p, 'cwd_shared_with_sandbox'], raw.cwd_shared_with_sandbox, OPERATION_FIELDS.cwd_shared_with_sandbox.type);
  // Who sees the operation decides whose spool its folders may share (roots.ts).
  const offeredTo = spools(c, [...p, 'spools'], raw.spools);
  checkFolder(c, [...p, cwdRaw === null ? 'name' : 'cwd'], cwd, 'cwd', cwdShared, offeredTo, (problem) => (cwdRaw === null ? `its working folder (${DEFAULT_CWD}, as no cwd is given) ${problem}` : problem));

  const args = argSpecs(c, [...p, 'args'], raw.args, cwd, offeredTo);

  const { command, template } = argvTemplate(c, [...p, 'command'], raw.command, (a) => placeholderSpec(args, raw.args, a, `uses {${a}}, which is not declared under args`));
  if (Array.isArray(raw.command) && raw.command.length > 0) {
    const used = new Set(template.flatMap(placeholders));
    for (const an of Object.keys(args)) if (!used.has(an)) c.add([...p, 'args', an], 'is declared but not used in command');
  }

  const env: Record<string, string> = {};
  if (raw.env !== undefined && raw.env !== null) {
    if (!isObj(raw.env)) c.add([...p, 'env'], 'must be a mapping of NAME: value');
    else
      for (const [k, v] of Object.entries(raw.env)) {
        if (!ENV_NAME.test(k)) c.add([...p, 'env', k], 'is not a valid environment variable name');
        else if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') c.add([...p, 'env', k], 'must be a string');
        else if (HOST_VARS.includes(k)) c.add([...p, 'env', k], 'is set by Dumbwaiter for every run');
        else env[k] = String(v);
      }
  }

  const scope = oneOf(c, [...p, 'scope'], raw.scope, SCOPES, OPERATION_FIELDS.scope.type.default);
  const approval = oneOf(c, [...p, 'approval'], raw.approval, APPROVALS, approvalDefault(scope));

  return {
    name: name ?? '',
    description: str(c, [...p, 'description'], raw.description, '') ?? '',
    command,
    template,
    cwd: cwd.real,
    cwd_shared_with_sandbox: cwdShared,
    env,
    args,
    scope,
    approval,
    timeout_s: int(c, [...p, 'timeout_s'], raw.timeout_s, OPERATION_FIELDS.timeout_s.type),
    max_output_bytes: int(c, [...p, 'max_output_bytes'], raw.max_output_bytes, OPERATION_FIELDS.max_output_bytes.type),
    concurrency: int(c, [...p, 'concurrency'], raw.concurrency, OPERATION_FIELDS.concurrency.type),
    cost: int(c, [...p, 'cost'], raw.cost, OPERATION_FIELDS.cost.type),
    // What the run starts may outlive its main process (a service it starts); else it is ended when that exits.
    leaves_processes: flag(c, [...p, 'leaves_processes'], raw.leaves_processes, OPERATION_FIELDS.leaves_processes.type),
    reconcile: reconcile(c, [...p, 'reconcile'], raw.reconcile, name ?? '', args, raw.args),
    spools: offeredTo,
  };
}

function lineOf(doc: Document, lc: LineCounter, p: YPath): number | null {
  for (let n = p.length; n >= 0; n--) {
    const node = doc.getIn(p.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node && typeof node === 'object' && node.range) return lc.linePos(node.range[0]).line;
  }
  return null;
}

/** Parses and validates allowlist text against where this host's spool and home are (`ctx`). Throws
 *  AllowlistError listing every problem found as written. An operation whose folders only the disk's
 *  links lead into a spool or the home is left out of `operations`, in `disabled` with the reason. */
export function parseAllowlist(text: string, file = 'allowlist.yaml', ctx: AllowlistContext = NO_CONTEXT): Allowlist {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new AllowlistError(
      file,
      // With prettyErrors off the errors carry no linePos: take the line from their offset.
      doc.errors.map((e) => ({ line: e.linePos?.[0]?.line ?? lc.linePos(e.pos[0]).line, field: '', message: `YAML syntax: ${e.message.split('\n')[0]}` })),
    );
  }
  const raw: unknown = doc.toJS({ maxAliasCount: 100 });
  const c = new Checker(ctx);
  const ops = new Map<string, Operation>();
  const disabled = new Map<string, DisabledOperation>();
  if (!isObj(raw)) {
    c.add([], 'the file must be a mapping with "version: 1" and "operations:"');
  } else {
    unknownFields(c, [], raw, Object.keys(FILE_FIELDS));
    if (raw.version !== 1) c.add(['version'], 'must be 1');
    if (raw.operations !== undefined && raw.operations !== null && !Array.isArray(raw.operations)) {
      c.add(['operations'], 'must be a list of operations');
    } else if (Array.isArray(raw.operations)) {
      raw.operations.forEach((o, i) => {
        c.unsafe = [];
        c.folders = [];
        const op = operation(c, ['operations', i], o);
        if (!op || !op.name) return;
        if (ops.has(op.name) || disabled.has(op.name)) c.add(['operations', i, 'name'], `"${op.name}" is defined twice`);
        if (c.unsafe.length === 0) return ops.set(op.name, op);
        const reason = c.unsafe.map((u) => `line ${lineOf(doc, lc, u.path) ?? '?'}: ${fieldName(u.path)}: ${u.message}`).join('\n');
        disabled.set(op.name, { name: op.name, spools: op.spools, reason, folders: c.folders });
      });
    }
  }
  if (c.problems.length > 0) {
    throw new AllowlistError(
      file,
      c.problems.map((pr) => ({ line: lineOf(doc, lc, pr.path), field: fieldName(pr.path), message: pr.message })),
    );
  }
  return { version: 1, operations: ops, disabled, context: ctx };
}
