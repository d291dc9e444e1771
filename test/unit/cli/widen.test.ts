// The command line's choice of what a grant lets vary: --any-args (every argument of the request) or
// --args-match NAME=REGEX, repeatable; anything malformed is a usage error.
import { describe, expect, it } from 'vitest';
import { parseWiden } from '../../../main/cli/widen';
import { UsageError } from '../../../main/cli/args';

const names = () => ['target', 'tag'];
const unused = () => {
  throw new Error('the request is looked up only for --any-args');
};

describe('parseWiden', () => {
  it('widens nothing without either flag', () => {
    expect(parseWiden(false, undefined, unused)).toBeUndefined();
    expect(parseWiden(false, [], unused)).toBeUndefined();
  });

  it('--any-args lets every argument of the request vary', () => {
    expect(parseWiden(true, undefined, names)).toEqual({ target: { any: true }, tag: { any: true } });
  });

  it('--args-match NAME=REGEX, repeated; the pattern may hold "="', () => {
    expect(parseWiden(false, ['target=^canary$', 'tag=^v=[0-9]+$'], unused)).toEqual({ target: { match: '^canary$' }, tag: { match: '^v=[0-9]+$' } });
  });

  it('refuses both flags at once, a malformed pair, and a name given twice', () => {
    expect(() => parseWiden(true, ['target=x'], names)).toThrow(UsageError);
    for (const bad of ['target', '=x', 'target=']) expect(() => parseWiden(false, [bad], unused)).toThrow(/--args-match takes NAME=REGEX/);
    expect(() => parseWiden(false, ['target=a', 'target=b'], unused)).toThrow(/names "target" twice/);
  });
});
