// The reading of allowlist.yaml's fields: where each problem is (a path of keys and indexes, turned into
// a line by load.ts), each field's check against its schema type, and an operation's folders checked
// against the spools and the home. Shared by load.ts and the modules that read parts of an operation.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { FieldType } from '../../../shared/allowlist/schema';
import { expandTilde } from '../home';
import { linkedRootProblem, rootProblem, type AllowlistContext } from './roots';

export type YPath = (string | number)[];

/** The problems found so far, and what the operation being read has found of its folders. */
export class Checker {
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
export interface Dir {
  written: string;
  real: string;
}

/**
 * One folder of an operation against the spools and the home: overlapping one as written, the file is
 * invalid; only through a link on the disk (a sandbox may plant one any time), the operation alone is
 * disabled, and the rest of the file goes on (roots.ts linkedRootProblem). `say` words the problem.
 */
export function checkFolder(c: Checker, p: YPath, dir: Dir, what: 'root' | 'cwd', shared: boolean, offeredTo: string[] | null, say: (problem: string) => string): void {
  c.folders.push(dir.written);
  const asWritten = rootProblem(dir.written, what, shared, c.ctx, offeredTo, false);
  if (asWritten) return c.add(p, say(asWritten));
  const linked = linkedRootProblem(dir.written, what, shared, c.ctx, offeredTo);
  if (linked) c.unsafe.push({ path: p, message: say(linked) });
}

export function fieldName(p: YPath): string {
  return p.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A whole-number field of the schema: its value, or its default when absent (or wrong, reported). */
export function int(c: Checker, p: YPath, v: unknown, t: Extract<FieldType, { kind: 'whole' }>): number {
  if (v === undefined) return t.default;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < t.min || v > t.max) {
    c.add(p, `must be a whole number from ${t.min} to ${t.max}`);
    return t.default;
  }
  return v;
}

/** A true-or-false field of the schema: its value, or its default when absent (or wrong, reported). */
export function flag(c: Checker, p: YPath, v: unknown, t: Extract<FieldType, { kind: 'flag' }>): boolean {
  if (v === undefined) return t.default;
  if (typeof v !== 'boolean') {
    c.add(p, 'must be true or false');
    return t.default;
  }
  return v;
}

export function str(c: Checker, p: YPath, v: unknown, dflt: string | null): string | null {
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
export function absDir(c: Checker, p: YPath, v: string): Dir {
  const expanded = expandTilde(v);
  if (!path.isAbsolute(expanded)) c.add(p, `must be an absolute path or start with ~/ (got "${v}")`);
  const abs = path.resolve(expanded);
  try {
    return { written: abs, real: realpathSync.native(abs) };
  } catch {
    return { written: abs, real: abs };
  }
}

export function unknownFields(c: Checker, p: YPath, obj: Record<string, unknown>, allowed: Iterable<string>): void {
  const ok = new Set(allowed);
  for (const k of Object.keys(obj)) if (!ok.has(k)) c.add([...p, k], `unknown field (expected one of: ${[...ok].join(', ')})`);
}

/** One of `options`, or `dflt` when absent (or wrong, reported). */
export function oneOf<T extends string>(c: Checker, p: YPath, v: unknown, options: readonly T[], dflt: T): T {
  if (v === undefined) return dflt;
  if (typeof v === 'string' && (options as readonly string[]).includes(v)) return v as T;
  c.add(p, `must be ${options.join(' or ')}`);
  return dflt;
}
