// Keys belong to one spool: made for it, kept across rotation. A key's secret is what the host signs
// its results with, also once the key is revoked, and only where this process can open it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeyStore, type SecretSealer } from '../../../../main/core/keys/keyStore';
import { decodeSecret } from '../../../../shared/protocol/sign';
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

/** A keychain stand-in: the secret reversed, marked with the keychain's name. */
const keychain = (format: string): SecretSealer => ({
  format,
  seal: (secret) => [...secret].reverse().join(''),
  open: (sealed) => [...sealed].reverse().join(''),
});

describe('a key\'s secret', () => {
  it('comes with the key, and signs its results also once it is revoked', () => {
    const made = l.keys.create('agent', 'write');
    expect(l.keys.get(made.key_id)).toEqual({ ...made, secret: made.secret });
    l.keys.revoke(made.key_id);
    expect(l.keys.get(made.key_id)).toMatchObject({ secret: made.secret, revoked_at: expect.any(String) });
    expect(l.keys.signer(made.key_id)).toEqual({ keyId: made.key_id, secret: decodeSecret(made.secret!) });
  });

  it('is nobody\'s to sign with for an unknown key', () => {
    expect(l.keys.get('k_nosuchkey')).toBeNull();
    expect(l.keys.signer('k_nosuchkey')).toBeNull();
  });

  it('is opened with the keychain that sealed it, and with no other', () => {
    const sealed = new KeyStore(l.db, keychain('chain-a'));
    const made = sealed.create('agent', 'read');
    expect(sealed.signer(made.key_id)).toEqual({ keyId: made.key_id, secret: decodeSecret(made.secret!) });
    const other = new KeyStore(l.db, keychain('chain-b'));
    expect(other.get(made.key_id)).toMatchObject({ key_id: made.key_id, secret: null });
    expect(other.signer(made.key_id)).toBeNull();
    expect(l.keys.signer(made.key_id)).toBeNull(); // no keychain at all
  });
});
