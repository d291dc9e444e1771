// argv templates: parsing of one element, and rendering where every value stays inside its own element.
import { describe, expect, it } from 'vitest';
import { parseElement, placeholders, render, wholeArg } from '../../../../main/core/allowlist/template';
import type { ArgSpec, ScalarArg, TemplateElement } from '../../../../main/core/allowlist/types';

const common = { description: '', required: false, default: undefined };
const str = (): ArgSpec => ({ type: 'string', pattern: null, patternSource: null, max_length: 4096, enum: null, allow_dash: false, ...common });
const int = (): ArgSpec => ({ type: 'integer', min: null, max: null, ...common });
const bool = (flag: string | null): ArgSpec => ({ type: 'boolean', flag, ...common });
const arr = (items: ScalarArg): ArgSpec => ({ type: 'array', items, max_items: 64, ...common });
const strItem: ScalarArg = { type: 'string', pattern: null, patternSource: null, max_length: 4096, enum: null, allow_dash: false };

const tpl = (...els: string[]): TemplateElement[] => els.map(parseElement);

// Values that a shell, a glob or a naive split would turn into something else.
const NASTY = [
  'two words',
  '  leading and trailing  ',
  "it's",
  '"double"',
  '; rm -rf ~',
  '$(whoami)',
  '`id`',
  '${HOME}',
  'a && b || c',
  'x | cat > /tmp/out',
  'line1\nline2',
  'tab\there',
  'cr\r\nlf',
  '*',
  '*.ts',
  '?[a-z]{1,2}',
  '~',
  '~/x',
  '\\',
  "'; DROP TABLE x; --",
  '{other}',
  '{{',
  '}}',
  '%s%n',
  'ünïcödé ✓ 😀',
  '',
  ' ',
  '\n',
];

describe('parseElement', () => {
  it('parses plain text as one literal', () => {
    expect(parseElement('plain')).toEqual([{ lit: 'plain' }]);
    expect(parseElement('--flag=value with spaces')).toEqual([{ lit: '--flag=value with spaces' }]);
  });

  it('keeps an empty element as one empty literal', () => {
    expect(parseElement('')).toEqual([{ lit: '' }]);
  });

  it('parses a whole-element placeholder', () => {
    expect(parseElement('{x}')).toEqual([{ arg: 'x' }]);
    expect(parseElement('{_A1}')).toEqual([{ arg: '_A1' }]);
  });

  it('parses placeholders inside a larger element, in order', () => {
    expect(parseElement('--grep={filter}')).toEqual([{ lit: '--grep=' }, { arg: 'filter' }]);
    expect(parseElement('{a}.txt')).toEqual([{ arg: 'a' }, { lit: '.txt' }]);
    expect(parseElement('{a}-{b}')).toEqual([{ arg: 'a' }, { lit: '-' }, { arg: 'b' }]);
    expect(parseElement('{a}{b}')).toEqual([{ arg: 'a' }, { arg: 'b' }]);
    expect(parseElement('pre{a}mid{a}post')).toEqual([{ lit: 'pre' }, { arg: 'a' }, { lit: 'mid' }, { arg: 'a' }, { lit: 'post' }]);
  });

  it('reads {{ and }} as literal braces', () => {
    expect(parseElement('{{')).toEqual([{ lit: '{' }]);
    expect(parseElement('}}')).toEqual([{ lit: '}' }]);
    expect(parseElement('{{x}}')).toEqual([{ lit: '{x}' }]);
    expect(parseElement('a{{b}}c')).toEqual([{ lit: 'a{b}c' }]);
    expect(parseElement('{{{x}}}')).toEqual([{ lit: '{' }, { arg: 'x' }, { lit: '}' }]);
    expect(parseElement('--format={{.Name}}')).toEqual([{ lit: '--format={.Name}' }]);
    expect(parseElement('{{{{')).toEqual([{ lit: '{{' }]);
  });

  it('throws on a stray brace', () => {
    for (const t of ['{', '}', 'a{', 'a}', '}a', 'a}b', '{x}}', 'x}}}', '{x', 'a {x b', '{{{']) {
      expect(() => parseElement(t), t).toThrow(/brace|placeholder/);
    }
  });

  it('throws on a bad placeholder name', () => {
    for (const t of ['{}', '{1x}', '{x-y}', '{x y}', '{ x }', '{x.y}', '{a{b}', '{é}', '{$x}', `{${'a'.repeat(65)}}`]) {
      expect(() => parseElement(t), t).toThrow(/bad placeholder/);
    }
    expect(parseElement(`{${'a'.repeat(64)}}`)).toEqual([{ arg: 'a'.repeat(64) }]);
  });

  it('names the position and the element in its error', () => {
    expect(() => parseElement('ab}c')).toThrow('stray "}" at character 3 of "ab}c"');
    expect(() => parseElement('ab{-}')).toThrow('bad placeholder at character 3 of "ab{-}"');
  });
});

