// Grants on a real ledger: each stores its rule per argument, and a call is covered only by an active
// grant of its key and operation whose rules its arguments meet. A grant made before rules (a row with
// none) covers any arguments until it expires.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TestLedger } from '../../../helpers/ledger';

let l: TestLedger;
beforeEach(() => {
  l = new TestLedger();
});
afterEach(() => l.close());

describe('Grants', () => {
  it('stores the rules and gives them back from get and list', () => {
    const g = l.grants.create('k_a', 'deploy', { target: { equals: 'staging' }, tag: { match: '^v[0-9]+$' } }, 600, 'app');
    expect(g.args).toEqual({ target: { equals: 'staging' }, tag: { match: '^v[0-9]+$' } });
    expect(l.grants.get(g.id)).toEqual(g);
    expect(l.grants.list()).toEqual([g]);
    expect(l.grants.list()[0]).not.toHaveProperty('args_json');
  });

  it("covers only a call of its key and operation whose arguments meet every rule, and no argument more", () => {
    const g = l.grants.create('k_a', 'deploy', { target: { equals: 'staging' } }, 600, 'app');
    expect(l.grants.active('k_a', 'deploy', { target: 'staging' })?.id).toBe(g.id);
    expect(l.grants.active('k_a', 'deploy', { target: 'production' })).toBeNull();
    expect(l.grants.active('k_a', 'deploy', { target: 'staging', force: true })).toBeNull();
    expect(l.grants.active('k_a', 'deploy', {})).toBeNull();
    expect(l.grants.active('k_b', 'deploy', { target: 'staging' })).toBeNull();
    expect(l.grants.active('k_a', 'backup', { target: 'staging' })).toBeNull();
  });

  it('finds, of several grants, one that covers the call', () => {
    const staging = l.grants.create('k_a', 'deploy', { target: { equals: 'staging' } }, 3600, 'app');
    const canary = l.grants.create('k_a', 'deploy', { target: { match: '^canary$' } }, 600, 'app');
    expect(l.grants.active('k_a', 'deploy', { target: 'staging' })?.id).toBe(staging.id);
    expect(l.grants.active('k_a', 'deploy', { target: 'canary' })?.id).toBe(canary.id);
    expect(l.grants.active('k_a', 'deploy', { target: 'production' })).toBeNull();
  });

  it('covers nothing once expired or revoked', () => {
    const now = new Date();
    const g = l.grants.create('k_a', 'deploy', { target: { any: true } }, 60, 'app', now);
    expect(l.grants.active('k_a', 'deploy', { target: 'x' }, new Date(now.getTime() + 60_000))).toBeNull();
    expect(l.grants.revoke(g.id, 'app')).toBe(true);
    expect(l.grants.active('k_a', 'deploy', { target: 'x' })).toBeNull();
  });

  it('lets a grant made before rules (none stored) cover any arguments until it expires', () => {
    const until = new Date(Date.now() + 600_000).toISOString();
    l.db.prepare("INSERT INTO grants (id, key_id, op, created_at, expires_at, created_by) VALUES ('g_old', 'k_a', 'deploy', ?, ?, 'app')").run(new Date().toISOString(), until);
    expect(l.grants.get('g_old')).not.toHaveProperty('args');
    expect(l.grants.active('k_a', 'deploy', { target: 'anything', more: [1, 2] })?.id).toBe('g_old');
    expect(l.grants.active('k_a', 'deploy', {}, new Date(Date.parse(until)))).toBeNull();
  });
});
