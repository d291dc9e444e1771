// A new spool's folder, for `spools add` (command line and app) and `init` or `config set spool` moving
// a spool. Made on purpose: only the folder itself, unless asked for its missing parents too (a typo, or
// a share or synced folder that is not mounted, must not quietly become a local spool), and a folder
// that cannot be made is said in one line. And against the allowlist the daemon serves: one inside (or
// holding) an operation's root or working folder would let the sandboxes that see that operation read
// the new spool's results. The daemon would then offer nothing at all (daemon/allowlistSource.ts);
// refusing the folder first says which operation is in the way.
import { readFileSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { AllowlistError, parseAllowlist } from '../allowlist/load';
import type { AllowlistContext } from '../allowlist/roots';
import type { Allowlist } from '../allowlist/types';
import type { HomePaths } from '../home';
import type { Settings } from '../settings';
import { withSpool } from './registry';

/** What is at `dir` (links followed: a parent may be one, as /tmp is on macOS): its stat, null where
 *  nothing is (a missing name, or a file where a folder of the path should be), or the error code. */
function lookAt(dir: string): Stats | null | string {
  try {
    return statSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : code;
  }
}

/**
 * Why spool folder `dir` (absolute) cannot be made where it is, from the folders above it, or null: a
 * file among them, one that cannot be looked at, or a missing parent unless `parents` (then every
 * missing one is made). Says nothing of `dir` itself (spoolRefusal in spool/layout.ts looks at that).
 */
export function spoolParentProblem(dir: string, parents: boolean): string | null {
  const abs = path.resolve(dir);
  const missing: string[] = [];
  let above = path.dirname(abs);
  let found = lookAt(above);
  for (; found === null && above !== path.dirname(above); found = lookAt(above)) {
    missing.push(above);
    above = path.dirname(above);
  }
  if (typeof found === 'string') return `${above} cannot be looked at (${found}), so the spool ${abs} cannot be made there`;
  if (found && !found.isDirectory()) return `${above} is a file, not a folder: the spool ${abs} cannot be made in it. Give a path made of folders`;
  if (missing.length === 0 || parents) return null;
  const more = missing.length - 1;
  return `${missing[0]} does not exist: check the path (a typo? a share or synced folder not mounted?), or pass --parents to create it${more > 0 ? ` and the ${more} missing folder${more === 1 ? '' : 's'} above it` : ''}`;
}

/** A failure to make a spool's folders (a Node error naming the path), in one line, or null for any
 *  other error: what the filesystem said, in words. */
export function folderCreationProblem(e: unknown): string | null {
  const err = e as NodeJS.ErrnoException;
  if (!(e instanceof Error) || err.syscall !== 'mkdir' || typeof err.path !== 'string') return null;
  const where = path.dirname(err.path);
  const why: Record<string, string> = {
    ENOENT: `this filesystem (${where}) does not allow new folders there`,
    EACCES: `you may not create folders in ${where}`,
    EPERM: `you may not create folders in ${where}`,
    EROFS: `${where} is on a read-only filesystem`,
    ENOSPC: 'the disk is full',
    ENOTDIR: `${where} is not a folder`,
  };
  return `cannot create the folder ${err.path}: ${why[err.code ?? ''] ?? err.code ?? err.message}`;
}

/** The allowlist a daemon would serve with `ctx`: the file when it loads, else its last good copy. */
function served(home: Pick<HomePaths, 'allowlist' | 'lastGoodAllowlist'>, ctx: AllowlistContext): { file: string; text: string; list: Allowlist } | null {
  for (const file of [home.allowlist, home.lastGoodAllowlist]) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // none yet
    }
    try {
      return { file, text, list: parseAllowlist(text, file, ctx) };
    } catch (e) {
      if (!(e instanceof AllowlistError)) throw e;
    }
  }
  return null;
}

/** Why spool `name` may not be at `dir` (added, or moved there) as the allowlist stands; null when it may. */
export function spoolAllowlistProblem(settings: Settings, home: Pick<HomePaths, 'root' | 'allowlist' | 'lastGoodAllowlist'>, name: string, dir: string): string | null {
  const now = served(home, { spools: settings.spools, home: home.root });
  if (!now) return null; // nothing is offered now: a fixed file is checked with the new spool when it loads
  const abs = path.resolve(dir);
  try {
    // Through a link only, the new spool would disable the operations in the way (allowlist/roots.ts): name them too.
    const next = parseAllowlist(now.text, now.file, { spools: withSpool(settings, name, abs).spools, home: home.root });
    const blocked = [...next.disabled.values()].filter((d) => !now.list.disabled.has(d.name));
    if (blocked.length === 0) return null;
    return (
      `spool ${name} at ${abs} would be within reach of the allowlist's operation${blocked.length === 1 ? '' : 's'} ${blocked.map((d) => `"${d.name}"`).join(', ')} through a link, which would then be disabled:\n` +
      `${blocked.map((d) => `  ${d.reason}`).join('\n')}\nChoose a folder apart from the operations' folders, or change the allowlist first`
    );
  } catch (e) {
    if (!(e instanceof AllowlistError)) throw e;
    // It loads now, so each problem comes of the new spool; `operations[i]` is the file's i-th operation
    // (disabled ones included: they are not among those loaded).
    const names = ((parse(now.text) as { operations: { name?: unknown }[] }).operations ?? []).map((o) => String(o?.name));
    const ops = [...new Set(e.problems.map((p) => /^operations\[(\d+)\]/.exec(p.field)?.[1]).filter((i) => i !== undefined).map((i) => `"${names[Number(i)]}"`))];
    const lines = e.problems.map((p) => `  ${p.line !== null ? `line ${p.line}: ` : ''}${p.field}: ${p.message}`);
    return (
      `spool ${name} at ${abs} would be within reach of the allowlist's operation${ops.length === 1 ? '' : 's'} ${ops.join(', ')}: ` +
      `their sandboxes could read its results, and with it ${now.file} would no longer load:\n${lines.join('\n')}\n` +
      'Choose a folder apart from the operations\' folders, or change the allowlist first'
    );
  }
}
