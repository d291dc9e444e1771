// Typed arguments: validateArgs on operations loaded from YAML, with real folders and symlinks for paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllowlist } from '../../../../main/core/allowlist/load';
import { render } from '../../../../main/core/allowlist/template';
import type { Operation } from '../../../../main/core/allowlist/types';
import { validateArgs } from '../../../../main/core/allowlist/validateArgs';

/** One operation `t` from YAML: `command` is a flow list, `args` the lines under `args:`. */
function op(command: string, args: string, cwd = '/'): Operation {
  const text = [
    'version: 1',
    'operations:',
    '  - name: t',
    `    command: ${command}`,
    `    cwd: ${JSON.stringify(cwd)}`,
    '    args:',
    ...args.split('\n').map((l) => `      ${l}`),
    '',
  ].join('\n');
  const found = parseAllowlist(text).operations.get('t');
  if (!found) throw new Error('no operation t');
  return found;
}

function ok(o: Operation, args: Record<string, unknown>): Record<string, unknown> {
  const r = validateArgs(o, args);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(args)} to be accepted, got: ${r.message}`);
  return r.values;
}

function bad(o: Operation, args: Record<string, unknown>): string {
  const r = validateArgs(o, args);
  if (r.ok) throw new Error(`expected ${JSON.stringify(args)} to be refused, got values ${JSON.stringify(r.values)}`);
  return r.message;
}

describe('string arguments', () => {
  it('a pattern must match the whole value, not a part of it', () => {
    const o = op('[p, "{x}"]', 'x: {type: string, pattern: "[a-z]+"}');
    expect(ok(o, { x: 'abc' })).toEqual({ x: 'abc' });
    for (const x of ['abc1', '1abc', 'ab c', 'ABC', '', 'abc\n', '\nabc']) {
      expect(bad(o, { x }), JSON.stringify(x)).toMatch(/argument "x" does not match the pattern \[a-z\]\+/);
    }
  });

  it('an alternation in the pattern is anchored as a whole', () => {
    const o = op('[p, "{x}"]', 'x: {type: string, pattern: "a|bc"}');
    ok(o, { x: 'a' });
    ok(o, { x: 'bc' });
    for (const x of ['abc', 'ax', 'xbc', 'bcx']) bad(o, { x });
  });

  it('an already anchored pattern keeps working', () => {
    const o = op('[p, "{x}"]', 'x: {type: string, pattern: "^[A-Za-z0-9 _./-]*$", max_length: 200, default: ""}');
    expect(ok(o, { x: 'src/a b.ts' })).toEqual({ x: 'src/a b.ts' });
    bad(o, { x: 'a;b' });
  });

  it('max_length counts characters, inclusive', () => {
    const o = op('[p, "{x}"]', 'x: {type: string, max_length: 5}');
    ok(o, { x: 'abcde' });
    ok(o, { x: '😀😀😀😀😀' }); // 10 UTF-16 units, 5 characters
    expect(bad(o, { x: 'abcdef' })).toMatch(/longer than 5 characters/);
    bad(o, { x: '😀😀😀😀😀😀' });
  });

  it('max_length defaults to 4096', () => {
    const o = op('[p, "{x}"]', 'x: {type: string}');
    ok(o, { x: 'a'.repeat(4096) });
    bad(o, { x: 'a'.repeat(4097) });
  });

  it('enum allows exactly the listed values', () => {
    const o = op('[p, "{x}"]', 'x: {type: string, enum: [debug, release]}');
    ok(o, { x: 'debug' });
    ok(o, { x: 'release' });
    for (const x of ['Debug', 'debu', 'debug ', '', 'release,debug']) expect(bad(o, { x })).toMatch(/must be one of "debug", "release"/);
  });

  it('refuses a NUL byte, even without a pattern', () => {
    const o = op('[p, "{x}"]', 'x: {type: string}');
    expect(bad(o, { x: 'a\0b' })).toMatch(/NUL/);
    expect(bad(o, { x: '\0' })).toMatch(/NUL/);
  });

  it('refuses values that are not strings', () => {
    const o = op('[p, "{x}"]', 'x: {type: string}');
    for (const x of [4, true, null, [], ['a'], { a: 1 }]) expect(bad(o, { x }), JSON.stringify(x)).toMatch(/must be a string/);
  });

  it('keeps hostile text as it is', () => {
    const o = op('[p, "{x}"]', 'x: {type: string}');
    for (const x of ['; rm -rf ~', '$(id)', 'a b', '*', '"\'', 'x\ny']) expect(ok(o, { x })).toEqual({ x });
  });

  it('refuses a whole-element value that starts with "-"', () => {
    const o = op('[rm, "{x}"]', 'x: {type: string}');
    for (const x of ['-rf', '--help', '-', '--']) expect(bad(o, { x }), x).toMatch(/must not start with "-"/);
    ok(o, { x: 'a-b' });
    ok(o, { x: ' -x' });
  });

  it('allows a leading "-" with allow_dash: true', () => {
    const o = op('[p, "{x}"]', 'x: {type: string, allow_dash: true}');
    expect(ok(o, { x: '-rf' })).toEqual({ x: '-rf' });
  });

  it('allows a leading "-" when the value is embedded after literal text', () => {
    const o = op('[npm, test, "--", "--grep={filter}"]', 'filter: {type: string}');
    expect(ok(o, { filter: '-rf' })).toEqual({ filter: '-rf' });
    expect(render(o.template, o.args, { filter: '-rf' }).argv).toEqual(['npm', 'test', '--', '--grep=-rf']);
  });

  it('refuses a leading "-" when the value starts its element, even with text after it', () => {
    // "{x}.txt" with x = "-rf" gives the element "-rf.txt": an option as much as "-rf" is.
    const o = op('[cat, "{x}.txt"]', 'x: {type: string}');
    expect(bad(o, { x: '-rf' })).toMatch(/must not start with "-"/);
    ok(o, { x: 'notes' });
    const o2 = op('[p, "{a}{b}"]', 'a: {type: string, required: false}\nb: {type: string}');
    bad(o2, { b: '-x' });
  });

  it('also checks a leading "-" in the default', () => {
    expect(() => op('[p, "{x}"]', 'x: {type: string, default: "-v"}')).not.toThrow();
    const o = op('[p, "{x}"]', 'x: {type: string, default: "-v"}');
    expect(bad(o, {})).toMatch(/must not start with "-"/);
  });
});

describe('integer arguments', () => {
  it('min and max are inclusive', () => {
    const o = op('[p, "{n}"]', 'n: {type: integer, min: 1, max: 10}');
    expect(ok(o, { n: 1 })).toEqual({ n: 1 });
    expect(ok(o, { n: 10 })).toEqual({ n: 10 });
    expect(bad(o, { n: 0 })).toMatch(/at least 1/);
    expect(bad(o, { n: 11 })).toMatch(/at most 10/);
    expect(bad(o, { n: -5 })).toMatch(/at least 1/);
  });

  it('refuses non-integers, numeric strings, floats and unsafe integers', () => {
    const o = op('[p, "{n}"]', 'n: {type: integer}');
    for (const n of ['4', '', 4.5, 0.1, NaN, Infinity, -Infinity, 2 ** 53, -(2 ** 53), 1e300, true, null, [4], { n: 4 }]) {
      expect(bad(o, { n }), String(n)).toMatch(/must be an integer/);
    }
  });

  it('accepts any safe integer without bounds, negatives and zero included', () => {
    const o = op('[p, "--n={n}"]', 'n: {type: integer}');
    for (const n of [0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 4.0]) expect(ok(o, { n })).toEqual({ n });
  });

  it('refuses a negative integer that starts an argv element ("-5" reads as an option), whole or before literal text, and in arrays', () => {
    for (const [command, args] of [['[head, -n, "{n}"]', 'n: {type: integer}'], ['[p, "{n}px"]', 'n: {type: integer, max: 10}'], ['[p, "{n}"]', 'n: {type: array, items: {type: integer}}']] as const) {
      const o = op(command, args);
      const n = args.includes('array') ? [3, -5] : -5;
      expect(bad(o, { n }), command).toMatch(/must not be negative here: "-5" would be read as an option \(an argument with a min below 0 allows it\)/);
    }
  });

  it('allows a negative integer starting an element when min allows negatives', () => {
    const o = op('[p, "{n}"]', 'n: {type: integer, min: -10}');
    expect(ok(o, { n: -5 })).toEqual({ n: -5 });
    expect(ok(op('[p, "{n}"]', 'n: {type: integer, min: 0}'), { n: 0 })).toEqual({ n: 0 });
  });
});

describe('boolean arguments', () => {
  it('accepts only true and false', () => {
    const o = op('[p, "{v}"]', 'v: {type: boolean, flag: --verbose}');
    expect(ok(o, { v: true })).toEqual({ v: true });
    expect(ok(o, { v: false })).toEqual({ v: false });
    for (const v of ['true', 'false', 1, 0, null, 'yes', []]) expect(bad(o, { v }), JSON.stringify(v)).toMatch(/must be true or false/);
  });

  it('is optional by default and absent when not given', () => {
    const o = op('[p, "{v}"]', 'v: {type: boolean, flag: --verbose}');
    expect(ok(o, {})).toEqual({});
  });
});

describe('path arguments', () => {
  let base: string;
  let root: string;
  let outside: string;
  let evil: string;
  let rootLink: string;

  beforeAll(() => {
    // realpath: the system temp folder may itself be reached through a symlink (macOS).
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dw-argtypes-')));
    root = path.join(base, 'root');
    outside = path.join(base, 'outside');
    evil = path.join(base, 'root-evil');
    rootLink = path.join(base, 'root-link');
    fs.mkdirSync(path.join(root, 'sub', 'deep'), { recursive: true });
    fs.mkdirSync(outside);
    fs.mkdirSync(evil);
    fs.writeFileSync(path.join(root, 'file.txt'), 'in');
    fs.writeFileSync(path.join(root, 'sub', 'deep', 'x.txt'), 'in');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'out');
    fs.writeFileSync(path.join(evil, 'x.txt'), 'evil');
    fs.symlinkSync(outside, path.join(root, 'to-outside')); // a folder symlink leaving the root
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret-link')); // a file symlink leaving it
    fs.symlinkSync(path.join(root, 'sub'), path.join(root, 'sub-link')); // a symlink that stays inside
    fs.symlinkSync(path.join(outside, 'not-yet.txt'), path.join(root, 'dangling-out')); // dangling, pointing outside
    fs.symlinkSync(root, rootLink); // the root itself, reached through a symlink
  });

  afterAll(() => {
    fs.rmSync(base, { recursive: true, force: true });
  });

  const pathOp = (opts: string, cwd = root) => op('[cat, "{p}"]', `p: {type: path, within: [${JSON.stringify(root)}]${opts}}`, cwd);

  it('accepts an absolute path inside the root and gives its real path', () => {
    expect(ok(pathOp(''), { p: path.join(root, 'file.txt') })).toEqual({ p: path.join(root, 'file.txt') });
    expect(ok(pathOp(''), { p: path.join(root, 'sub', 'deep', 'x.txt') })).toEqual({ p: path.join(root, 'sub', 'deep', 'x.txt') });
  });

  it('accepts the root itself', () => {
    expect(ok(pathOp(''), { p: root })).toEqual({ p: root });
    expect(ok(pathOp(''), { p: '.' })).toEqual({ p: root });
  });

  it('resolves a relative path against the operation cwd', () => {
    expect(ok(pathOp(''), { p: 'file.txt' })).toEqual({ p: path.join(root, 'file.txt') });
    expect(ok(pathOp(''), { p: './sub/../file.txt' })).toEqual({ p: path.join(root, 'file.txt') });
    const inSub = pathOp('', path.join(root, 'sub'));
    expect(ok(inSub, { p: 'deep/x.txt' })).toEqual({ p: path.join(root, 'sub', 'deep', 'x.txt') });
    expect(ok(inSub, { p: '../file.txt' })).toEqual({ p: path.join(root, 'file.txt') });
  });

  it('refuses ".." traversal out of the root', () => {
    const o = pathOp('');
    for (const p of ['../outside/secret.txt', `${root}/../outside/secret.txt`, 'sub/../../outside/secret.txt', '..', '../root-evil/x.txt']) {
      expect(bad(o, { p }), p).toMatch(/outside the allowed folders/);
    }
    bad(pathOp('', path.join(root, 'sub')), { p: '../../outside/secret.txt' });
  });

  it('refuses paths outside every root', () => {
    const o = pathOp('');
    for (const p of ['/', os.homedir(), path.join(outside, 'secret.txt'), base]) expect(bad(o, { p }), p).toMatch(/outside the allowed folders/);
  });

  it('refuses a sibling folder whose name starts with the root name', () => {
    const o = pathOp('');
    expect(bad(o, { p: path.join(evil, 'x.txt') })).toMatch(/outside the allowed folders/);
    expect(bad(o, { p: evil })).toMatch(/outside the allowed folders/);
    expect(bad(pathOp(', must_exist: false'), { p: `${root}-evil/new.txt` })).toMatch(/outside the allowed folders/);
  });

  it('refuses a symlink inside the root that points outside', () => {
    const o = pathOp('');
    expect(bad(o, { p: path.join(root, 'secret-link') })).toMatch(/outside the allowed folders/);
    expect(bad(o, { p: 'secret-link' })).toMatch(/outside the allowed folders/);
    expect(bad(o, { p: path.join(root, 'to-outside', 'secret.txt') })).toMatch(/outside the allowed folders/);
    expect(bad(o, { p: path.join(root, 'to-outside') })).toMatch(/outside the allowed folders/);
  });

  it('refuses a file that does not exist yet under a symlinked parent pointing outside', () => {
    const o = pathOp(', must_exist: false');
    expect(bad(o, { p: path.join(root, 'to-outside', 'new.txt') })).toMatch(/outside the allowed folders/);
    expect(bad(o, { p: 'to-outside/a/b/new.txt' })).toMatch(/outside the allowed folders/);
  });

  it('refuses a dangling symlink inside the root that points outside', () => {
    // Writing to root/dangling-out would create outside/not-yet.txt.
    const o = pathOp(', must_exist: false');
    expect(bad(o, { p: path.join(root, 'dangling-out') })).toMatch(/cannot be resolved/);
    expect(bad(o, { p: 'dangling-out' })).toMatch(/cannot be resolved/);
    expect(bad(o, { p: path.join(root, 'dangling-out', 'x') })).toMatch(/cannot be resolved/);
    expect(bad(pathOp(''), { p: 'dangling-out' })).toMatch(/cannot be resolved|does not exist/);
  });

  it('follows a symlink that stays inside the root and gives the real path', () => {
    expect(ok(pathOp(''), { p: path.join(root, 'sub-link', 'deep', 'x.txt') })).toEqual({ p: path.join(root, 'sub', 'deep', 'x.txt') });
  });

  it('works with a root that is itself reached through a symlink, and gives the real path', () => {
    const o = op('[cat, "{p}"]', `p: {type: path, within: [${JSON.stringify(rootLink)}]}`, rootLink);
    expect(ok(o, { p: path.join(rootLink, 'file.txt') })).toEqual({ p: path.join(root, 'file.txt') });
    expect(ok(o, { p: path.join(root, 'file.txt') })).toEqual({ p: path.join(root, 'file.txt') });
    expect(ok(o, { p: 'file.txt' })).toEqual({ p: path.join(root, 'file.txt') });
    bad(o, { p: path.join(rootLink, 'to-outside', 'secret.txt') });
    bad(o, { p: path.join(rootLink, '..', 'outside', 'secret.txt') });
  });

  it('substitutes the real path into argv', () => {
    const o = pathOp('');
    const values = ok(o, { p: 'sub-link/../file.txt' });
    expect(render(o.template, o.args, values).argv).toEqual(['cat', fs.realpathSync(path.join(root, 'sub-link', '..', 'file.txt'))]);
    const v2 = ok(o, { p: 'sub-link/deep/x.txt' });
    expect(render(o.template, o.args, v2).argv).toEqual(['cat', path.join(root, 'sub', 'deep', 'x.txt')]);
  });

  it('must_exist (the default) refuses a missing path; must_exist: false accepts it inside the root', () => {
    expect(bad(pathOp(''), { p: 'missing.txt' })).toMatch(/does not exist/);
    expect(bad(pathOp(', must_exist: true'), { p: 'missing.txt' })).toMatch(/does not exist/);
    const lax = pathOp(', must_exist: false');
    expect(ok(lax, { p: 'missing.txt' })).toEqual({ p: path.join(root, 'missing.txt') });
    // Only the last name may be new: a missing folder on the way could be made a link first.
    expect(bad(lax, { p: 'no/such/dir/new.txt' })).toMatch(/in a folder that does not exist .*only the last name of a path may be new/);
    expect(ok(lax, { p: 'sub-link/new.txt' })).toEqual({ p: path.join(root, 'sub', 'new.txt') });
    expect(bad(lax, { p: '../outside/new.txt' })).toMatch(/outside the allowed folders/);
  });

  it('accepts any of several roots', () => {
    const o = op('[cat, "{p}"]', `p: {type: path, within: [${JSON.stringify(evil)}, ${JSON.stringify(root)}]}`, root);
    ok(o, { p: path.join(evil, 'x.txt') });
    ok(o, { p: 'file.txt' });
    bad(o, { p: path.join(outside, 'secret.txt') });
  });

  it('defaults the root to the operation cwd', () => {
    const o = op('[cat, "{p}"]', 'p: {type: path}', path.join(root, 'sub'));
    ok(o, { p: 'deep/x.txt' });
    expect(bad(o, { p: '../file.txt' })).toMatch(/outside the allowed folders/);
  });

  it('refuses everything when the root does not exist', () => {
    const o = op('[cat, "{p}"]', `p: {type: path, within: [${JSON.stringify(path.join(base, 'gone'))}], must_exist: false}`, root);
    bad(o, { p: path.join(base, 'gone', 'x') });
    bad(o, { p: 'file.txt' });
  });

  it('refuses an empty path, a NUL byte and non-strings', () => {
    const o = pathOp(', must_exist: false');
    expect(bad(o, { p: '' })).toMatch(/empty/);
    expect(bad(o, { p: 'file\0.txt' })).toMatch(/NUL/);
    for (const p of [1, null, ['file.txt'], true]) expect(bad(o, { p })).toMatch(/must be a string path/);
  });

  it('resolves a default against the cwd, like a given value', () => {
    const o = op('[ls, "{dir}"]', `dir: {type: path, within: [${JSON.stringify(root)}], default: "sub"}`, root);
    expect(ok(o, {})).toEqual({ dir: path.join(root, 'sub') });
  });
});

describe('array arguments', () => {
  it('accepts up to max_items, refuses more', () => {
    const o = op('[p, "{xs}"]', 'xs: {type: array, items: {type: string}, max_items: 2}');
    expect(ok(o, { xs: [] })).toEqual({ xs: [] });
    expect(ok(o, { xs: ['a', 'b'] })).toEqual({ xs: ['a', 'b'] });
    expect(bad(o, { xs: ['a', 'b', 'c'] })).toMatch(/more than 2 items/);
  });

  it('max_items defaults to 64', () => {
    const o = op('[p, "{xs}"]', 'xs: {type: array, items: {type: integer}}');
    ok(o, { xs: Array.from({ length: 64 }, (_, i) => i) });
    bad(o, { xs: Array.from({ length: 65 }, (_, i) => i) });
  });

  it('checks each item and names the bad one', () => {
    const o = op('[p, "{xs}"]', 'xs: {type: array, items: {type: string, pattern: "[a-z.]+"}}');
    expect(bad(o, { xs: ['ok', 'NOT', 'ok'] })).toMatch(/argument "xs"\[1\] does not match/);
    expect(bad(o, { xs: ['ok', 3] })).toMatch(/argument "xs"\[1\] must be a string/);
    const ints = op('[p, "{ns}"]', 'ns: {type: array, items: {type: integer, min: 0}}');
    expect(bad(ints, { ns: [1, -1] })).toMatch(/"ns"\[1\] must be at least 0/);
    expect(bad(ints, { ns: [1, '2'] })).toMatch(/"ns"\[1\] must be an integer/);
  });

  it('refuses an item starting with "-" (items are whole elements)', () => {
    const o = op('[p, "{xs}"]', 'xs: {type: array, items: {type: string}}');
    expect(bad(o, { xs: ['a', '-rf'] })).toMatch(/"xs"\[1\] must not start with "-"/);
    const dash = op('[p, "{xs}"]', 'xs: {type: array, items: {type: string, allow_dash: true}}');
    ok(dash, { xs: ['a', '-rf'] });
  });

  it('refuses a value that is not an array', () => {
    const o = op('[p, "{xs}"]', 'xs: {type: array, items: {type: string}}');
    for (const xs of ['a', 'a,b', { 0: 'a' }, null, 1]) expect(bad(o, { xs })).toMatch(/must be an array/);
  });

  it('resolves path items to real paths inside the roots', () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dw-argtypes-arr-')));
    try {
      const root = path.join(base, 'r');
      fs.mkdirSync(root);
      fs.writeFileSync(path.join(root, 'a.txt'), '');
      fs.symlinkSync(path.join(root, 'a.txt'), path.join(root, 'a-link'));
      fs.symlinkSync(base, path.join(root, 'up'));
      const o = op('[cat, "{files}"]', `files: {type: array, items: {type: path, within: [${JSON.stringify(root)}]}}`, root);
      expect(ok(o, { files: ['a.txt', 'a-link'] })).toEqual({ files: [path.join(root, 'a.txt'), path.join(root, 'a.txt')] });
      expect(bad(o, { files: ['a.txt', 'up/r/a.txt', 'up'] })).toMatch(/"files"\[2\] is outside the allowed folders/);
      expect(bad(o, { files: ['nope.txt'] })).toMatch(/"files"\[0\] does not exist/);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('argument names, required arguments and defaults', () => {
  const o = op('[p, "{filter}", "{n}", "{v}", "{opt}", "{files}", "--m={must}"]', [
    'filter: {type: string, default: ""}',
    'n: {type: integer, min: 1, default: 4}',
    'v: {type: boolean, flag: --verbose, default: false}',
    'opt: {type: string, required: false}',
    'files: {type: array, items: {type: string}, default: [a, b]}',
    'must: {type: string}',
  ].join('\n'));

  it('refuses unknown argument names, naming them and the known ones', () => {
    const m = bad(o, { must: 'x', nope: 1 });
    expect(m).toMatch(/unknown argument "nope"/);
    expect(m).toMatch(/filter, n, v, opt, files, must/);
    const none = op('[p]', '{}');
    expect(bad(none, { x: 1 })).toMatch(/this operation takes none/);
    expect(ok(none, {})).toEqual({});
  });

  it('refuses names that exist only on Object.prototype', () => {
    for (const name of ['toString', 'constructor', 'hasOwnProperty']) expect(bad(o, { must: 'x', [name]: 'a' })).toMatch(/unknown argument/);
    expect(bad(o, JSON.parse('{"must": "x", "__proto__": "a"}') as Record<string, unknown>)).toMatch(/unknown argument "__proto__"/);
  });

  it('refuses a missing required argument', () => {
    expect(bad(o, {})).toMatch(/missing required argument "must"/);
  });

  it('fills in defaults and leaves absent optional arguments out', () => {
    expect(ok(o, { must: 'm' })).toEqual({ filter: '', n: 4, v: false, files: ['a', 'b'], must: 'm' });
    expect(render(o.template, o.args, ok(o, { must: 'm' })).argv).toEqual(['p', '', '4', 'a', 'b', '--m=m']);
  });

  it('a given value replaces the default, and is checked', () => {
    expect(ok(o, { must: 'm', filter: 'f', n: 9, v: true, opt: 'o', files: [] })).toEqual({ filter: 'f', n: 9, v: true, opt: 'o', files: [], must: 'm' });
    expect(bad(o, { must: 'm', n: 0 })).toMatch(/"n" must be at least 1/);
  });
});
