// Loading allowlist.yaml: errors that name the line and the field, the defaults, and the catalog's JSON Schema.
import { describe, expect, it } from 'vitest';
import os from 'node:os';
import path from 'node:path';
import { argsSchema } from '../../../../main/core/allowlist/argsSchema';
import { EXAMPLE_ALLOWLIST } from '../../../../main/core/allowlist/example';
import { defaultHomeDir, defaultSpoolDir } from '../../../../main/core/home';
import { AllowlistError, parseAllowlist, type AllowlistProblem } from '../../../../main/core/allowlist/load';
import type { Operation } from '../../../../main/core/allowlist/types';
import { validateArgs } from '../../../../main/core/allowlist/validateArgs';
import { DEFAULT_CWD } from '../../../../main/core/allowlist/defaultCwd';

const lines = (...ls: string[]) => ls.join('\n') + '\n';

function problemsOf(text: string): AllowlistProblem[] {
  try {
    parseAllowlist(text);
  } catch (e) {
    expect(e).toBeInstanceOf(AllowlistError);
    return (e as AllowlistError).problems;
  }
  throw new Error('expected the allowlist to be refused');
}

/** Exactly one problem, on that line and field, whose message matches. */
function expectOneProblem(text: string, line: number, field: string, message: RegExp): void {
  const problems = problemsOf(text);
  expect(problems, JSON.stringify(problems)).toHaveLength(1);
  expect(problems[0]).toMatchObject({ line, field });
  expect(problems[0]!.message).toMatch(message);
}

function onlyOp(text: string): Operation {
  const ops = [...parseAllowlist(text).operations.values()];
  expect(ops).toHaveLength(1);
  return ops[0]!;
}

