// Path roots and working folders against where this host's spool and home are: refused at load when
// they let a request reach what the sandbox controls (unless declared shared) or the host's secrets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AllowlistError, parseAllowlist, type AllowlistProblem } from '../../../../main/core/allowlist/load';
import { sharedRoots, type AllowlistContext } from '../../../../main/core/allowlist/roots';
import { DEFAULT_CWD, ensureDefaultCwd } from '../../../../main/core/allowlist/defaultCwd';

let base: string;
let spool: string;
let ctx: AllowlistContext;

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'dw-roots-')));
  spool = path.join(base, 'share', 'spool');
  ctx = { spools: [{ name: 'default', dir: spool }], home: path.join(base, 'config', 'Dumbwaiter') };
  mkdirSync(path.join(spool, 'results'), { recursive: true });
  mkdirSync(ctx.home!, { recursive: true });
  mkdirSync(path.join(base, 'work'), { recursive: true });
  symlinkSync(path.join(base, 'share'), path.join(base, 'share-link'));
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

/** One operation reading a path argument `p` with the given fields, under an optional cwd. */
const yaml = (pathFields: string, opFields: string[] = []) =>
  ['version: 1', 'operations:', '  - name: read', '    command: [cat, "{p}"]', ...opFields.map((f) => `    ${f}`), '    args:', `      p: {type: path${pathFields}}`, ''].join('\n');
const within = (...roots: string[]) => `, within: [${roots.map((r) => JSON.stringify(r)).join(', ')}]`;

function problems(text: string): AllowlistProblem[] {
  try {
    parseAllowlist(text, 'allowlist.yaml', ctx);
  } catch (e) {
    if (e instanceof AllowlistError) return e.problems;
    throw e;
  }
  return [];
}

/** Why the only operation is disabled as the disk is now (null: it is not). */
function disabledReason(text: string, c = ctx): string | null {
  const list = parseAllowlist(text, 'allowlist.yaml', c);
  expect(list.operations.size + list.disabled.size).toBe(1);
  return list.disabled.get('read')?.reason ?? null;
}

