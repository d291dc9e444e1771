// A new spool's folder against the allowlist the daemon serves: one inside (or holding) an operation's
// root or working folder would let the sandboxes that see that operation read the new spool's results.
// The daemon would then offer nothing at all (daemon/allowlistSource.ts); refusing the folder first
// says which operation is in the way. For `spools add` (command line and app) and `init` moving a spool.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { AllowlistError, parseAllowlist } from './allowlist/load';
import type { AllowlistContext } from './allowlist/roots';
import type { Allowlist } from './allowlist/types';
import type { HomePaths } from './home';
import type { Settings } from './settings';
import { withSpool } from './spools';

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
