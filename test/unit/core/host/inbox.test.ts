// Notices to a sandbox, through a long-lived Host as the app holds it: while the spool is broken, fixed
// and has its folders replaced from outside.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { TestHost } from '../../../helpers/host';
import { Host } from '../../../../main/core/host/host';

let host: TestHost;
let svc: Host;

beforeEach(() => {
  host = new TestHost('version: 1\noperations: []\n');
  host.createKey('sandbox'); // a notice is written for each active key
});

afterEach(async () => {
  svc?.close();
  await host.cleanup();
});

const inbox = (dir = path.join(host.spool, 'inbox')) => readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));

describe('notices', () => {
  it('are refused with a reason when no active key could read them', () => {
    svc = new Host(host.home, host.spool);
    svc.keys.revoke(svc.keys.list()[0]!.key_id, 'test');
    expect(() => svc.inbox.send('hello', 'test')).toThrow(/no active key/);
    const kinds = inbox().map((n) => (JSON.parse(readFileSync(path.join(host.spool, 'inbox', n), 'utf8')) as { kind: string }).kind);
    expect(kinds).toEqual(['key_revoked']);
  });
});

describe('a long-lived service and its spool', () => {
  it('writes into a spool that was unsafe when the service started, once it is fixed', () => {
    chmodSync(host.spool, 0o777);
    svc = new Host(host.home, host.spool);
    expect(() => svc.inbox.send('hello', 'test')).toThrow(/not reachable or not safe/);
    chmodSync(host.spool, 0o700);
    svc.inbox.send('hello', 'test');
    expect(inbox()).toHaveLength(1);
  });

  it('follows a folder replaced from outside: writes go to the folder the name leads to now, never through the old pin', () => {
    svc = new Host(host.home, host.spool);
    svc.inbox.send('before', 'test');
    const old = path.join(host.root, 'old-inbox');
    renameSync(path.join(host.spool, 'inbox'), old);
    mkdirSync(path.join(host.spool, 'inbox'), { mode: 0o700 });
    svc.inbox.send('after', 'test');
    expect(inbox()).toHaveLength(1);
    expect(inbox(old)).toHaveLength(1);
  });

  it('writes nothing while a folder is replaced by something unsafe, and again once it is safe', () => {
    svc = new Host(host.home, host.spool);
    renameSync(path.join(host.spool, 'inbox'), path.join(host.root, 'aside'));
    mkdirSync(path.join(host.spool, 'inbox'));
    chmodSync(path.join(host.spool, 'inbox'), 0o777);
    expect(() => svc.inbox.send('while unsafe', 'test')).toThrow(/not reachable or not safe/);
    chmodSync(path.join(host.spool, 'inbox'), 0o700);
    svc.inbox.send('safe again', 'test');
    expect(inbox()).toHaveLength(1);
  });
});
