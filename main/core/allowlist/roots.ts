// Which folders an operation may work on, given where the sandboxes write and where the host keeps its
// secrets. A path root that contains a spool (or lies inside it) lets a request name what the sandbox
// controls, and the sandbox can swap it under the program; the operation must say so
// (`shared_with_sandbox: true`), and the human is warned. Shared with that spool's sandbox only: one
// offered to any other spool would let that sandbox read (and change) this spool's results, so it is
// refused. A root that overlaps Dumbwaiter's home, which holds the ledger with the keys' secrets, is
// never allowed. A working folder is held to the same rules: a program that walks it (`grep -r .`)
// reads what is below it.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { isInside } from './pathArg';
import type { Operation } from './types';

/** Where the home's spools and the home are, for the checks made when an allowlist is loaded. */
export interface AllowlistContext {
  /** Every spool of the home: a root overlapping any of them is refused, and `spools:` names one of them. */
  spools: { name: string; dir: string }[];
  home: string | null;
}

/** No spool or home to check against: for parsing alone (tests, tools, the editor's own reading), never
 *  for what runs. `spools:` names are then checked for their form only. */
export const NO_CONTEXT: AllowlistContext = { spools: [], home: null };

/** `p` with links resolved: its real path, or, when it does not exist yet (a spool about to be
 *  created), the real path of its nearest existing parent with the rest of the names after it. */
export function realForm(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    const parent = path.dirname(p);
    return parent === p ? p : path.join(realForm(parent), path.basename(p));
  }
}

/** The forms a folder may be compared in: as written (resolved) and, when `follow`, with its links resolved. */
function forms(p: string, follow: boolean): string[] {
  const real = follow ? realForm(p) : p;
  return real === p ? [p] : [p, real];
}

/**
 * Why `root`, a path root (`what` "root") or working folder ("cwd"), may not be used; null when it may.
 * `offeredTo`: the spools whose sandboxes see the operation (its `spools:`, null for every spool).
 * `follow` false: compared as written only (the text against the settings), not through the links on
 * the disk (see linkedRootProblem).
 */
export function rootProblem(root: string, what: 'root' | 'cwd', shared: boolean, ctx: AllowlistContext, offeredTo: string[] | null, follow = true): string | null {
  const overlaps = (a: string, b: string, how: (x: string, y: string) => boolean) => forms(a, follow).some((x) => forms(b, follow).some((y) => how(x, y)));
  const flag = what === 'root' ? 'shared_with_sandbox: true on the argument' : 'cwd_shared_with_sandbox: true on the operation';
  if (ctx.home !== null) {
    const home = ctx.home;
    if (overlaps(root, home, isInside)) {
      const how = what === 'root' ? 'a request could name it' : 'a program working there could read it';
      return `contains Dumbwaiter's home (${home}), which holds the ledger with the keys' secrets: ${how}. Choose a folder that does not contain it`;
    }
    if (overlaps(home, root, isInside)) return `lies inside Dumbwaiter's home (${home}), which holds the ledger with the keys' secrets`;
  }
  // Every spool, whichever the operation is offered to: any spool's sandbox can swap what is in its folder.
  const why = 'which the sandbox writes: it could swap what the program works on for a link to elsewhere';
  const offered = offeredTo ?? ctx.spools.map((s) => s.name);
  for (const { name, dir } of ctx.spools) {
    const contains = overlaps(root, dir, isInside);
    if (!contains && !overlaps(dir, root, isInside)) continue;
    const where = `${contains ? 'contains' : 'lies inside'} the spool "${name}" (${dir})`;
    if (!shared) return contains ? `${where}, ${why}. Choose a narrower folder, or declare ${flag} if that is intended` : `${where}, ${why}. Declare ${flag} if that is intended`;
    // Shared with that spool's own sandbox, never with another's: it would read that spool's results.
    const others = offered.filter((n) => n !== name);
    if (others.length > 0) {
      const to = offeredTo === null ? 'every spool' : offeredTo.map((n) => `"${n}"`).join(', ');
      return `${where}, and the operation is offered to ${to}: the sandbox of ${others.map((n) => `spool "${n}"`).join(', ')} would reach spool "${name}"'s files through it (${flag} shares a folder with the spool's own sandbox only). Offer the operation to that spool alone (spools: [${name}]), or choose a folder apart from it`;
    }
  }
  return null;
}

/** The folders of an operation it declares shared with the sandbox: what the approval card warns about. */
export function sharedRoots(op: Operation): string[] {
  const roots = new Set<string>();
  if (op.cwd_shared_with_sandbox) roots.add(op.cwd);
  for (const spec of Object.values(op.args)) {
    const t = spec.type === 'array' ? spec.items : spec;
    if (t.type === 'path' && t.shared_with_sandbox) for (const r of t.within) roots.add(r);
  }
  return [...roots];
}

/**
 * Why `folder`, fine as written, may not be used as the disk is now: a link on its way (or on a
 * spool's or the home's) leads it into a spool or the home. That is the world's problem, not the
 * text's: it disables its operation alone (allowlist/load.ts), and is looked at again before each
 * run and at each tick (the daemon's allowlist source), as a sandbox may plant such a link any time.
 */
export function linkedRootProblem(folder: string, what: 'root' | 'cwd', shared: boolean, ctx: AllowlistContext, offeredTo: string[] | null): string | null {
  if (rootProblem(folder, what, shared, ctx, offeredTo, false) !== null) return null; // the text's problem
  const problem = rootProblem(folder, what, shared, ctx, offeredTo);
  return problem && `leads to ${realForm(folder)}, which ${problem}`;
}

/** The folders an operation works in, as it was loaded: its cwd, then each path argument's roots. */
function foldersOf(op: Operation): { folder: string; what: 'root' | 'cwd'; shared: boolean; label: string }[] {
  const out: { folder: string; what: 'root' | 'cwd'; shared: boolean; label: string }[] = [{ folder: op.cwd, what: 'cwd', shared: op.cwd_shared_with_sandbox, label: `its cwd ${op.cwd}` }];
  for (const [name, spec] of Object.entries(op.args)) {
    const t = spec.type === 'array' ? spec.items : spec;
    if (t.type === 'path') for (const r of t.within) out.push({ folder: r, what: 'root', shared: t.shared_with_sandbox, label: `the root ${r} of its argument "${name}"` });
  }
  return out;
}

/** Why operation `op`, as loaded, may not run as the disk is now (linkedRootProblem of one of its
 *  folders), or null. Cheap: a few realpath calls. */
export function operationWorldProblem(op: Operation, ctx: AllowlistContext): string | null {
  for (const f of foldersOf(op)) {
    const problem = linkedRootProblem(f.folder, f.what, f.shared, ctx, op.spools);
    if (problem) return `${f.label} ${problem}`;
  }
  return null;
}
