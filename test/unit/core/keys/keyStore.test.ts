// Keys belong to one spool: made for it, kept across rotation.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TestLedger } from '../../../helpers/ledger';

let l: TestLedger;
beforeEach(() => (l = new TestLedger()));
afterEach(() => l.close());

describe('a key and its spool', () => {
  it('is made for `default` unless told, and for a valid spool name only', () => {
    expect(l.keys.create('a', 'read').spool).toBe('default');
    expect(l.keys.create('b', 'read', null, 'work').spool).toBe('work');
    expect(() => l.keys.create('c', 'read', null, 'Work/..')).toThrow('"Work/.." is not a spool name');
  });

  it('keeps its spool when rotated', () => {
    const old = l.keys.create('agent', 'write', ['build'], 'work');
    const fresh = l.keys.rotate(old.key_id);
    expect(fresh).toMatchObject({ spool: 'work', scope: 'write', ops: ['build'] });
    expect(l.keys.get(old.key_id)).toMatchObject({ spool: 'work', rotated_to: fresh.key_id });
  });
});
