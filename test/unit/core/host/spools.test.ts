// The home's spools, as a long-lived Host (the app's) sees them while the command line adds, moves
// and removes them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost } from '../../../helpers/host';
import { Host } from '../../../../main/core/host/host';

let host: TestHost;
/** The app's host, made by each test (closed after it). */
let svc: Host;

beforeEach(() => void (host = new TestHost('version: 1\noperations: []\n')));
afterEach(async () => {
  svc?.close();
  await host.cleanup();
});

/** The messages in a spool's inbox folder (not a write in progress). */
const inbox = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));

describe('spools, as a long-lived service sees them', () => {
  it('sees a spool the command line added, and writes into a moved spool only at its new folder', () => {
    svc = new Host(host.home); // as the app holds it: no --spool
    expect(svc.spools.list().map((s) => s.name)).toEqual(['default']);
    const other = new Host(host.home);
    other.spools.add('work', path.join(host.root, 'work'), 'cli:test');
    other.close();
    expect(svc.spools.list().map((s) => s.name)).toEqual(['default', 'work']);
    const key = svc.keys.create('w', 'read', null, 'test', 'work');
    svc.inbox.send('to work', 'test', 'work');
    expect(inbox(path.join(host.root, 'work', 'inbox'))).toHaveLength(1);
    // Moved by another process: the next notice goes to the new folder, not through the old pin.
    const moved = path.join(host.root, 'work-moved');
    const mover = new Host(host.home, 'work');
    mover.spools.use(moved, 'cli:test');
    mover.close();
    svc.inbox.send('to the moved work', 'test', 'work');
    expect(inbox(path.join(moved, 'inbox'))).toHaveLength(1);
    expect(inbox(path.join(host.root, 'work', 'inbox'))).toHaveLength(1);
    expect(key.spool).toBe('work');
  });

  it("removing a spool revokes its keys (their sandbox told), and its name cannot be given to another folder while its requests are in the ledger", () => {
    svc = new Host(host.home);
    const work = path.join(host.root, 'work');
    svc.spools.add('work', work, 'test');
    const key = svc.keys.create('w', 'read', null, 'test', 'work');
    host.ledger((l) => l.plant({ id: 'r-work', spool: 'work', key_id: key.key_id, op: 'echo', args_json: '{}', binding_hash: 'h', mac: 'm', intent: null, created_at: new Date().toISOString(), expires_at: null, state: 'succeeded', plan: null }));
    expect(svc.spools.remove('work', 'test')).toMatchObject({ name: 'work', keys: 1 });
    expect(svc.keys.list('work')[0]!.revoked_at).not.toBeNull();
    const told = inbox(path.join(work, 'inbox')).map((n) => (JSON.parse(readFileSync(path.join(work, 'inbox', n), 'utf8')) as { kind: string }).kind);
    expect(told).toEqual(['key_revoked']);
    // A new sandbox's folder under the old name would get the old one's results written into it.
    expect(svc.spools.addProblem('work', path.join(host.root, 'work2'))).toBe(
      'a removed spool named "work" still has 1 request in the ledger (they leave it after retention_ledger_days, 90 days): give the new spool another name',
    );
    expect(() => svc.spools.add('work', path.join(host.root, 'work2'), 'test')).toThrow('give the new spool another name');
    expect(svc.spools.addProblem('lab', path.join(host.root, 'work2'))).toBeNull();
  });

  it('says why a spool cannot be removed before anything changes: unknown, open requests, named by the allowlist', () => {
    svc = new Host(host.home);
    svc.spools.add('work', path.join(host.root, 'work'), 'test');
    expect(svc.spools.removeProblem('nope')).toBe('there is no spool named "nope" (dumbwaiter spools list)');
    host.ledger((l) => l.plant({ id: 'r-open', spool: 'work', key_id: 'k', op: 'echo', args_json: '{}', binding_hash: 'h', mac: 'm', intent: null, created_at: new Date().toISOString(), expires_at: null, state: 'queued', plan: null }));
    expect(svc.spools.removeProblem('work')).toMatch(/^spool work has 1 open request .*if its sandbox keeps sending more, revoke its keys first$/);
    expect(() => svc.spools.remove('work', 'test')).toThrow('has 1 open request');
    expect(svc.spools.list().map((s) => s.name)).toEqual(['default', 'work']);
  });
});