describe('parseAllowlist errors', () => {
  it('a YAML syntax error names its line', () => {
    const text = lines('version: 1', 'operations:', '  - name: a', '    command: [echo', '    scope: read', '  - x: [');
    const problems = problemsOf(text);
    expect(problems.length).toBeGreaterThanOrEqual(1);
    expect(problems[0]!.message).toMatch(/^YAML syntax/);
    for (const p of problems) expect(p.line, JSON.stringify(p)).toEqual(expect.any(Number));
    expect(problems[0]!.line).toBeGreaterThanOrEqual(4);
  });

  it('a badly indented line is a YAML syntax error on that line', () => {
    const text = lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '   scope: read');
    const problems = problemsOf(text);
    expect(problems[0]!.message).toMatch(/^YAML syntax/);
    expect(problems[0]!.line).toBe(5);
  });

  it('a duplicate key is an error with its line', () => {
    const text = lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    name: b');
    const problems = problemsOf(text);
    expect(problems[0]!.message).toMatch(/unique/);
    expect(problems[0]!.line).toBe(5);
  });

  it('the message of the error lists the file, line and field', () => {
    const text = lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    scope: admin');
    try {
      parseAllowlist(text, '/home/u/allowlist.yaml');
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).toContain('/home/u/allowlist.yaml is invalid');
      expect((e as Error).message).toContain('line 5: operations[0].scope: must be read or write');
    }
  });

  it('a constraint of an argument names its line and its full field path', () => {
    const text = lines(
      'version: 1',
      'operations:',
      '  - name: test',
      '    command: [npm, test, "--", "--grep={filter}"]',
      '    args:',
      '      filter:',
      '        type: string',
      '        max_length: 0',
    );
    expectOneProblem(text, 8, 'operations[0].args.filter.max_length', /whole number/);
  });

  it('an unknown field names its line and field', () => {
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    comand: [ls]'), 5, 'operations[0].comand', /unknown field/);
    expectOneProblem(lines('version: 1', 'verison: 1', 'operations: []'), 2, 'verison', /unknown field/);
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "{x}"]', '    args:', '      x: {type: string, maxlength: 3}'),
      6,
      'operations[0].args.x.maxlength',
      /unknown field.*max_length/,
    );
    // A field of another type is unknown for this one.
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "{x}"]', '    args:', '      x: {type: integer, pattern: "[0-9]+"}'),
      6,
      'operations[0].args.x.pattern',
      /unknown field/,
    );
  });

  it('a missing command names the operation', () => {
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    scope: read'), 3, 'operations[0].command', /non-empty list/);
  });

  it('a command that is a string or an empty list is refused', () => {
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: "rm -rf {x}"'), 4, 'operations[0].command', /never a shell string/);
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: []'), 4, 'operations[0].command', /non-empty list/);
  });

  it('command[0] cannot hold a placeholder: the request never chooses the program', () => {
    const args = ['    args:', '      prog: {type: string, enum: [ls]}'];
    for (const cmd of ['["{prog}", x]', '["/usr/bin/{prog}"]', '["{prog}.sh"]']) {
      const problems = problemsOf(lines('version: 1', 'operations:', '  - name: a', `    command: ${cmd}`, ...args));
      expect(problems[0], cmd).toMatchObject({ line: 4, field: 'operations[0].command[0]', message: expect.stringMatching(/program itself cannot come from a request/) });
    }
    // Even an undeclared placeholder there is refused as a program from the request.
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: ["{x}"]'), 4, 'operations[0].command[0]', /program itself/);
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [""]'), 4, 'operations[0].command[0]', /must not be empty/);
  });

  it('a literal {{brace}} in command[0] is fine', () => {
    expect(onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: ["{{odd}}"]')).command).toEqual(['{{odd}}']);
  });

  it('a bad template element names its index', () => {
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "a}b"]'), 4, 'operations[0].command[1]', /stray "}"/);
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "{x-y}"]'), 4, 'operations[0].command[1]', /bad placeholder/);
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo, true]'), 4, 'operations[0].command[1]', /must be a string/);
  });

  it('an undeclared placeholder is refused', () => {
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "--x={x}"]'), 4, 'operations[0].command[1]', /\{x\}, which is not declared/);
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "{x}", "{y}"]', '    args:', '      x: {type: string}'),
      4,
      'operations[0].command[2]',
      /\{y\}, which is not declared/,
    );
  });

  it('an undeclared placeholder named like an Object.prototype member is refused too', () => {
    for (const name of ['toString', 'constructor', 'hasOwnProperty', '__proto__']) {
      expectOneProblem(lines('version: 1', 'operations:', '  - name: a', `    command: [echo, "{${name}}"]`), 4, 'operations[0].command[1]', /not declared/);
    }
  });

  it('a declared argument that the command does not use is refused', () => {
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "{x}"]', '    args:', '      x: {type: string}', '      extra: {type: integer}'),
      7,
      'operations[0].args.extra',
      /declared but not used/,
    );
  });

  it('an array or flag placeholder embedded in a larger element is refused', () => {
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [cat, "--files={files}"]', '    args:', '      files: {type: array, items: {type: string}}'),
      4,
      'operations[0].command[1]',
      /array argument \{files\} must be a whole element/,
    );
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [ls, "x{all}"]', '    args:', '      all: {type: boolean, flag: -a}'),
      4,
      'operations[0].command[1]',
      /flag argument \{all\} must be a whole element/,
    );
    // A boolean without a flag renders as true/false and may be embedded.
    const op = onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [tool, "--color={c}"]', '    args:', '      c: {type: boolean}'));
    expect(op.args.c).toMatchObject({ type: 'boolean', flag: null, required: false });
  });

  it('refuses bad operation names', () => {
    for (const name of ['Test', '1abc', 'a b', '-a', '_a', 'a/b', 'é', 'a'.repeat(65), '""']) {
      expectOneProblem(lines('version: 1', 'operations:', '  - command: [echo]', `    name: ${name}`), 4, 'operations[0].name', /must match/);
    }
    for (const name of ['a', 'npm-test', 'a.b_c-d9', 'a'.repeat(64)]) {
      expect(onlyOp(lines('version: 1', 'operations:', `  - name: ${name}`, '    command: [echo]')).name).toBe(name);
    }
  });

  it('a missing or non-string name is refused', () => {
    expectOneProblem(lines('version: 1', 'operations:', '  - command: [echo]'), 3, 'operations[0].name', /is required/);
    const problems = problemsOf(lines('version: 1', 'operations:', '  - command: [echo]', '    name: 12'));
    expect(problems[0]).toMatchObject({ line: 4, field: 'operations[0].name', message: 'must be a string' });
  });

  it('operation names starting with "dumbwaiter" are reserved (built-ins and the MCP server\'s own tools)', () => {
    for (const name of ['dumbwaiter.cancel', 'dumbwaiter.x', 'dumbwaiter_status', 'dumbwaiter_wait', 'dumbwaiter-x', 'dumbwaiter']) {
      expectOneProblem(lines('version: 1', 'operations:', `  - name: ${name}`, '    command: [echo]'), 3, 'operations[0].name', /reserved for built-in operations and the MCP server's own tools/);
    }
    expect(onlyOp(lines('version: 1', 'operations:', '  - name: my-dumbwaiter', '    command: [echo]')).name).toBe('my-dumbwaiter');
  });

  it('argument names starting with "dumbwaiter_" are reserved for the MCP server\'s inputs (dumbwaiter_intent, dumbwaiter_plan_id)', () => {
    for (const arg of ['dumbwaiter_intent', 'dumbwaiter_plan_id', 'dumbwaiter_x']) {
      const text = lines('version: 1', 'operations:', '  - name: a', `    command: [echo, "{${arg}}"]`, '    args:', `      ${arg}: {type: string}`);
      expectOneProblem(text, 6, `operations[0].args.${arg}`, /"dumbwaiter_" are reserved for the MCP server's own inputs \(dumbwaiter_intent, dumbwaiter_plan_id\)/);
    }
    const op = onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "{intent}", "{dumbwaiterish}"]', '    args:', '      intent: {type: string}', '      dumbwaiterish: {type: string}'));
    expect(Object.keys(op.args)).toEqual(['intent', 'dumbwaiterish']);
  });

  it('a duplicate operation name names the second one', () => {
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '  - name: b', '    command: [echo]', '  - name: a', '    command: [ls]'),
      7,
      'operations[2].name',
      /"a" is defined twice/,
    );
  });

  it('refuses a bad scope or approval', () => {
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    scope: admin'), 5, 'operations[0].scope', /read or write/);
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    approval: sometimes'), 5, 'operations[0].approval', /never or always/);
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    approval: false'), 5, 'operations[0].approval', /never or always/);
  });

  it('refuses a default that does not fit its own type and constraints', () => {
    const cases: [string, string][] = [
      ['{type: string, pattern: "[a-z]*", default: "BAD!"}', 'string pattern'],
      ['{type: string, max_length: 3, default: "abcd"}', 'string max_length'],
      ['{type: string, enum: [a, b], default: c}', 'string enum'],
      ['{type: string, default: 5}', 'string given a number'],
      ['{type: integer, max: 10, default: 11}', 'integer max'],
      ['{type: integer, min: 1, default: 0}', 'integer min'],
      ['{type: integer, default: "5"}', 'integer given a string'],
      ['{type: integer, default: 1.5}', 'integer given a float'],
      ['{type: boolean, default: "yes"}', 'boolean given a string'],
      ['{type: path, default: ""}', 'empty path'],
      ['{type: array, items: {type: string}, max_items: 1, default: [a, b]}', 'array over max_items'],
      ['{type: array, items: {type: integer}, default: [1, x]}', 'array item of the wrong type'],
      ['{type: array, items: {type: string}, default: a}', 'array given a string'],
    ];
    for (const [spec, why] of cases) {
      const text = lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "{x}"]', '    args:', `      x: ${spec}`);
      const problems = problemsOf(text);
      expect(problems, why).toHaveLength(1);
      expect(problems[0], why).toMatchObject({ line: 6, field: 'operations[0].args.x.default' });
      expect(problems[0]!.message, why).toMatch(/does not fit/);
    }
  });

  it('refuses a required argument with a default', () => {
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "{x}"]', '    args:', '      x: {type: string, required: true, default: a}'),
      6,
      'operations[0].args.x.default',
      /required argument cannot have a default/,
    );
  });

  it('a bare ~ as cwd (YAML null) gets a helpful message', () => {
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    cwd: ~'), 5, 'operations[0].cwd', /bare ~ means nothing.*"~" with quotes/);
  });

  it('a relative cwd is refused', () => {
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    cwd: code/app'), 5, 'operations[0].cwd', /absolute path or start with ~\//);
  });

  it('refuses DUMBWAITER_REQUEST_ID in env, and bad env names', () => {
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    env:', '      DUMBWAITER_REQUEST_ID: x'),
      6,
      'operations[0].env.DUMBWAITER_REQUEST_ID',
      /set by Dumbwaiter/,
    );
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    env: {"1X": a}'), 5, 'operations[0].env.1X', /not a valid environment variable name/);
    expectOneProblem(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    env: {X: [a]}'), 5, 'operations[0].env.X', /must be a string/);
  });

  it("refuses the run marker in env: the host sets it, to find the run's leftovers", () => {
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    env:', '      DUMBWAITER_RUN_MARKER: x'),
      6,
      'operations[0].env.DUMBWAITER_RUN_MARKER',
      /set by Dumbwaiter/,
    );
  });

  it('leaves_processes is false unless the operation says true, and must be a boolean', () => {
    const base = ['version: 1', 'operations:', '  - name: a', '    command: [echo]'];
    expect(onlyOp(lines(...base)).leaves_processes).toBe(false);
    expect(onlyOp(lines(...base, '    leaves_processes: true')).leaves_processes).toBe(true);
    expectOneProblem(lines(...base, '    leaves_processes: "yes"'), 5, 'operations[0].leaves_processes', /true or false/);
  });

  it('refuses limits out of range, naming the field', () => {
    const base = ['version: 1', 'operations:', '  - name: a', '    command: [echo]'];
    expectOneProblem(lines(...base, '    timeout_s: 0'), 5, 'operations[0].timeout_s', /whole number/);
    expectOneProblem(lines(...base, '    timeout_s: 1.5'), 5, 'operations[0].timeout_s', /whole number/);
    expectOneProblem(lines(...base, '    max_output_bytes: 100'), 5, 'operations[0].max_output_bytes', /whole number/);
    expectOneProblem(lines(...base, '    concurrency: 65'), 5, 'operations[0].concurrency', /whole number/);
    expectOneProblem(lines(...base, '    cost: -1'), 5, 'operations[0].cost', /whole number/);
    expectOneProblem(lines(...base, '    cost: "1"'), 5, 'operations[0].cost', /whole number/);
  });

  it('refuses bad argument types and argument names', () => {
    const base = ['version: 1', 'operations:', '  - name: a', '    command: [echo, "{x}"]', '    args:'];
    expectOneProblem(lines(...base, '      x: {type: str}'), 6, 'operations[0].args.x.type', /must be one of string, integer, boolean, path, array/);
    expectOneProblem(lines(...base, '      x: string'), 6, 'operations[0].args.x', /must be a mapping/);
    expectOneProblem(lines(...base, '      x: {type: string, pattern: "["}'), 6, 'operations[0].args.x.pattern', /not a regular expression in RE2 syntax/);
    expectOneProblem(lines(...base, '      x: {type: string, enum: []}'), 6, 'operations[0].args.x.enum', /non-empty list of strings/);
    expectOneProblem(lines(...base, '      x: {type: integer, min: 5, max: 1}'), 6, 'operations[0].args.x.max', /not be less than min/);
    expectOneProblem(lines(...base, '      x: {type: array, items: {type: array, items: {type: string}}}'), 6, 'operations[0].args.x.items.type', /arrays of arrays/);
    expectOneProblem(lines(...base, '      x: {type: array, items: {type: boolean, flag: -v}}'), 6, 'operations[0].args.x.items.flag', /flags are not allowed in arrays/);
    expectOneProblem(lines(...base, '      x: {type: array}'), 6, 'operations[0].args.x.items', /type of each item/);
    expectOneProblem(lines(...base, '      x: {type: path, within: [relative/dir]}'), 6, 'operations[0].args.x.within[0]', /absolute path/);
    expectOneProblem(lines(...base, '      x: {type: path, within: []}'), 6, 'operations[0].args.x.within', /non-empty list of folders/);
  });

  it('a type named like an Object.prototype member is an AllowlistError, not a crash', () => {
    const base = ['version: 1', 'operations:', '  - name: a', '    command: [echo, "{x}"]', '    args:'];
    expectOneProblem(lines(...base, '      x: {type: constructor}'), 6, 'operations[0].args.x.type', /must be one of/);
    expectOneProblem(lines(...base, '      x: {type: toString}'), 6, 'operations[0].args.x.type', /must be one of/);
    expectOneProblem(lines(...base, '      x: {type: array, items: {type: constructor}}'), 6, 'operations[0].args.x.items.type', /must be one of/);
  });

  it('refuses a bad argument name, __proto__ included', () => {
    const problems = problemsOf(lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "{x}"]', '    args:', '      x: {type: string}', '      bad-name: {type: string}'));
    expect(problems.find((p) => p.field === 'operations[0].args.bad-name')).toMatchObject({ line: 7, message: expect.stringMatching(/argument names must match/) });
    const proto = problemsOf(lines('version: 1', 'operations:', '  - name: a', '    command: [echo, "{__proto__}"]', '    args:', '      __proto__: {type: string}'));
    expect(proto.some((p) => p.field === 'operations[0].args.__proto__'), JSON.stringify(proto)).toBe(true);
  });

  it('refuses a missing or wrong version and a file that is not a mapping', () => {
    expectOneProblem(lines('operations: []'), 1, 'version', /must be 1/);
    expectOneProblem(lines('version: 2', 'operations: []'), 1, 'version', /must be 1/);
    expect(problemsOf('- a\n- b\n')[0]).toMatchObject({ field: '', message: expect.stringMatching(/must be a mapping/) });
    expectOneProblem(lines('version: 1', 'operations: {a: 1}'), 2, 'operations', /must be a list/);
    expectOneProblem(lines('version: 1', 'operations:', '  - echo'), 3, 'operations[0]', /must be a mapping/);
  });

  it('reports every problem at once, each on its own line', () => {
    const text = lines(
      'version: 1',
      'operations:',
      '  - name: Bad',
      '    command: [echo, "{y}"]',
      '    scope: admin',
      '  - name: ok',
      '    command: [echo]',
      '    timeout_s: -3',
    );
    const problems = problemsOf(text);
    expect(problems.map((p) => [p.line, p.field])).toEqual([
      [3, 'operations[0].name'],
      [4, 'operations[0].command[1]'],
      [5, 'operations[0].scope'],
      [8, 'operations[1].timeout_s'],
    ]);
  });
});

