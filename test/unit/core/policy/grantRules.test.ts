// A grant's rule per argument: by default each argument equals the approved card's value; widened,
// any value or a whole-value RE2 pattern. A call is covered only with the same arguments by name, each
// within its rule; a grant made before rules (none stored) covers any arguments.
import { describe, expect, it } from 'vitest';
import { covers, describeRule, grantRules, rulesInBrief } from '../../../../main/core/policy/grantRules';
import { UserError } from '../../../../main/core/errors';

const card = { target: 'canary', path: '/srv/app/build', n: 3, files: ['a.txt', 'b.txt'] };

describe('grantRules', () => {
  it('makes every argument of the card equal its value by default', () => {
    expect(grantRules(card)).toEqual({ target: { equals: 'canary' }, path: { equals: '/srv/app/build' }, n: { equals: 3 }, files: { equals: ['a.txt', 'b.txt'] } });
    expect(grantRules({})).toEqual({});
  });

  it('widens only the arguments named, to any value or to a pattern', () => {
    expect(grantRules(card, { target: { match: '^canary(-[0-9]+)?$' }, n: { any: true } })).toEqual({
      target: { match: '^canary(-[0-9]+)?$' },
      path: { equals: '/srv/app/build' },
      n: { any: true },
      files: { equals: ['a.txt', 'b.txt'] },
    });
  });

  it('refuses an argument the request does not have, and a pattern RE2 cannot compile', () => {
    expect(() => grantRules(card, { force: { any: true } })).toThrow(new UserError('the request has no argument "force" to widen (its arguments: target, path, n, files)'));
    expect(() => grantRules({}, { force: { any: true } })).toThrow(/no argument "force" to widen \(it has none\)/);
    expect(() => grantRules(card, { target: { match: '(?=x)' } })).toThrow(/pattern for argument "target" is not a regular expression in RE2 syntax/);
    expect(() => grantRules(card, { target: { match: '' } })).toThrow(/must be 1 to 1000 characters/);
  });

  it('keeps an argument named __proto__ (a valid name) as an argument', () => {
    const values = JSON.parse('{"__proto__": "v"}') as Record<string, unknown>;
    const rules = JSON.parse(JSON.stringify(grantRules(values)));
    expect(Object.keys(rules)).toEqual(['__proto__']);
    expect(covers(rules, JSON.parse('{"__proto__": "other"}'))).toBe(false);
  });
});

describe('covers', () => {
  const exact = grantRules(card);

  it('covers the same arguments, whatever their key order', () => {
    expect(covers(exact, { files: ['a.txt', 'b.txt'], n: 3, path: '/srv/app/build', target: 'canary' })).toBe(true);
  });

  it('does not cover another value, an argument more or one fewer', () => {
    expect(covers(exact, { ...card, target: 'production' })).toBe(false);
    expect(covers(exact, { ...card, n: 4 })).toBe(false);
    expect(covers(exact, { ...card, n: '3' })).toBe(false);
    expect(covers(exact, { ...card, files: ['a.txt'] })).toBe(false);
    expect(covers(exact, { ...card, force: true })).toBe(false);
    const { n: _n, ...fewer } = card;
    expect(covers(exact, fewer)).toBe(false);
  });

  it('matches a pattern against the whole value, and against each element of a list', () => {
    const rules = grantRules(card, { target: { match: 'canary' }, files: { match: '[a-z]+\\.txt' } });
    expect(covers(rules, card)).toBe(true);
    expect(covers(rules, { ...card, target: 'canary-evil' })).toBe(false);
    expect(covers(rules, { ...card, target: 'xcanary' })).toBe(false);
    expect(covers(rules, { ...card, files: ['c.txt'] })).toBe(true);
    expect(covers(rules, { ...card, files: ['c.txt', '../etc/passwd'] })).toBe(false);
  });

  it('lets an argument widened to any value be anything, but still be there', () => {
    const rules = grantRules(card, { path: { any: true } });
    expect(covers(rules, { ...card, path: '/home/me/important' })).toBe(true);
    const { path: _p, ...without } = card;
    expect(covers(rules, without)).toBe(false);
  });

  it('covers any arguments for a grant made before rules', () => {
    expect(covers(undefined, { anything: 'at all' })).toBe(true);
  });
});

describe('in words', () => {
  it('says each rule, escaping what the sandbox or the person wrote', () => {
    expect(describeRule({ equals: 'canary\u202e' })).toBe('"canary\\u202e" (this value only)');
    expect(describeRule({ any: true })).toBe('any value');
    expect(describeRule({ match: '^canary$' })).toBe('matching /^canary$/ (the whole value; of a list, each element)');
    expect(rulesInBrief({ target: { equals: 'canary' }, n: { any: true }, tag: { match: '^v[0-9]+$' } })).toBe('target: "canary"; n: any; tag: /^v[0-9]+$/');
    expect(rulesInBrief({})).toBe('none');
    expect(rulesInBrief(undefined)).toBe('any (a grant made before grants named their arguments)');
  });
});
