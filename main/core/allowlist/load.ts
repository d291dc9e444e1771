// Loads allowlist.yaml and validates it, with errors that name the line and the field.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { RE2JS } from 're2js';
import { OP_NAME, SPOOL_NAME } from '../../../shared/protocol/ids';
import {
  ARG_FIELDS,
  ARG_NAME,
  ARG_TYPES,
  ARG_TYPE_FIELDS,
  ENV_NAME,
  FILE_FIELDS,
  OPERATION_FIELDS,
  RECONCILE_FIELDS,
  SCOPES,
  APPROVALS,
  approvalDefault,
  typeFieldNames,
  type FieldType,
} from '../../../shared/allowlist/schema';
import { HOST_VARS } from '../exec/baseEnv';
import { expandTilde } from '../home';
import { REQUEST_ID_PLACEHOLDER, REQUEST_ID_SPEC, leadingArgs, parseElement, placeholders, wholeArg } from './template';
import { NO_CONTEXT, linkedRootProblem, rootProblem, type AllowlistContext } from './roots';
import { DEFAULT_CWD } from './defaultCwd';
import type { Allowlist, ArgSpec, ArgType, DisabledOperation, Operation, Reconcile, ScalarArg, TemplateElement } from './types';

type YPath = (string | number)[];

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

const COMMON_ARG_FIELDS = Object.keys(ARG_FIELDS);

class Checker {
  readonly problems: { path: YPath; message: string }[] = [];
  /** The operation being read: why the disk's links keep it from running, and its folders as written. */
  unsafe: { path: YPath; message: string }[] = [];
  folders: string[] = [];
  constructor(readonly ctx: AllowlistContext) {}
  add(p: YPath, message: string): void {
    this.problems.push({ path: p, message });
  }
}

/** A folder as written (absolute, tilde expanded) and as it was when loaded (its real path, when it exists). */
interface Dir {
  written: string;
  real: string;
}

/**
 * One folder of an operation against the spools and the home: overlapping one as written, the file is
 * invalid; only through a link on the disk (a sandbox may plant one any time), the operation alone is
 * disabled, and the rest of the file goes on (roots.ts linkedRootProblem). `say` words the problem.
 */
function checkFolder(c: Checker, p: YPath, dir: Dir, what: 'root' | 'cwd', shared: boolean, offeredTo: string[] | null, say: (problem: string) => string): void {
  c.folders.push(dir.written);
  const asWritten = rootProblem(dir.written, what, shared, c.ctx, offeredTo, false);
  if (asWritten) return c.add(p, say(asWritten));
  const linked = linkedRootProblem(dir.written, what, shared, c.ctx, offeredTo);
  if (linked) c.unsafe.push({ path: p, message: say(linked) });
}

function fieldName(p: YPath): string {
  return p.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A whole-number field of the schema: its value, or its default when absent (or wrong, reported). */
function int(c: Checker, p: YPath, v: unknown, t: Extract<FieldType, { kind: 'whole' }>): number {
  if (v === undefined) return t.default;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < t.min || v > t.max) {
    c.add(p, `must be a whole number from ${t.min} to ${t.max}`);
    return t.default;
  }
  return v;
}

/** A true-or-false field of the schema: its value, or its default when absent (or wrong, reported). */
function flag(c: Checker, p: YPath, v: unknown, t: Extract<FieldType, { kind: 'flag' }>): boolean {
  if (v === undefined) return t.default;
  if (typeof v !== 'boolean') {
    c.add(p, 'must be true or false');
    return t.default;
  }
  return v;
}

function str(c: Checker, p: YPath, v: unknown, dflt: string | null): string | null {
  if (v === undefined) return dflt;
  if (typeof v !== 'string') {
    c.add(p, v === null ? 'is empty (in YAML a bare ~ means nothing: write "~" with quotes for your home folder)' : 'must be a string');
    return dflt;
  }
  return v;
}

/**
 * A root or working folder, absolute, and real when it exists: resolved once, now, when its links are
 * the author's. Later checks compare against this and the executor walks it without following links,
 * so a root (or a shared cwd) that the sandbox replaces with a link afterwards leads nowhere new. One
 * that does not exist yet is kept as written, and compared as such.
 */
function absDir(c: Checker, p: YPath, v: string): Dir {
  const expanded = expandTilde(v);
  if (!path.isAbsolute(expanded)) c.add(p, `must be an absolute path or start with ~/ (got "${v}")`);
  const abs = path.resolve(expanded);
  try {
    return { written: abs, real: realpathSync.native(abs) };
  } catch {
    return { written: abs, real: abs };
  }
}