describe('parseAllowlist defaults', () => {
  it('fills in the documented defaults', () => {
    const op = onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [echo, hi]'));
    expect(op).toMatchObject({
      name: 'a',
      description: '',
      command: ['echo', 'hi'],
      cwd: DEFAULT_CWD,
      env: {},
      args: {},
      scope: 'write',
      approval: 'always',
      timeout_s: 600,
      max_output_bytes: 1048576,
      concurrency: 1,
      cost: 0,
      reconcile: null,
    });
  });

  it('approval defaults to always for write and never for read; an explicit value wins', () => {
    const op = (extra: string[]) => onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', ...extra));
    expect(op(['    scope: write']).approval).toBe('always');
    expect(op(['    scope: read']).approval).toBe('never');
    expect(op(['    scope: read', '    approval: always']).approval).toBe('always');
    expect(op(['    scope: write', '    approval: never']).approval).toBe('never');
  });

  it('keeps explicit limits', () => {
    const op = onlyOp(
      lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    timeout_s: 5', '    max_output_bytes: 2048', '    concurrency: 3', '    cost: 7'),
    );
    expect(op).toMatchObject({ timeout_s: 5, max_output_bytes: 2048, concurrency: 3, cost: 7 });
  });

  it('expands ~ and ~/x in cwd and in within', () => {
    expect(onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    cwd: ~/x')).cwd).toBe(path.join(os.homedir(), 'x'));
    expect(onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    cwd: "~"')).cwd).toBe(os.homedir());
    const op = onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [ls, "{d}"]', '    cwd: /srv', '    args:', '      d: {type: path, within: ["~", ~/code, /opt]}'));
    expect(op.args.d).toMatchObject({ type: 'path', within: [os.homedir(), path.join(os.homedir(), 'code'), '/opt'], must_exist: true });
  });

  it('a path argument without within is rooted at the cwd', () => {
    const op = onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [ls, "{d}"]', '    cwd: /srv/app', '    args:', '      d: {type: path, must_exist: false}'));
    expect(op.args.d).toMatchObject({ within: ['/srv/app'], must_exist: false });
  });

  it('env values become strings', () => {
    const op = onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    env: {CI: 1, DEBUG: true, NAME: x}'));
    expect(op.env).toEqual({ CI: '1', DEBUG: 'true', NAME: 'x' });
  });

  it('argument defaults: required unless a default or required: false; booleans optional', () => {
    const op = onlyOp(
      lines(
        'version: 1',
        'operations:',
        '  - name: a',
        '    command: [p, "{s}", "{d}", "{o}", "{b}"]',
        '    args:',
        '      s: {type: string}',
        '      d: {type: string, default: ""}',
        '      o: {type: string, required: false}',
        '      b: {type: boolean, flag: --b}',
      ),
    );
    expect(op.args.s).toMatchObject({ required: true, default: undefined, max_length: 4096, allow_dash: false, pattern: null, enum: null });
    expect(op.args.d).toMatchObject({ required: false, default: '' });
    expect(op.args.o).toMatchObject({ required: false, default: undefined });
    expect(op.args.b).toMatchObject({ required: false, flag: '--b' });
  });

  it('an empty operations list is a valid allowlist', () => {
    expect(parseAllowlist('version: 1\noperations: []\n').operations.size).toBe(0);
    expect(parseAllowlist('version: 1\noperations:\n').operations.size).toBe(0);
  });

  it('parses the form given in the protocol (section 7)', () => {
    const op = onlyOp(
      lines(
        'version: 1',
        'operations:',
        '  - name: test                      # ^[a-z][a-z0-9._-]{0,63}$, not starting with "dumbwaiter."',
        '    description: Run the unit tests of the app',
        '    command: [npm, test, "--", "--grep={filter}"]   # argv template',
        '    cwd: ~/code/app',
        '    env: {CI: "1"}',
        '    args:',
        '      filter: {type: string, pattern: "^[A-Za-z0-9 _./-]*$", max_length: 200, default: ""}',
        '    scope: read                     # read | write',
        '    approval: never                 # never | always (default: always for write, never for read)',
        '    timeout_s: 600',
        '    max_output_bytes: 1048576',
        '    concurrency: 1                  # at most this many runs of this operation at once',
        '    cost: 0                         # spend units charged per run (see spend ceilings)',
      ),
    );
    expect(op).toMatchObject({
      name: 'test',
      description: 'Run the unit tests of the app',
      command: ['npm', 'test', '--', '--grep={filter}'],
      template: [[{ lit: 'npm' }], [{ lit: 'test' }], [{ lit: '--' }], [{ lit: '--grep=' }, { arg: 'filter' }]],
      cwd: path.join(os.homedir(), 'code', 'app'),
      env: { CI: '1' },
      scope: 'read',
      approval: 'never',
    });
    expect(op.args.filter).toMatchObject({ type: 'string', max_length: 200, default: '', required: false });
  });
});

describe('reconcile', () => {
  const release = ['version: 1', 'operations:', '  - name: release', '    command: [/usr/bin/gh, release, create, "v{version}"]', '    args:', '      version: {type: string, pattern: "[0-9.]+"}'];

  it('is accepted with the op\'s args and {request_id} as placeholders, its timeout 30 s unless it says', () => {
    const op = onlyOp(lines(...release, '    reconcile:', '      command: [/usr/bin/gh, release, view, "v{version}", "--notes={request_id}"]'));
    expect(op.reconcile).toMatchObject({ command: ['/usr/bin/gh', 'release', 'view', 'v{version}', '--notes={request_id}'], timeout_s: 30 });
    expect(op.reconcile!.template).toHaveLength(5);
    expect(onlyOp(lines(...release, '    reconcile: {command: [/usr/bin/gh, release, view, "v{version}"], timeout_s: 3600}')).reconcile!.timeout_s).toBe(3600);
    // Empty in YAML (`reconcile:`) is none, as for args and env.
    expect(onlyOp(lines(...release, '    reconcile:')).reconcile).toBeNull();
  });

  it('an unknown placeholder is refused with its line and element', () => {
    expectOneProblem(lines(...release, '    reconcile:', '      command: [/usr/bin/gh, release, view, "{tag}"]'), 8, 'operations[0].reconcile.command[3]', /\{tag\}, which is neither an argument of the operation nor \{request_id\}/);
    expectOneProblem(lines(...release, '    reconcile:', '      command: [/usr/bin/gh, "{constructor}"]'), 8, 'operations[0].reconcile.command[1]', /neither an argument/);
  });

  it('follows command\'s rules: the program never from a request, a list never a shell string, arrays and flags whole', () => {
    expectOneProblem(lines(...release, '    reconcile:', '      command: ["{version}", x]'), 8, 'operations[0].reconcile.command[0]', /program itself cannot come from a request/);
    expectOneProblem(lines(...release, '    reconcile:', '      command: ["/usr/bin/{request_id}"]'), 8, 'operations[0].reconcile.command[0]', /program itself cannot come from a request/);
    expectOneProblem(lines(...release, '    reconcile:', '      command: ["/usr/bin/gh release view v{version}"]'), 8, 'operations[0].reconcile.command[0]', /program itself cannot come from a request/);
    expectOneProblem(lines(...release, '    reconcile: {command: "gh release view v{version}"}'), 7, 'operations[0].reconcile.command', /never a shell string/);
    expectOneProblem(lines(...release, '    reconcile: {command: []}'), 7, 'operations[0].reconcile.command', /non-empty list/);
    expectOneProblem(lines(...release, '    reconcile: {timeout_s: 5}'), 7, 'operations[0].reconcile.command', /non-empty list/);
    expectOneProblem(lines(...release, '    reconcile: {command: [""]}'), 7, 'operations[0].reconcile.command[0]', /must not be empty/);
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [cat, "{files}"]', '    args:', '      files: {type: array, items: {type: string}}', '    reconcile: {command: [/bin/ls, "--f={files}"]}'),
      7,
      'operations[0].reconcile.command[1]',
      /array argument \{files\} must be a whole element/,
    );
  });

  it('refuses a timeout out of 1..3600, an unknown field and a reconcile that is not a mapping, naming the line', () => {
    for (const t of ['0', '3601', '1.5', '"30"']) {
      expectOneProblem(lines(...release, '    reconcile:', '      command: [/usr/bin/gh, release, view, "v{version}"]', `      timeout_s: ${t}`), 9, 'operations[0].reconcile.timeout_s', /whole number from 1 to 3600/);
    }
    expectOneProblem(lines(...release, '    reconcile:', '      command: [/usr/bin/gh]', '      timeout: 5'), 9, 'operations[0].reconcile.timeout', /unknown field \(expected one of: command, timeout_s\)/);
    expectOneProblem(lines(...release, '    reconcile: [/usr/bin/gh, release, view]'), 7, 'operations[0].reconcile', /must be a mapping/);
  });

  it('an argument named request_id is refused beside a reconcile: {request_id} would mean two things', () => {
    const base = ['version: 1', 'operations:', '  - name: a', '    command: [echo, "{request_id}"]', '    args:', '      request_id: {type: string}'];
    expect(onlyOp(lines(...base)).args.request_id).toBeDefined();
    expectOneProblem(lines(...base, '    reconcile: {command: [/bin/echo, "{request_id}"]}'), 6, 'operations[0].args.request_id', /rename the argument/);
  });

  it('refuses an allow_dash argument that starts an element of reconcile before a "--": the lookup would read it as an option', () => {
    const tag = (arg: string, reconcile: string) =>
      lines('version: 1', 'operations:', '  - name: tag', '    command: [/usr/bin/git, tag, --, "{name}"]', '    args:', `      name: ${arg}`, `    reconcile: {command: ${reconcile}}`);
    const dashed = '{type: string, max_length: 100, allow_dash: true}';
    const refused = /\{name\} of operation "tag" may start with "-" \(allow_dash: true\) and starts this element of reconcile's command, where that program would read it as an option: put a "--" element before it/;
    // The review's operation: name "--output=/tmp/x" is fine for git tag after its "--", not for rev-parse.
    expectOneProblem(tag(dashed, '[/usr/bin/git, rev-parse, "{name}", "{request_id}"]'), 7, 'operations[0].reconcile.command[2]', refused);
    // Before any literal text, it still starts the element; an array's items alike.
    expectOneProblem(tag(dashed, '[/usr/bin/git, rev-parse, "{name}^{{commit}}"]'), 7, 'operations[0].reconcile.command[2]', refused);
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: tag', '    command: [/usr/bin/git, tag, --, "{names}"]', '    args:', '      names: {type: array, items: {type: string, allow_dash: true}}', '    reconcile: {command: [/usr/bin/git, rev-parse, "{names}"]}'),
      7,
      'operations[0].reconcile.command[2]',
      /\{names\} of operation "tag" may start with "-"/,
    );
    // A "--" after it does not help; one before it does, as does literal text in front or no allow_dash.
    expectOneProblem(tag(dashed, '[/usr/bin/git, rev-parse, "{name}", --]'), 7, 'operations[0].reconcile.command[2]', refused);
    expect(onlyOp(tag(dashed, '[/usr/bin/git, rev-parse, --verify, --, "{name}"]')).reconcile!.command).toEqual(['/usr/bin/git', 'rev-parse', '--verify', '--', '{name}']);
    expect(onlyOp(tag(dashed, '[/usr/bin/git, rev-parse, "refs/tags/{name}"]')).reconcile).not.toBeNull();
    expect(onlyOp(tag('{type: string, max_length: 100}', '[/usr/bin/git, rev-parse, "{name}"]')).reconcile).not.toBeNull();
  });

  it('refuses a negative integer that starts an element of reconcile before a "--" (the issue\'s ledger: grep reads "-3" as an option and says "not applied")', () => {
    const ledger = (delta: string, reconcile: string) =>
      lines('version: 1', 'operations:', '  - name: apply', '    command: [./apply.sh, --, "{delta}"]', '    args:', `      delta: ${delta}`, `    reconcile: {command: ${reconcile}}`);
    const refused = /^\{delta\} of operation "apply" may start with "-" \(a negative integer: its min is -100\) and starts this element of reconcile's command, where that program would read it as an option: put a "--" element before it \(if the program takes one\), or set its min to 0 or more$/;
    expectOneProblem(ledger('{type: integer, min: -100}', '[grep, -qx, "{delta}", ledger]'), 7, 'operations[0].reconcile.command[2]', refused);
    // Before literal text too; an array's items alike.
    expectOneProblem(ledger('{type: integer, min: -100}', '[grep, -qx, "{delta}.0", ledger]'), 7, 'operations[0].reconcile.command[2]', refused);
    expectOneProblem(
      ledger('{type: array, items: {type: integer, min: -5}}', '[grep, -qx, "{delta}", ledger]'),
      7,
      'operations[0].reconcile.command[2]',
      /\{delta\} of operation "apply" may start with "-" \(a negative integer: its min is -5\)/,
    );
    // After a "--", behind literal text, or an integer never negative there (no min: a request's "-3" is bad_args), it may.
    expect(onlyOp(ledger('{type: integer, min: -100}', '[grep, -qx, --, "{delta}", ledger]')).reconcile).not.toBeNull();
    expect(onlyOp(ledger('{type: integer, min: -100}', '[grep, -qx, "delta={delta}", ledger]')).reconcile).not.toBeNull();
    for (const delta of ['{type: integer}', '{type: integer, min: 0}']) {
      const op = onlyOp(ledger(delta, '[grep, -qx, "{delta}", ledger]'));
      expect(validateArgs(op, { delta: -3 })).toMatchObject({ ok: false, message: expect.stringMatching(/must not be negative here|must be at least 0/) });
    }
  });

  it('an argument only reconcile uses is still refused as unused by command', () => {
    expectOneProblem(
      lines('version: 1', 'operations:', '  - name: a', '    command: [echo]', '    args:', '      x: {type: string}', '    reconcile: {command: [/bin/echo, "{x}"]}'),
      6,
      'operations[0].args.x',
      /declared but not used in command/,
    );
  });
});

