// Path arguments: resolved with every symlink followed, then required to stay inside one of the roots
// (whose real paths were fixed when the allowlist was loaded).
import { lstatSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** True when `child` is `root` or lies below it. Both must already be real, absolute paths. */
export function isInside(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  if (rel === '') return true;
  return rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel);
}

function realpathOrNull(p: string): string | null {
  try {
    return realpathSync.native(p);
  } catch {
    return null;
  }
}

/** True when something (even a dangling symlink) is at `p`, without following it. */
function entryExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** The real path of `p`; for a path that does not exist yet, the real path of its deepest existing
 *  ancestor joined with the rest (so a symlinked parent cannot smuggle it outside). A dangling or
 *  looping symlink on the way cannot be resolved: whatever it points to, writing through it would land there. */
function resolveReal(p: string): { real: string; exists: boolean; missing: number } | null {
  const direct = realpathOrNull(p);
  if (direct) return { real: direct, exists: true, missing: 0 };
  const rest: string[] = [];
  let cur = p;
  for (;;) {
    if (entryExists(cur)) return null;
    const parent = path.dirname(cur);
    rest.unshift(path.basename(cur));
    if (parent === cur) return null;
    const real = realpathOrNull(parent);
    if (real) return { real: path.join(real, ...rest), exists: false, missing: rest.length };
    cur = parent;
  }
}

export type PathCheck = { ok: true; path: string } | { ok: false; message: string };

export function checkPath(value: string, base: string, roots: string[], mustExist: boolean): PathCheck {
  if (value.length === 0) return { ok: false, message: 'is empty' };
  if (value.includes('\0')) return { ok: false, message: 'contains a NUL byte' };
  const abs = path.resolve(base, value);
  const resolved = resolveReal(abs);
  if (!resolved) return { ok: false, message: 'cannot be resolved' };
  if (mustExist && !resolved.exists) return { ok: false, message: 'does not exist' };
  // The roots were resolved when the allowlist was loaded (allowlist/load.ts): never again here, where
  // a root replaced by a link since would carry the check wherever the link leads.
  const inside = roots.some((root) => isInside(root, resolved.real));
  if (!inside) return { ok: false, message: `is outside the allowed folders (${roots.join(', ')})` };
  // A missing folder on the way is a name the program would create by name, one the sandbox could make
  // a link to elsewhere first (docs/SECURITY.md): only the last name may be new.
  if (resolved.missing > 1) return { ok: false, message: `is in a folder that does not exist (${path.dirname(abs)}): only the last name of a path may be new` };
  return { ok: true, path: resolved.real };
}
