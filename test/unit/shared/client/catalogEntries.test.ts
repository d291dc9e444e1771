import { describe, expect, it } from 'vitest';
import { checkedOperations, opsLines } from '../../../../shared/client/catalogEntries';
import type { CatalogOperation } from '../../../../shared/protocol/types';
import { utcText } from '../../../../shared/client/approvalWait';
import { visible, visibleJson } from '../../../../shared/text/visible';
import { dwPy } from '../../../helpers/clientCases';

const GOOD = { name: 'echo', description: 'Print it', scope: 'read', approval: 'never', timeout_s: 30, args_schema: { type: 'object', properties: { msg: { type: 'string' } }, required: ['msg'] } };

/** catalog.json's entries as anyone who can write the spool may leave them, and what each client keeps. */
const ENTRIES: unknown[] = [
  GOOD,
  42,
  null,
  { ...GOOD, name: 'Bad Name\u001b[2J' },
  { ...GOOD, name: 'no-text', description: { x: 1 } },
  { ...GOOD, name: 'no-scope', scope: 'admin' },
  { ...GOOD, name: 'no-approval', approval: 'maybe' },
  { ...GOOD, name: 'no-timeout', timeout_s: '30' },
  { ...GOOD, name: 'no-schema', args_schema: [] },
  { ...GOOD, name: 'bad-props', args_schema: { type: 'object', properties: { msg: 'string' } } },
  { ...GOOD, name: 'bad-required', args_schema: { type: 'object', required: 'msg' } },
  { ...GOOD, name: 'bad-reconcile', reconcile: 'yes' },
  { ...GOOD, description: 'a second echo' },
  { ...GOOD, name: 'deploy', scope: 'write', approval: 'always', reconcile: true, args_schema: { type: 'object' } },
];

describe('catalog.json entries', () => {
  it('keeps the well-formed ones, the first of each name, and says why each other one was left out', () => {
    const { operations, skipped } = checkedOperations(ENTRIES);
    expect(operations.map((o) => o.name)).toEqual(['echo', 'deploy']);
    expect(skipped).toEqual([
      'catalog.json: operation 2 is left out: not an object',
      'catalog.json: operation 3 is left out: not an object',
      'catalog.json: operation 4 "Bad Name\\x1b[2J" is left out: its name is not an operation name',
      'catalog.json: operation 5 "no-text" is left out: its description is not text',
      'catalog.json: operation 6 "no-scope" is left out: its scope is neither read nor write',
      'catalog.json: operation 7 "no-approval" is left out: its approval is neither never nor always',
      'catalog.json: operation 8 "no-timeout" is left out: its timeout_s is not a number of seconds',
      'catalog.json: operation 9 "no-schema" is left out: its args_schema is not an object schema',
      'catalog.json: operation 10 "bad-props" is left out: its args_schema\'s properties are not schemas',
      'catalog.json: operation 11 "bad-required" is left out: its args_schema\'s required is not a list of names',
      'catalog.json: operation 12 "bad-reconcile" is left out: its reconcile is not true',
      'catalog.json: operation 13 "echo" is left out: an operation of that name came before it',
    ]);
  });
});

const TEXTS = ['plain text, C:\\path', 'osc 8 \u001b]8;;https://x\u0007link\u001b]8;;\u0007', 'osc 52 \u001b]52;c;aGk=\u0007', 'up \u001b[2A\u001b[2K', 'bidi \u202egpj.exe\u2066', 'c1 \u009b2J del \u007f', 'lines\nand\r\ttabs\u2028\u2029', 'tag \u{e0041} zwj a\u200db soft\u00ad', 'lone \ud800 surrogate'];
const TIMES = ['2026-12-05T02:00:00+01:00', '2026-12-05T01:00:00.000Z', '2026-12-04T20:30:00-04:30', 'not a time', 7];

describe('dw.py shows what dw.cjs shows', () => {
  it('escapes the same characters the same way, on a line and in JSON', () => {
    const json = TEXTS.map((t) => JSON.stringify({ t }, null, 2));
    const py = dwPy([...TEXTS.map((t) => ['visible', t]), ...json.map((j) => ['visible_json', j])]).map((r) => r.ok);
    expect(py).toEqual([...TEXTS.map(visible), ...json.map(visibleJson)]);
  });

  it('keeps and leaves out the same catalog entries, saying the same', () => {
    expect(dwPy([['catalog', ENTRIES]])[0]!.ok).toEqual(checkedOperations(ENTRIES));
  });

  it('gives a time in UTC whatever offset it was written with', () => {
    expect(TIMES.map(utcText)).toEqual(['2026-12-05 01:00:00 UTC', '2026-12-05 01:00:00 UTC', '2026-12-05 01:00:00 UTC', null, null]);
    expect(dwPy(TIMES.map((t) => ['utc', t])).map((r) => r.ok ?? null)).toEqual(TIMES.map(utcText));
  });
});

/** Operations as dw ops lists them: every kind of argument, a description that would act on a terminal. */
const LISTED: CatalogOperation[] = [
  { ...(GOOD as CatalogOperation), description: 'Print it\u001b[2J' },
  {
    name: 'test',
    description: 'Run the tests',
    scope: 'write',
    approval: 'always',
    timeout_s: 1.5,
    args_schema: {
      type: 'object',
      required: ['level'],
      properties: {
        level: { type: 'string', enum: ['unit', 'e2e'], description: 'which tests' },
        workers: { type: 'integer', minimum: 1, maximum: 8, default: 4 },
        files: { type: 'array', items: { type: 'string', pattern: '^[a-z./]+$' }, maxItems: 10 },
        name: { type: 'string', maxLength: 40 },
        ratio: { type: 'number', minimum: 0.5 },
        tags: { type: 'array', items: {} },
        any: {},
      },
    },
  },
  { name: 'noargs', description: '', scope: 'read', approval: 'never', timeout_s: 30, args_schema: { type: 'object' } },
];

describe('dw ops', () => {
  it('lists each operation on one line, its arguments under it, its text escaped, and the built-in ones', () => {
    expect(opsLines(LISTED)).toEqual([
      'echo  [read, timeout 30 s]  Print it\\x1b[2J',
      '    msg: string (required)',
      'test  [write, asks a human, timeout 1.5 s]  Run the tests',
      '    level: string (one of "unit"|"e2e", required) - which tests',
      '    workers: integer (>= 1, <= 8, default 4)',
      '    files: list of string (at most 10 items, optional)',
      '    name: string (at most 40 chars, optional)',
      '    ratio: number (>= 0.5, optional)',
      '    tags: list of values (optional)',
      '    any: value (optional)',
      'noargs  [read, timeout 30 s]  ',
      'Built in: dumbwaiter.ping, dumbwaiter.cancel (dw cancel ID), dumbwaiter.plan (dw plan FILE)',
    ]);
    expect(opsLines([])).toEqual(['This host offers no operations (yet): its allowlist is empty.']);
  });

  it('dw.py lists them in the same lines', () => {
    expect(dwPy([['ops_lines', LISTED], ['ops_lines', []]]).map((r) => r.ok)).toEqual([opsLines(LISTED), opsLines([])]);
  });
});