describe('EXAMPLE_ALLOWLIST', () => {
  it('parses, with its two operations, on a default install (its roots contain neither the default spool nor the home)', () => {
    const list = parseAllowlist(EXAMPLE_ALLOWLIST, 'allowlist.yaml', { spools: [{ name: 'default', dir: defaultSpoolDir() }], home: defaultHomeDir() });
    expect([...list.operations.keys()]).toEqual(['echo', 'list-documents']);
    expect(list.operations.get('echo')).toMatchObject({ command: ['echo', '{msg}'], scope: 'read', approval: 'never', timeout_s: 10, max_output_bytes: 65536 });
    const docs = path.join(os.homedir(), 'Documents');
    expect(list.operations.get('list-documents')).toMatchObject({ cwd: docs, args: { dir: { type: 'path', within: [docs], must_exist: true, default: '.', shared_with_sandbox: false } } });
  });

  /** The example with its commented-out operations (all after the project's tests) uncommented. */
  function uncommented(): string {
    const [head, tail] = EXAMPLE_ALLOWLIST.split(/^ {2}# A project's tests.*\n/m);
    expect(tail).toBeDefined();
    return head + tail!.replace(/^ {2}# /gm, '  ');
  }

  it('its commented-out operation parses once uncommented', () => {
    const list = parseAllowlist(uncommented());
    expect(list.operations.get('test')).toMatchObject({ scope: 'read', concurrency: 1, cost: 1, cwd: path.join(os.homedir(), 'code', 'app'), spools: ['default'] });
  });

  it('its commented agent task loads uncommented, its budget an integer capped by its max', () => {
    const list = parseAllowlist(uncommented());
    const agent = list.operations.get('agent-task')!;
    expect(agent).toMatchObject({ scope: 'write', approval: 'always', args: { max_turns: { type: 'integer', min: 1, max: 50, default: 10 } } });
    expect(validateArgs(agent, { task: 'fix the build', max_turns: 50 }).ok).toBe(true);
    expect(validateArgs(agent, { task: 'fix the build', max_turns: 51 })).toMatchObject({ ok: false, message: expect.stringMatching(/at most 50/) });
    expect(validateArgs(agent, { task: '--dangerously-skip-permissions' })).toMatchObject({ ok: false, message: expect.stringMatching(/must not start with "-"/) });
  });

  it('its commented reconcile loads uncommented, on a write that needs one', () => {
    const list = parseAllowlist(uncommented());
    expect(list.operations.get('git-tag')).toMatchObject({
      scope: 'write',
      reconcile: { command: ['git', '--no-pager', '-c', 'core.fsmonitor=false', 'rev-parse', '--verify', '--quiet', 'refs/tags/v{version}'], timeout_s: 10 },
    });
  });
});

describe('argsSchema', () => {
  const op = onlyOp(
    lines(
      'version: 1',
      'operations:',
      '  - name: a',
      '    command: [p, "{s}", "{e}", "{n}", "{m}", "{b}", "{f}", "{d}", "{xs}", "{ps}", "{o}"]',
      '    cwd: /srv',
      '    args:',
      '      s: {type: string, pattern: "[a-z]+", max_length: 10, description: A word}',
      '      e: {type: string, enum: [a, b], default: a}',
      '      n: {type: integer, min: 1, max: 5, default: 2}',
      '      m: {type: integer}',
      '      b: {type: boolean, flag: -b}',
      '      f: {type: boolean, default: true}',
      '      d: {type: path, within: [/srv, /opt], must_exist: false}',
      '      xs: {type: array, items: {type: string, max_length: 3}, max_items: 4}',
      '      ps: {type: array, items: {type: path}, default: []}',
      '      o: {type: string, required: false}',
    ),
  );
  const schema = argsSchema(op);

  it('is a closed draft 2020-12 object schema listing the required arguments', () => {
    expect(schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', additionalProperties: false });
    expect(schema.required).toEqual(['s', 'm', 'd', 'xs']);
    expect(Object.keys(schema.properties as object)).toEqual(['s', 'e', 'n', 'm', 'b', 'f', 'd', 'xs', 'ps', 'o']);
  });

  it('describes each type', () => {
    const p = schema.properties as Record<string, unknown>;
    expect(p.s).toEqual({ type: 'string', maxLength: 10, pattern: '^(?:[a-z]+)$', 'x-re2-pattern': '[a-z]+', description: 'A word' });
    expect(p.e).toEqual({ type: 'string', maxLength: 4096, enum: ['a', 'b'], default: 'a' });
    expect(p.n).toEqual({ type: 'integer', minimum: 1, maximum: 5, default: 2 });
    expect(p.m).toEqual({ type: 'integer' });
    expect(p.b).toEqual({ type: 'boolean' });
    expect(p.f).toEqual({ type: 'boolean', default: true });
    expect(p.d).toEqual({ type: 'string', minLength: 1, description: 'A path inside /srv or /opt' });
    expect(p.xs).toEqual({ type: 'array', items: { type: 'string', maxLength: 3 }, maxItems: 4 });
    expect(p.ps).toEqual({ type: 'array', items: { type: 'string', minLength: 1, description: 'A path inside /srv that exists' }, maxItems: 64, default: [] });
    expect(p.o).toEqual({ type: 'string', maxLength: 4096 });
  });

  it('publishes a pattern that accepts exactly what the host accepts', () => {
    const pattern = new RegExp((schema.properties as Record<string, { pattern: string }>).s!.pattern, 'u');
    for (const [v, want] of [['abc', true], ['abc1', false], ['1abc', false], ['', false]] as const) expect(pattern.test(v), v).toBe(want);
  });

  it('publishes only the RE2 source of a pattern a JavaScript engine would read otherwise or not at all', () => {
    const only = onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [p, "{s}"]', '    args:', '      s: {type: string, pattern: "[[:alpha:]]+"}'));
    const s = (argsSchema(only).properties as Record<string, Record<string, unknown>>).s!;
    expect(s['x-re2-pattern']).toBe('[[:alpha:]]+');
    expect(s).not.toHaveProperty('pattern');
    expect(validateArgs(only, { s: 'abc' }).ok).toBe(true);
    expect(validateArgs(only, { s: 'ab1' }).ok).toBe(false);
  });

  it('is an empty closed object for an operation without arguments', () => {
    expect(argsSchema(onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [echo]')))).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {},
      required: [],
      additionalProperties: false,
    });
  });
});

describe('patterns: RE2 syntax, linear time', () => {
  const withPattern = (pattern: string) => lines('version: 1', 'operations:', '  - name: a', '    command: [p, "{s}"]', '    args:', `      s: {type: string, pattern: ${JSON.stringify(pattern)}}`);

  it('refuses what RE2 cannot match in linear time (backreferences, lookaround), naming the line and field', () => {
    for (const p of ['(a+)\\1', '(?=a)a', '(?!b)a', '(?<=a)b']) {
      expectOneProblem(withPattern(p), 6, 'operations[0].args.s.pattern', /not a regular expression in RE2 syntax \(no backreferences or lookaround\)/);
    }
  });

  it('the pattern that froze the daemon loads, and refuses a 30-letter value ending in "!" at once (the test would time out otherwise)', () => {
    const o = onlyOp(withPattern('([A-Za-z0-9]+[ _.-]?)*'));
    const r = validateArgs(o, { s: 'a'.repeat(30) + '!' });
    expect(r).toMatchObject({ ok: false, message: expect.stringContaining('does not match the pattern') });
    expect(validateArgs(o, { s: 'hello world_2.x' }).ok).toBe(true);
  });

  it('matches the whole value, code points included', () => {
    const o = onlyOp(withPattern('[a-z]+|[0-9]+'));
    expect(validateArgs(o, { s: 'abc' }).ok).toBe(true);
    expect(validateArgs(o, { s: '123' }).ok).toBe(true);
    expect(validateArgs(o, { s: 'abc123' }).ok).toBe(false);
    expect(validateArgs(onlyOp(withPattern('.')), { s: '😀' }).ok).toBe(true);
  });

  it('a default must match with the same engine', () => {
    const text = lines('version: 1', 'operations:', '  - name: a', '    command: [p, "{s}"]', '    args:', '      s: {type: string, pattern: "[a-z]+", default: "A1"}');
    expectOneProblem(text, 6, 'operations[0].args.s.default', /does not fit/);
  });
});

describe('spools: the spools that see an operation', () => {
  const withSpools = (field: string) => lines('version: 1', 'operations:', '  - name: a', '    command: [/bin/true]', `    ${field}`);
  const HOME_CTX = { spools: [{ name: 'default', dir: '/nonexistent/dw-spool-a' }, { name: 'ci', dir: '/nonexistent/dw-spool-b' }], home: null };
  const problemsWith = (text: string, ctx: typeof HOME_CTX) => {
    try {
      parseAllowlist(text, 'allowlist.yaml', ctx);
    } catch (e) {
      if (e instanceof AllowlistError) return e.problems;
      throw e;
    }
    return [];
  };

  it('absent means every spool (null); a list is kept as written', () => {
    expect(onlyOp(lines('version: 1', 'operations:', '  - name: a', '    command: [/bin/true]')).spools).toBeNull();
    expect(parseAllowlist(withSpools('spools: [ci, default]'), 'allowlist.yaml', HOME_CTX).operations.get('a')!.spools).toEqual(['ci', 'default']);
  });

  it('a name that is not a spool of the home is refused, naming the spools that exist', () => {
    expect(problemsWith(withSpools('spools: [default, cl]'), HOME_CTX)).toEqual([{ line: 5, field: 'operations[0].spools[1]', message: '"cl" is not a spool of this home (its spools: default, ci)' }]);
  });

  it('without a context (the editor reading the file alone) any well-formed name is accepted', () => {
    expect(onlyOp(withSpools('spools: [cl]')).spools).toEqual(['cl']);
  });

  it('refuses a badly formed name, a name listed twice, an empty list and a value that is not a list', () => {
    expectOneProblem(withSpools('spools: [Dev]'), 5, 'operations[0].spools[0]', /^must be a spool name matching \^\[a-z0-9\]/);
    expectOneProblem(withSpools('spools: [ci, 7]'), 5, 'operations[0].spools[1]', /must be a spool name .*\(got 7\)/);
    expect(problemsWith(withSpools('spools: [ci, ci]'), HOME_CTX)).toEqual([{ line: 5, field: 'operations[0].spools[1]', message: '"ci" is listed twice' }]);
    expectOneProblem(withSpools('spools: []'), 5, 'operations[0].spools', /^must be a non-empty list of spool names \(leave it out for every spool\)/);
    expectOneProblem(withSpools('spools:'), 5, 'operations[0].spools', /^must be a non-empty list/);
    expectOneProblem(withSpools('spools: ci'), 5, 'operations[0].spools', /^must be a non-empty list/);
  });
});