function unknownFields(c: Checker, p: YPath, obj: Record<string, unknown>, allowed: Iterable<string>): void {
  const ok = new Set(allowed);
  for (const k of Object.keys(obj)) if (!ok.has(k)) c.add([...p, k], `unknown field (expected one of: ${[...ok].join(', ')})`);
}

/** `offeredTo`: the spools that see the operation (null: every spool), for its path roots (roots.ts). */
function scalarType(c: Checker, p: YPath, raw: Record<string, unknown>, cwd: Dir, offeredTo: string[] | null): ScalarArg | null {
  switch (raw.type) {
    case 'string': {
      const source = str(c, [...p, 'pattern'], raw.pattern, null);
      let pattern: RE2JS | null = null;
      if (source !== null) {
        try {
          pattern = RE2JS.compile(source);
        } catch (e) {
          // RE2 has no backreferences or lookaround: what makes a pattern take exponential time.
          c.add([...p, 'pattern'], `is not a regular expression in RE2 syntax (no backreferences or lookaround): ${(e as Error).message}`);
        }
      }
      let en: string[] | null = null;
      if (raw.enum !== undefined) {
        if (!Array.isArray(raw.enum) || raw.enum.length === 0 || !raw.enum.every((x) => typeof x === 'string')) {
          c.add([...p, 'enum'], 'must be a non-empty list of strings');
        } else en = raw.enum as string[];
      }
      const fields = ARG_TYPE_FIELDS.string;
      return {
        type: 'string',
        pattern,
        patternSource: source,
        max_length: int(c, [...p, 'max_length'], raw.max_length, fields.max_length.type),
        enum: en,
        allow_dash: flag(c, [...p, 'allow_dash'], raw.allow_dash, fields.allow_dash.type),
      };
    }
    case 'integer': {
      const bound = (k: 'min' | 'max') => {
        const v = raw[k];
        if (v === undefined) return null;
        if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
          c.add([...p, k], 'must be an integer');
          return null;
        }
        return v;
      };
      const min = bound('min');
      const max = bound('max');
      if (min !== null && max !== null && min > max) c.add([...p, 'max'], 'must not be less than min');
      return { type: 'integer', min, max };
    }
    case 'boolean': {
      const flag = str(c, [...p, 'flag'], raw.flag, null);
      if (flag !== null && (flag.length === 0 || flag.includes('\0'))) c.add([...p, 'flag'], 'must be a non-empty string');
      return { type: 'boolean', flag };
    }
    case 'path': {
      let within = [cwd];
      if (raw.within !== undefined) {
        if (!Array.isArray(raw.within) || raw.within.length === 0 || !raw.within.every((x) => typeof x === 'string')) {
          c.add([...p, 'within'], 'must be a non-empty list of folders');
        } else within = raw.within.map((d, i) => absDir(c, [...p, 'within', i], d as string));
      }
      const fields = ARG_TYPE_FIELDS.path;
      const mustExist = flag(c, [...p, 'must_exist'], raw.must_exist, fields.must_exist.type);
      const shared = flag(c, [...p, 'shared_with_sandbox'], raw.shared_with_sandbox, fields.shared_with_sandbox.type);
      within.forEach((root, i) => {
        // At the field (as the editor shows it), naming the folder as written: there may be several.
        const at = raw.within === undefined ? [...p, 'type'] : [...p, 'within'];
        checkFolder(c, at, root, 'root', shared, offeredTo, (problem) => (raw.within === undefined ? `its folder, the operation's cwd ${root.real}, ${problem}` : `${String((raw.within as unknown[])[i])} ${problem}`));
      });
      return { type: 'path', within: within.map((d) => d.real), must_exist: mustExist, shared_with_sandbox: shared };
    }
    default:
      c.add([...p, 'type'], `must be one of ${ARG_TYPES.join(', ')} (got ${JSON.stringify(raw.type)})`);
      return null;
  }
}

function argType(c: Checker, p: YPath, raw: Record<string, unknown>, cwd: Dir, offeredTo: string[] | null): ArgType | null {
  if (raw.type !== 'array') return scalarType(c, p, raw, cwd, offeredTo);
  if (!isObj(raw.items)) {
    c.add([...p, 'items'], 'must describe the type of each item, e.g. {type: string}');
    return null;
  }
  const items = raw.items;
  if (items.type === 'array') {
    c.add([...p, 'items', 'type'], 'arrays of arrays are not supported');
    return null;
  }
  unknownFields(c, [...p, 'items'], items, ['type', ...typeFieldNames(items.type)]);
  const inner = scalarType(c, [...p, 'items'], items, cwd, offeredTo);
  if (inner?.type === 'boolean' && inner.flag !== null) c.add([...p, 'items', 'flag'], 'flags are not allowed in arrays');
  return inner && { type: 'array', items: inner, max_items: int(c, [...p, 'max_items'], raw.max_items, ARG_TYPE_FIELDS.array.max_items.type) };
}

