// The service API as the app holds it: one HostService for the app's lifetime, while the spool is
// broken, fixed and has its folders replaced from outside.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { TestHost } from '../../helpers/host';
import { HostService } from '../../../main/core/service';

let host: TestHost;
let svc: HostService;

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
    svc = new HostService(host.home, host.spool);
    svc.revokeKey(svc.listKeys()[0]!.key_id, 'test');
    expect(() => svc.sendNotice('hello', 'test')).toThrow(/no active key/);
    const kinds = inbox().map((n) => (JSON.parse(readFileSync(path.join(host.spool, 'inbox', n), 'utf8')) as { kind: string }).kind);
    expect(kinds).toEqual(['key_revoked']);
  });
});

describe('a long-lived service and its spool', () => {
  it('writes into a spool that was unsafe when the service started, once it is fixed', () => {
    chmodSync(host.spool, 0o777);
    svc = new HostService(host.home, host.spool);
    expect(() => svc.sendNotice('hello', 'test')).toThrow(/not reachable or not safe/);
    chmodSync(host.spool, 0o700);
    svc.sendNotice('hello', 'test');
    expect(inbox()).toHaveLength(1);
  });

  it('follows a folder replaced from outside: writes go to the folder the name leads to now, never through the old pin', () => {
    svc = new HostService(host.home, host.spool);
    svc.sendNotice('before', 'test');
    const old = path.join(host.root, 'old-inbox');
    renameSync(path.join(host.spool, 'inbox'), old);
    mkdirSync(path.join(host.spool, 'inbox'), { mode: 0o700 });
    svc.sendNotice('after', 'test');
    expect(inbox()).toHaveLength(1);
    expect(inbox(old)).toHaveLength(1);
  });

  it('writes nothing while a folder is replaced by something unsafe, and again once it is safe', () => {
    svc = new HostService(host.home, host.spool);
    renameSync(path.join(host.spool, 'inbox'), path.join(host.root, 'aside'));
    mkdirSync(path.join(host.spool, 'inbox'));
    chmodSync(path.join(host.spool, 'inbox'), 0o777);
    expect(() => svc.sendNotice('while unsafe', 'test')).toThrow(/not reachable or not safe/);
    chmodSync(path.join(host.spool, 'inbox'), 0o700);
    svc.sendNotice('safe again', 'test');
    expect(inbox()).toHaveLength(1);
  });
});

describe('dryRunReconcile', () => {
  it('runs the reconcile command of the text being edited once, and the audit log says so with its verdict', async () => {
    svc = new HostService(host.home, host.spool);
    const text = ['version: 1', 'operations:', '  - name: tag', '    command: [/bin/echo, tag]', '    reconcile: {command: [/bin/sh, -c, "exit 1"]}', ''].join('\n');
    const r = await svc.dryRunReconcile(text, 'tag', {}, 'app (user)');
    expect(r).toMatchObject({ ok: true, verdict: 'not_applied', run: { exit_code: 1 } });
    const [entry] = svc.searchAudit({ kind: 'dry_run' });
    expect(entry).toMatchObject({ op: 'tag', actor: 'app (user)', message: 'app (user) dry-ran the reconcile command of tag: exit code 1 (not_applied)' });
    expect(await svc.dryRunReconcile(text, 'tag', { x: 1 }, 'app (user)')).toMatchObject({ ok: false });
    expect(svc.searchAudit({ kind: 'dry_run' })).toHaveLength(1);
  });
});