describe('wholeArg and placeholders', () => {
  it('wholeArg is the name only when the element is exactly one placeholder', () => {
    expect(wholeArg(parseElement('{x}'))).toBe('x');
    expect(wholeArg(parseElement('-{x}'))).toBeNull();
    expect(wholeArg(parseElement('{x}{y}'))).toBeNull();
    expect(wholeArg(parseElement('{{x}}'))).toBeNull();
    expect(wholeArg(parseElement('x'))).toBeNull();
  });

  it('placeholders lists every placeholder of an element', () => {
    expect(placeholders(parseElement('{a}-{b}-{a}'))).toEqual(['a', 'b', 'a']);
    expect(placeholders(parseElement('{{a}}'))).toEqual([]);
  });
});

describe('render', () => {
  it('keeps literal elements as they are, in order', () => {
    expect(render(tpl('git', 'log', '--oneline', '{{literal}}'), {}, {}).argv).toEqual(['git', 'log', '--oneline', '{literal}']);
  });

  it.each(NASTY.map((v) => [JSON.stringify(v), v] as const))('a whole-element value %s stays exactly one element', (_label, v) => {
    const argv = render(tpl('prog', '--', '{x}', 'end'), { x: str() }, { x: v }).argv;
    expect(argv).toEqual(['prog', '--', v, 'end']);
  });

  it.each(NASTY.map((v) => [JSON.stringify(v), v] as const))('an embedded value %s stays inside its element', (_label, v) => {
    const argv = render(tpl('npm', 'test', '--', '--grep={filter}'), { filter: str() }, { filter: v }).argv;
    expect(argv).toEqual(['npm', 'test', '--', `--grep=${v}`]);
  });

  it('does not expand placeholders found inside a value', () => {
    const argv = render(tpl('p', '{a}', '{b}'), { a: str(), b: str() }, { a: '{b}', b: '{a}' }).argv;
    expect(argv).toEqual(['p', '{b}', '{a}']);
  });

  it('fills several placeholders of one element, and the same placeholder twice', () => {
    const specs = { host: str(), port: int() };
    expect(render(tpl('ssh', '{host}:{port}', '--id={host}-{host}'), specs, { host: 'a b', port: 22 }).argv).toEqual(['ssh', 'a b:22', '--id=a b-a b']);
  });

  it('renders integers as decimal text, whole or embedded', () => {
    expect(render(tpl('head', '-n', '{n}', '--n={n}'), { n: int() }, { n: -42 }).argv).toEqual(['head', '-n', '-42', '--n=-42']);
  });

  it('a present empty string is an empty element, not a dropped one', () => {
    expect(render(tpl('p', '{x}', 'end'), { x: str() }, { x: '' }).argv).toEqual(['p', '', 'end']);
  });

  it('expands an array to one element per item, in place', () => {
    const specs = { files: arr(strItem) };
    expect(render(tpl('cat', '--', '{files}', 'end'), specs, { files: ['a.ts', 'b c.ts', '; rm -rf ~', ''] }).argv).toEqual([
      'cat',
      '--',
      'a.ts',
      'b c.ts',
      '; rm -rf ~',
      '',
      'end',
    ]);
  });

  it('expands an empty array to no element at all', () => {
    expect(render(tpl('cat', '--', '{files}', 'end'), { files: arr(strItem) }, { files: [] }).argv).toEqual(['cat', '--', 'end']);
  });

  it('renders array items that are integers as text', () => {
    const specs = { ns: arr({ type: 'integer', min: null, max: null }) };
    expect(render(tpl('p', '{ns}'), specs, { ns: [1, 20, 300] }).argv).toEqual(['p', '1', '20', '300']);
  });

  it('a boolean flag becomes the flag when true and is dropped when false or absent', () => {
    const t = tpl('ls', '{all}', '{long}', 'dir');
    const specs = { all: bool('-a'), long: bool('--format=long') };
    expect(render(t, specs, { all: true, long: true }).argv).toEqual(['ls', '-a', '--format=long', 'dir']);
    expect(render(t, specs, { all: false, long: true }).argv).toEqual(['ls', '--format=long', 'dir']);
    expect(render(t, specs, { all: true, long: false }).argv).toEqual(['ls', '-a', 'dir']);
    expect(render(t, specs, {}).argv).toEqual(['ls', 'dir']);
  });

  it('a boolean without a flag renders as true or false', () => {
    const specs = { b: bool(null) };
    expect(render(tpl('p', '{b}', '--b={b}'), specs, { b: true }).argv).toEqual(['p', 'true', '--b=true']);
    expect(render(tpl('p', '{b}', '--b={b}'), specs, { b: false }).argv).toEqual(['p', 'false', '--b=false']);
  });

  it('drops the whole element of an absent optional argument', () => {
    const t = tpl('git', 'log', '{rev}', '--', '{path}');
    const specs = { rev: str(), path: str() };
    expect(render(t, specs, {}).argv).toEqual(['git', 'log', '--']);
    expect(render(t, specs, { path: 'src' }).argv).toEqual(['git', 'log', '--', 'src']);
  });

  it('an absent optional argument inside a larger element becomes the empty string', () => {
    const t = tpl('npm', 'test', '--grep={filter}', '{a}:{b}');
    const specs = { filter: str(), a: str(), b: str() };
    expect(render(t, specs, {}).argv).toEqual(['npm', 'test', '--grep=', ':']);
    expect(render(t, specs, { b: 'x' }).argv).toEqual(['npm', 'test', '--grep=', ':x']);
  });

  it('an absent optional argument whose name is also an Object.prototype member is still absent', () => {
    const t = tpl('p', '{constructor}', '--x={toString}', '{valueOf}', 'end');
    const specs = { constructor: str(), toString: str(), valueOf: bool('--v') };
    expect(render(t, specs, {}).argv).toEqual(['p', '--x=', 'end']);
    expect(render(t, specs, { constructor: 'c', toString: 't', valueOf: true }).argv).toEqual(['p', 'c', '--x=t', '--v', 'end']);
  });

  it('never lets the number of elements depend on the content of a string value', () => {
    const t = tpl('prog', '{a}', '--opt={b}', '{c}x{a}', 'lit');
    const specs = { a: str(), b: str(), c: str() };
    const lengths = new Set<number>();
    for (const a of NASTY) {
      for (const b of NASTY) {
        const c = b + a;
        const argv = render(t, specs, { a, b, c }).argv;
        lengths.add(argv.length);
        expect(argv[1]).toBe(a);
        expect(argv[2]).toBe(`--opt=${b}`);
        expect(argv[3]).toBe(`${c}x${a}`);
      }
    }
    expect([...lengths]).toEqual([5]);
  });
});