describe('path roots and the spool', () => {
  it('refuses a root that contains the spool, naming the line and field, and says how to allow it', () => {
    expect(problems(yaml(within(path.join(base, 'share'))))).toEqual([
      { line: 6, field: 'operations[0].args.p.within', message: expect.stringMatching(/^\S+\/share contains the spool "default" \(.*\), which the sandbox writes.*declare shared_with_sandbox: true on the argument/) },
    ]);
  });

  it('refuses the spool itself and a root inside it; one reached through a symlink disables its operation alone', () => {
    for (const root of [spool, path.join(spool, 'results')]) expect(problems(yaml(within(root))), root).toHaveLength(1);
    // The link is the disk's doing, not the text's (a sandbox may plant one any time): the file loads.
    for (const root of [path.join(base, 'share-link', 'spool', 'results'), path.join(base, 'share-link')]) {
      expect(problems(yaml(within(root))), root).toEqual([]);
      expect(disabledReason(yaml(within(root))), root).toMatch(new RegExp(`^line 6: operations\\[0\\]\\.args\\.p\\.within: ${root} leads to ${path.dirname(spool)}.*, which (contains|lies inside) the spool "default"`));
    }
    expect(problems(yaml(within(path.join(spool, 'results'))))[0]!.message).toBe(`${path.join(spool, 'results')} lies inside the spool "default" (${spool}), which the sandbox writes: it could swap what the program works on for a link to elsewhere. Declare shared_with_sandbox: true on the argument if that is intended`);
  });

  it('allows a root that overlaps the spool when the argument declares it shared with the sandbox, and reports it as shared', () => {
    const list = parseAllowlist(yaml(`${within(path.join(spool, 'results'), path.join(base, 'work'))}, shared_with_sandbox: true`), 'allowlist.yaml', ctx);
    expect(sharedRoots(list.operations.get('read')!)).toEqual([path.join(spool, 'results'), path.join(base, 'work')]);
  });

  it('allows a root beside the spool, and any root when no spool is known', () => {
    expect(problems(yaml(within(path.join(base, 'work'))))).toEqual([]);
    expect(sharedRoots(parseAllowlist(yaml(within(path.join(base, 'work'))), 'a', ctx).operations.get('read')!)).toEqual([]);
    expect(() => parseAllowlist(yaml(within(base)))).not.toThrow();
  });

  it('checks the roots of an array of paths, and the default root (the cwd) at the argument', () => {
    const arr = ['version: 1', 'operations:', '  - name: read', '    command: [cat, "{p}"]', '    args:', `      p: {type: array, items: {type: path${within(spool)}}}`, ''].join('\n');
    expect(problems(arr)).toEqual([{ line: 6, field: 'operations[0].args.p.items.within', message: expect.stringMatching(/ contains the spool/) }]);
    expect(problems(yaml('', [`cwd: ${JSON.stringify(base)}`, 'cwd_shared_with_sandbox: true']))).toEqual([
      { line: 5, field: 'operations[0].cwd', message: expect.stringMatching(/^contains Dumbwaiter's home/) },
      { line: 8, field: 'operations[0].args.p.type', message: expect.stringMatching(/^its folder, the operation's cwd .*, contains/) },
    ]);
  });
});

describe('path roots and several spools', () => {
  it('refuses a root or cwd overlapping any spool of the home, naming that spool, and allows one beside all of them', () => {
    const other = path.join(base, 'other-spool');
    mkdirSync(other, { recursive: true });
    const two: AllowlistContext = { spools: [{ name: 'default', dir: spool }, { name: 'ci', dir: other }], home: ctx.home };
    const problemsIn = (text: string) => {
      try {
        parseAllowlist(text, 'allowlist.yaml', two);
      } catch (e) {
        if (e instanceof AllowlistError) return e.problems;
        throw e;
      }
      return [];
    };
    expect(problemsIn(yaml(within(path.join(other, 'x'))))).toEqual([
      { line: 6, field: 'operations[0].args.p.within', message: `${path.join(other, 'x')} lies inside the spool "ci" (${other}), which the sandbox writes: it could swap what the program works on for a link to elsewhere. Declare shared_with_sandbox: true on the argument if that is intended` },
    ]);
    expect(problemsIn(yaml(within(path.join(spool, 'results'))))).toEqual([{ line: 6, field: 'operations[0].args.p.within', message: expect.stringMatching(/lies inside the spool "default"/) }]);
    // An operation offered to one spool only is still held to every spool's folder: the other sandbox writes there too.
    expect(problemsIn(yaml(within(path.join(base, 'work')), [`cwd: ${JSON.stringify(other)}`, 'spools: [default]']))).toEqual([
      { line: 5, field: 'operations[0].cwd', message: expect.stringMatching(/^contains the spool "ci" .*cwd_shared_with_sandbox: true on the operation/) },
    ]);
    expect(problemsIn(yaml(within(path.join(base, 'work'))))).toEqual([]);
  });
});

describe('folders shared with a sandbox, and the other spools', () => {
  let other: string;
  let two: AllowlistContext;
  beforeAll(() => {
    other = path.join(base, 'share', 'ci');
    mkdirSync(other, { recursive: true });
    two = { spools: [{ name: 'default', dir: spool }, { name: 'ci', dir: other }], home: ctx.home };
  });
  const problemsIn = (text: string, c: AllowlistContext = two) => {
    try {
      parseAllowlist(text, 'allowlist.yaml', c);
    } catch (e) {
      if (e instanceof AllowlistError) return e.problems;
      throw e;
    }
    return [];
  };
  const shared = (root: string) => `${within(root)}, shared_with_sandbox: true`;

  it("refuses a shared root holding another spool's folder than the one spool it is offered to, naming that spool", () => {
    expect(problemsIn(yaml(shared(path.join(base, 'share')), ['spools: [default]']))).toEqual([
      {
        line: 7,
        field: 'operations[0].args.p.within',
        message: `${path.join(base, 'share')} contains the spool "ci" (${other}), and the operation is offered to "default": the sandbox of spool "default" would reach spool "ci"'s files through it (shared_with_sandbox: true on the argument shares a folder with the spool's own sandbox only). Offer the operation to that spool alone (spools: [ci]), or choose a folder apart from it`,
      },
    ]);
    expect(problemsIn(yaml(shared(path.join(other, 'results')), ['spools: [default]']))).toEqual([{ line: 7, field: 'operations[0].args.p.within', message: expect.stringMatching(/lies inside the spool "ci" .*offered to "default"/) }]);
  });

  it('refuses a shared root inside one spool when the operation is offered to every spool, or to that one and another', () => {
    expect(problemsIn(yaml(shared(path.join(spool, 'results'))))).toEqual([{ line: 6, field: 'operations[0].args.p.within', message: expect.stringMatching(/lies inside the spool "default" .*offered to every spool: the sandbox of spool "ci" would reach spool "default"'s files/) }]);
    expect(problemsIn(yaml(shared(path.join(spool, 'results')), ['spools: [default, ci]']))[0]!.message).toMatch(/offered to "default", "ci": the sandbox of spool "ci" would reach/);
  });

  it("allows a shared root or cwd in a spool's own folder when the operation is offered to that spool alone, and reports it as shared", () => {
    const results = path.join(spool, 'results');
    const list = parseAllowlist(yaml(shared(results), [`cwd: ${JSON.stringify(results)}`, 'cwd_shared_with_sandbox: true', 'spools: [default]']), 'a', two);
    expect(sharedRoots(list.operations.get('read')!)).toEqual([results]);
    // One spool in the home: every spool is that one.
    expect(problemsIn(yaml(shared(results)), ctx)).toEqual([]);
  });

  it("refuses a shared cwd that holds another spool's folder, naming it", () => {
    expect(problemsIn(yaml(within(path.join(base, 'work')), [`cwd: ${JSON.stringify(path.join(base, 'share'))}`, 'cwd_shared_with_sandbox: true', 'spools: [ci]']))).toEqual([
      { line: 5, field: 'operations[0].cwd', message: expect.stringMatching(/^contains the spool "default" .*offered to "ci": the sandbox of spool "ci" would reach spool "default"'s files through it \(cwd_shared_with_sandbox: true on the operation/) },
    ]);
  });

  it('disables an operation whose root holds a spool not created yet whose parent is reached through a link', () => {
    const later: AllowlistContext = { spools: [{ name: 'later', dir: path.join(base, 'share-link', 'later') }], home: ctx.home };
    expect(problemsIn(yaml(within(path.join(base, 'share'))), later)).toEqual([]);
    expect(disabledReason(yaml(within(path.join(base, 'share'))), later)).toMatch(/^line 6: operations\[0\]\.args\.p\.within: .*share leads to .*share, which contains the spool "later"/);
  });
});

describe('path roots and the host home', () => {
  it('refuses a root that contains the home, even declared shared with the sandbox', () => {
    for (const fields of [within(path.join(base, 'config')), `${within(path.join(base, 'config'))}, shared_with_sandbox: true`]) {
      expect(problems(yaml(fields))).toEqual([{ line: 6, field: 'operations[0].args.p.within', message: expect.stringMatching(/config contains Dumbwaiter's home .*ledger with the keys' secrets/) }]);
    }
  });

  it('refuses a root inside the home', () => {
    expect(problems(yaml(`${within(path.join(ctx.home!, 'logs'))}, shared_with_sandbox: true`))[0]!.message).toMatch(/logs lies inside Dumbwaiter's home/);
  });
});

describe('the working folder', () => {
  it('refuses a cwd inside the spool unless the operation declares it shared, and reports it then', () => {
    const results = path.join(spool, 'results');
    const text = (shared: boolean) => yaml(within(path.join(base, 'work')), [`cwd: ${JSON.stringify(results)}`, ...(shared ? ['cwd_shared_with_sandbox: true'] : [])]);
    expect(problems(text(false))).toEqual([{ line: 5, field: 'operations[0].cwd', message: expect.stringMatching(/^lies inside the spool.*cwd_shared_with_sandbox: true on the operation/) }]);
    expect(sharedRoots(parseAllowlist(text(true), 'a', ctx).operations.get('read')!)).toEqual([results]);
  });

  it('refuses a cwd that contains the spool unless the operation declares it shared (a program walking it reads what the sandbox wrote)', () => {
    const share = path.join(base, 'share');
    const text = (shared: boolean) => yaml(within(path.join(base, 'work')), [`cwd: ${JSON.stringify(share)}`, ...(shared ? ['cwd_shared_with_sandbox: true'] : [])]);
    expect(problems(text(false))).toEqual([{ line: 5, field: 'operations[0].cwd', message: expect.stringMatching(/^contains the spool.*cwd_shared_with_sandbox: true on the operation/) }]);
    expect(problems(text(true))).toEqual([]);
  });

  it('refuses a cwd that contains the home, shared or not', () => {
    const text = yaml(within(path.join(base, 'work')), [`cwd: ${JSON.stringify(path.join(base, 'config'))}`, 'cwd_shared_with_sandbox: true']);
    expect(problems(text)).toEqual([{ line: 5, field: 'operations[0].cwd', message: expect.stringMatching(/^contains Dumbwaiter's home .*a program working there could read it/) }]);
  });

  it('runs an operation without a cwd in an empty private folder, not in the home folder that holds the home and the spool', () => {
    const op = parseAllowlist(yaml(within(path.join(base, 'work'))), 'a', ctx).operations.get('read')!;
    expect(op.cwd).toBe(DEFAULT_CWD);
    expect(op.cwd).not.toBe(os.homedir());
    expect(statSync(ensureDefaultCwd()).mode & 0o777).toBe(0o700);
    expect(readdirSync(DEFAULT_CWD)).toEqual([]);
  });

  it('refuses a cwd inside the home, shared or not', () => {
    const text = yaml(within(path.join(base, 'work')), [`cwd: ${JSON.stringify(path.join(ctx.home!, 'logs'))}`, 'cwd_shared_with_sandbox: true']);
    expect(problems(text)).toEqual([{ line: 5, field: 'operations[0].cwd', message: expect.stringMatching(/^lies inside Dumbwaiter's home/) }]);
  });

  it('a flag that is not true or false is an error', () => {
    expect(problems(yaml(`${within(path.join(base, 'work'))}, shared_with_sandbox: yes please`))).toEqual([{ line: 6, field: 'operations[0].args.p.shared_with_sandbox', message: 'must be true or false' }]);
  });
});
