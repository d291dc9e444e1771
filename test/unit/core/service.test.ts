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

describe('spools, as a long-lived service sees them', () => {
  it('sees a spool the command line added, and writes into a moved spool only at its new folder', () => {
    svc = new HostService(host.home); // as the app holds it: no --spool
    expect(svc.listSpools().map((s) => s.name)).toEqual(['default']);
    const other = new HostService(host.home);
    other.addSpool('work', path.join(host.root, 'work'), 'cli:test');
    other.close();
    expect(svc.listSpools().map((s) => s.name)).toEqual(['default', 'work']);
    const key = svc.createKey('w', 'read', null, 'test', 'work');
    svc.sendNotice('to work', 'test', 'work');
    expect(inbox(path.join(host.root, 'work', 'inbox'))).toHaveLength(1);
    // Moved by another process: the next notice goes to the new folder, not through the old pin.
    const moved = path.join(host.root, 'work-moved');
    const mover = new HostService(host.home, 'work');
    mover.useSpool(moved, 'cli:test');
    mover.close();
    svc.sendNotice('to the moved work', 'test', 'work');
    expect(inbox(path.join(moved, 'inbox'))).toHaveLength(1);
    expect(inbox(path.join(host.root, 'work', 'inbox'))).toHaveLength(1);
    expect(key.spool).toBe('work');
  });

  it("removing a spool revokes its keys (their sandbox told), and its name cannot be given to another folder while its requests are in the ledger", () => {
    svc = new HostService(host.home);
    const work = path.join(host.root, 'work');
    svc.addSpool('work', work, 'test');
    const key = svc.createKey('w', 'read', null, 'test', 'work');
    host.ledger((l) => l.plant({ id: 'r-work', spool: 'work', key_id: key.key_id, op: 'echo', args_json: '{}', binding_hash: 'h', mac: 'm', intent: null, created_at: new Date().toISOString(), expires_at: null, state: 'succeeded', plan: null }));
    expect(svc.removeSpool('work', 'test')).toMatchObject({ name: 'work', keys: 1 });
    expect(svc.listKeys('work')[0]!.revoked_at).not.toBeNull();
    const told = inbox(path.join(work, 'inbox')).map((n) => (JSON.parse(readFileSync(path.join(work, 'inbox', n), 'utf8')) as { kind: string }).kind);
    expect(told).toEqual(['key_revoked']);
    // A new sandbox's folder under the old name would get the old one's results written into it.
    expect(svc.spoolAddProblem('work', path.join(host.root, 'work2'))).toBe(
      'a removed spool named "work" still has 1 request in the ledger (they leave it after retention_ledger_days, 90 days): give the new spool another name',
    );
    expect(() => svc.addSpool('work', path.join(host.root, 'work2'), 'test')).toThrow('give the new spool another name');
    expect(svc.spoolAddProblem('lab', path.join(host.root, 'work2'))).toBeNull();
  });

  it('says why a spool cannot be removed before anything changes: unknown, open requests, named by the allowlist', () => {
    svc = new HostService(host.home);
    svc.addSpool('work', path.join(host.root, 'work'), 'test');
    expect(svc.spoolRemoveProblem('nope')).toBe('there is no spool named "nope" (dumbwaiter spools list)');
    host.ledger((l) => l.plant({ id: 'r-open', spool: 'work', key_id: 'k', op: 'echo', args_json: '{}', binding_hash: 'h', mac: 'm', intent: null, created_at: new Date().toISOString(), expires_at: null, state: 'queued', plan: null }));
    expect(svc.spoolRemoveProblem('work')).toMatch(/^spool work has 1 open request .*if its sandbox keeps sending more, revoke its keys first$/);
    expect(() => svc.removeSpool('work', 'test')).toThrow('has 1 open request');
    expect(svc.listSpools().map((s) => s.name)).toEqual(['default', 'work']);
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
