// Which folders an operation may work on, given where the sandboxes write and where the host keeps its
// secrets. A path root that contains a spool (or lies inside it) lets a request name what the sandbox
// controls, and the sandbox can swap it under the program; the operation must say so
// (`shared_with_sandbox: true`), and the human is warned. A root that overlaps Dumbwaiter's home, which
// holds the ledger with the keys' secrets, is never allowed. A working folder is held to the same rules:
// a program that walks it (`grep -r .`) reads what is below it.
import { realpathSync } from 'node:fs';
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

/** The forms a folder may be compared in: as written (resolved) and, when it exists, its real path. */
function forms(p: string): string[] {
  try {
    const real = realpathSync.native(p);
    return real === p ? [p] : [p, real];
  } catch {
    return [p];
  }
}

const overlaps = (a: string, b: string, how: (x: string, y: string) => boolean) => forms(a).some((x) => forms(b).some((y) => how(x, y)));

/** Why `root`, a path root (`what` "root") or working folder ("cwd"), may not be used; null when it may. */
export function rootProblem(root: string, what: 'root' | 'cwd', shared: boolean, ctx: AllowlistContext): string | null {
  const flag = what === 'root' ? 'shared_with_sandbox: true on the argument' : 'cwd_shared_with_sandbox: true on the operation';
  if (ctx.home !== null) {
    const home = ctx.home;
    if (overlaps(root, home, isInside)) {
      const how = what === 'root' ? 'a request could name it' : 'a program working there could read it';
      return `contains Dumbwaiter's home (${home}), which holds the ledger with the keys' secrets: ${how}. Choose a folder that does not contain it`;
    }
    if (overlaps(home, root, isInside)) return `lies inside Dumbwaiter's home (${home}), which holds the ledger with the keys' secrets`;
  }
  if (shared) return null;
  // Every spool, whichever the operation is offered to: any spool's sandbox can swap what is in its folder.
  const why = 'which the sandbox writes: it could swap what the program works on for a link to elsewhere';
  for (const { name, dir } of ctx.spools) {
    if (overlaps(root, dir, isInside)) {
      return `contains the spool "${name}" (${dir}), ${why}. Choose a narrower folder, or declare ${flag} if that is intended`;
    }
    if (overlaps(dir, root, isInside)) return `lies inside the spool "${name}" (${dir}), ${why}. Declare ${flag} if that is intended`;
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