function argSpec(c: Checker, p: YPath, raw: unknown, cwd: Dir, offeredTo: string[] | null): ArgSpec | null {
  if (!isObj(raw)) {
    c.add(p, 'must be a mapping such as {type: string}');
    return null;
  }
  unknownFields(c, p, raw, [...COMMON_ARG_FIELDS, ...typeFieldNames(raw.type)]);
  const t = argType(c, p, raw, cwd, offeredTo);
  if (!t) return null;
  if (raw.required !== undefined && typeof raw.required !== 'boolean') c.add([...p, 'required'], 'must be true or false');
  const hasDefault = raw.default !== undefined;
  const required = typeof raw.required === 'boolean' ? raw.required : !hasDefault && t.type !== 'boolean';
  if (required && hasDefault) c.add([...p, 'default'], 'a required argument cannot have a default');
  return {
    ...t,
    description: str(c, [...p, 'description'], raw.description, '') ?? '',
    required,
    default: raw.default,
  };
}

function defaultFits(spec: ArgSpec): boolean {
  const v = spec.default;
  const fits = (t: ArgType, x: unknown): boolean => {
    switch (t.type) {
      case 'string':
        return typeof x === 'string' && [...x].length <= t.max_length && (!t.enum || t.enum.includes(x)) && (!t.pattern || t.pattern.matches(x));
      case 'integer':
        return typeof x === 'number' && Number.isSafeInteger(x) && (t.min === null || x >= t.min) && (t.max === null || x <= t.max);
      case 'boolean':
        return typeof x === 'boolean';
      case 'path':
        return typeof x === 'string' && x.length > 0;
      case 'array':
        return Array.isArray(x) && x.length <= t.max_items && x.every((i) => fits(t.items, i));
    }
  };
  return v === undefined || fits(spec, v);
}

/** An argument `a` of the operation as a placeholder may use it: its spec; a problem to report; or null
 *  when it is declared but its spec was refused (that is reported already). */
function placeholderSpec(args: Record<string, ArgSpec>, rawArgs: unknown, a: string, undeclared: string): ArgSpec | string | null {
  // Own keys only: {toString} or {constructor} must not find Object.prototype's members.
  if (Object.hasOwn(args, a)) return args[a]!;
  return isObj(rawArgs) && Object.hasOwn(rawArgs, a) ? null : undeclared;
}

/** Why a value of `s` may start with "-" where it starts an element (validateArgs lets it through
 *  there), and what takes that away; null when it never may. A path is absolute once checked, a
 *  flag is the author's text, and an integer without a min below 0 is refused negative there. */
function dashConsent(s: ArgSpec): { why: string; fix: string } | null {
  const scalar = s.type === 'array' ? s.items : s;
  if (scalar.type === 'string' && scalar.allow_dash) return { why: 'allow_dash: true', fix: 'drop allow_dash' };
  if (scalar.type === 'integer' && scalar.min !== null && scalar.min < 0) return { why: `a negative integer: its min is ${scalar.min}`, fix: 'set its min to 0 or more' };
  return null;
}

/**
 * An argv template (`command`, or reconcile's): a non-empty list, the program first and never from a
 * request, each placeholder one that `spec` accepts, arrays and flags only as whole elements.
 * `dashesNeedEnd` (reconcile's, of operation `opName`): an argument whose value may start with "-"
 * (allow_dash, an integer whose min is below 0) may start an element only after a literal "--": the
 * author allowed a leading "-" for the command, not for this other program's options, which would
 * turn the value into an option and the lookup's answer into the sandbox's choice.
 */
function argvTemplate(
  c: Checker,
  p: YPath,
  raw: unknown,
  spec: (name: string) => ArgSpec | string | null,
  dashesNeedEnd: { opName: string } | null = null,
): { command: string[]; template: TemplateElement[] } {
  const template: TemplateElement[] = [];
  const command: string[] = [];
  if (!Array.isArray(raw) || raw.length === 0) {
    c.add(p, 'must be a non-empty list: the program, then its arguments (never a shell string)');
    return { command, template };
  }
  let optionsEnded = false;
  raw.forEach((el, i) => {
    const ep = [...p, i];
    if (typeof el !== 'string' && typeof el !== 'number') return c.add(ep, 'each element must be a string');
    const text = String(el);
    if (text.includes('\0')) return c.add(ep, 'contains a NUL byte');
    let parsed: TemplateElement;
    try {
      parsed = parseElement(text);
    } catch (e) {
      return c.add(ep, (e as Error).message);
    }
    const used = placeholders(parsed);
    if (i === 0 && used.length > 0) return c.add(ep, 'the program itself cannot come from a request');
    if (i === 0 && text.length === 0) return c.add(ep, 'the program must not be empty');
    for (const a of used) {
      const s = spec(a);
      if (typeof s === 'string') c.add(ep, s);
      if (s === null || typeof s === 'string') continue;
      if (wholeArg(parsed) === null && s.type === 'array') c.add(ep, `array argument {${a}} must be a whole element on its own`);
      if (wholeArg(parsed) === null && s.type === 'boolean' && s.flag !== null) c.add(ep, `flag argument {${a}} must be a whole element on its own`);
      const dash = !optionsEnded && leadingArgs(parsed).includes(a) ? dashConsent(s) : null;
      if (dashesNeedEnd && dash) {
        c.add(ep, `{${a}} of operation "${dashesNeedEnd.opName}" may start with "-" (${dash.why}) and starts this element of reconcile's command, where that program would read it as an option: put a "--" element before it (if the program takes one), or ${dash.fix}`);
      }
    }
    if (text === '--') optionsEnded = true;
    command.push(text);
    template.push(parsed);
  });
  return { command, template };
}

/** `reconcile: {command, timeout_s}`: the lookup that settles a run whose end the host missed. */
function reconcile(c: Checker, p: YPath, raw: unknown, opName: string, args: Record<string, ArgSpec>, rawArgs: unknown): Reconcile | null {
  if (raw === undefined || raw === null) return null;
  if (!isObj(raw)) {
    c.add(p, 'must be a mapping such as {command: [/usr/bin/gh, release, view, "v{version}"], timeout_s: 30}');
    return null;
  }
  unknownFields(c, p, raw, Object.keys(RECONCILE_FIELDS));
  // {request_id} is the request's id: an argument of that name would make it mean two things.
  if (Object.hasOwn(args, REQUEST_ID_PLACEHOLDER)) c.add([...p.slice(0, -1), 'args', REQUEST_ID_PLACEHOLDER], `is the name reconcile gives the request's id ({${REQUEST_ID_PLACEHOLDER}}): rename the argument`);
  const { command, template } = argvTemplate(
    c,
    [...p, 'command'],
    raw.command,
    (a) => (a === REQUEST_ID_PLACEHOLDER ? REQUEST_ID_SPEC : placeholderSpec(args, rawArgs, a, `uses {${a}}, which is neither an argument of the operation nor {${REQUEST_ID_PLACEHOLDER}}`)),
    { opName },
  );
  return { command, template, timeout_s: int(c, [...p, 'timeout_s'], raw.timeout_s, RECONCILE_FIELDS.timeout_s.type) };
}

/** One of `options`, or `dflt` when absent (or wrong, reported). */
function oneOf<T extends string>(c: Checker, p: YPath, v: unknown, options: readonly T[], dflt: T): T {
  if (v === undefined) return dflt;
  if (typeof v === 'string' && (options as readonly string[]).includes(v)) return v as T;
  c.add(p, `must be ${options.join(' or ')}`);
  return dflt;
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

  const args: Record<string, ArgSpec> = {};
  if (raw.args !== undefined && raw.args !== null) {
    if (!isObj(raw.args)) c.add([...p, 'args'], 'must be a mapping of argument name to its type');
    else
      for (const [an, spec] of Object.entries(raw.args)) {
        if (!ARG_NAME.test(an) || an === '__proto__') {
          c.add([...p, 'args', an], 'argument names must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$ (and not be __proto__)');
          if (an === '__proto__') continue; // assigning it would replace the object's prototype
        } else if (an.startsWith('dumbwaiter_')) {
          // The MCP server adds dumbwaiter_intent (and may add more) to every operation's inputs.
          c.add([...p, 'args', an], 'argument names starting with "dumbwaiter_" are reserved for the MCP server\'s own inputs (dumbwaiter_intent, dumbwaiter_plan_id)');
        }
        const s = argSpec(c, [...p, 'args', an], spec, cwd, offeredTo);
        if (s) {
          if (!defaultFits(s)) c.add([...p, 'args', an, 'default'], 'does not fit the argument\'s own type and constraints');
          args[an] = s;
        }
      }
  }

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
