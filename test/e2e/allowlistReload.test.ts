// The allowlist is reloaded while the daemon runs; an invalid edit keeps the last good version,
// says so in the log and the audit log, and survives a restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { eventually, runningHost, type DaemonProcess, type TestHost } from '../helpers/host';
import type { CatalogDoc, KeyFile } from '../../shared/protocol/types';

const op = (name: string) => `
  - name: ${name}
    command: [echo, "${name}", "{word}"]
    args:
      word: {type: string, pattern: "[a-z]+"}
    scope: read
    approval: never
`;
const V1 = `version: 1\noperations:${op('greet')}`;
const V2 = `version: 1\n# a comment the user wrote\noperations:${op('greet')}${op('wave')}`;
const BROKEN = `version: 1
operations:
  - name: greet
    command: [echo, "{word}"]
    args:
      word: {type: string, max_length: -5}
`;

/** The ledger: grep would read a negative delta as an option, exit 1, and say "not applied". */
const STEERABLE_RECONCILE = `version: 1
operations:
  - name: apply
    command: [echo, --, "{delta}"]
    args:
      delta: {type: integer, min: -100}
    scope: read
    approval: never
    reconcile: {command: [grep, -qx, "{delta}", ledger]}
`;

let host: TestHost;
let key: KeyFile;
let daemon: DaemonProcess;

const catalog = (): CatalogDoc => JSON.parse(readFileSync(path.join(host.spool, 'catalog.json'), 'utf8')) as CatalogDoc;
const opNames = () => catalog().operations.map((o) => o.name);

beforeAll(async () => {
  ({ host, key, daemon } = await runningHost(V1, { name: 'reload', scope: 'read' }));
});

afterAll(async () => {
  await host.cleanup();
});

describe('allowlist reload', () => {
  it('picks up a valid edit and rewrites catalog.json', async () => {
    expect(opNames()).toEqual(['greet']);
    host.writeAllowlist(V2);
    await eventually('the new operation in catalog.json', () => (opNames().includes('wave') ? true : undefined));
    host.submit(key, 'rl-1', 'wave', { word: 'hello' });
    expect((await host.waitResult('rl-1')).stdout).toBe('wave hello\n');
    expect(host.audit('reloaded', 'allowlist_loaded').length).toBeGreaterThanOrEqual(1);
  });

  it('keeps the last good allowlist when an edit is invalid, and says where the problem is', async () => {
    const before = catalog();
    host.writeAllowlist(BROKEN);
    const entry = await eventually('an allowlist_invalid audit entry', () => host.audit('', 'allowlist_invalid')[0]);
    expect(entry.message).toContain('line 6');
    expect(entry.message).toContain('operations[0].args.word.max_length');
    expect(entry.message).toContain('keeping the last good allowlist (2 operations)');
    await eventually('the log line', () => (daemon.stderr.includes('keeping the last good allowlist') ? true : undefined));
    // The old operations still work, and the catalog still offers them.
    host.submit(key, 'rl-2', 'wave', { word: 'still' });
    expect((await host.waitResult('rl-2')).state).toBe('succeeded');
    expect(catalog().operations).toEqual(before.operations);
    // status on the command line shows the file is invalid.
    const st = JSON.parse(host.cli(['status', '--json']).stdout);
    expect(st.allowlist.ok).toBe(false);
  });

  it('still uses the last good allowlist after a restart with the invalid file', async () => {
    await daemon.stop();
    daemon = await host.startDaemon();
    expect(daemon.stderr).toContain('using the last good allowlist');
    host.submit(key, 'rl-3', 'wave', { word: 'again' });
    expect((await host.waitResult('rl-3')).state).toBe('succeeded');
  });

  it('recovers when the file is fixed', async () => {
    host.writeAllowlist(V1);
    await eventually('wave to disappear', () => (opNames().includes('wave') ? undefined : true));
    host.submit(key, 'rl-4', 'wave', { word: 'gone' });
    expect((await host.waitResult('rl-4')).error?.code).toBe('unknown_op');
  });

  it('refuses a reconcile a negative integer could steer (it keeps the last good version), and status names the operation, the element and the argument', async () => {
    host.writeAllowlist(STEERABLE_RECONCILE);
    const why = '{delta} of operation "apply" may start with "-" (a negative integer: its min is -100)';
    const entry = await eventually('the steerable reconcile refused', () => host.audit('', 'allowlist_invalid').find((e) => e.message.includes(why)));
    expect(entry.message).toContain('line 9: operations[0].reconcile.command[2]');
    expect(entry.message).toContain('keeping the last good allowlist (1 operations)');
    expect(opNames()).toEqual(['greet']);
    host.submit(key, 'rl-5', 'apply', { delta: -3 });
    expect((await host.waitResult('rl-5')).error?.code).toBe('unknown_op');
    host.submit(key, 'rl-6', 'greet', { word: 'still' });
    expect((await host.waitResult('rl-6')).stdout).toBe('greet still\n');
    const st = JSON.parse(host.cli(['status', '--json']).stdout) as { allowlist: { ok: boolean; error: string } };
    expect(st.allowlist.ok).toBe(false);
    expect(st.allowlist.error).toContain(why);
  });
});

interface AllowlistReport {
  ok: boolean;
  operations: string[];
  error: string | null;
  serving: string | null;
  since: string | null;
}
const allowlistStatus = () => (JSON.parse(host.cli(['status', '--json']).stdout) as { allowlist: AllowlistReport }).allowlist;

describe('an allowlist written in place, or refused', () => {
  it('reads a file truncated, then written in two steps with a pause between, once it is whole: never reported invalid, and the new version served', async () => {
    host.writeAllowlist(V1);
    await eventually('V1 served', () => (opNames().join() === 'greet' ? true : undefined));
    const invalidBefore = host.audit('', 'allowlist_invalid').length;
    const waitsBefore = daemon.stderr.split('being written in place').length;
    const fd = openSync(path.join(host.home, 'allowlist.yaml'), 'w'); // truncated, as `cat >` or an editor does
    const cut = V2.indexOf('command: [echo, "wave"'); // `wave` without its command: invalid half-written
    writeSync(fd, V2.slice(0, cut)); // the daemon sees it (before, it refused it)
    await eventually('the daemon to see the file change', () =>
      daemon.stderr.split('being written in place').length > waitsBefore || host.audit('', 'allowlist_invalid').length > invalidBefore ? true : undefined,
    );
    writeSync(fd, V2.slice(cut));
    closeSync(fd);
    await eventually('the new operation in catalog.json', () => (opNames().includes('wave') ? true : undefined));
    expect(host.audit('', 'allowlist_invalid')).toHaveLength(invalidBefore);
    expect(allowlistStatus()).toMatchObject({ ok: true, serving: 'file', operations: ['greet', 'wave'] });
  });

  it('says, for a file really invalid, that the daemon serves the last good version and since when, and picks up the fix', async () => {
    host.writeAllowlist(V2);
    await eventually('V2 served', () => (allowlistStatus().operations.join() === 'greet,wave' && allowlistStatus().ok ? true : undefined));
    const { since } = allowlistStatus();
    expect(since).toMatch(/^\d{4}-\d\d-\d\dT/);
    const invalidBefore = host.audit('', 'allowlist_invalid').length;
    host.writeAllowlist(BROKEN);
    await eventually('the file refused', () => (host.audit('', 'allowlist_invalid').length > invalidBefore ? true : undefined));
    expect(allowlistStatus()).toMatchObject({ ok: false, serving: 'last_good', since, operations: ['greet', 'wave'], error: expect.stringContaining('line 6') });
    const text = host.cli(['status']).stdout;
    expect(text).toContain('Allowlist: INVALID: ');
    expect(text).toContain('operations[0].args.word.max_length');
    expect(text).toContain(`Serving the last good version, from ${since}: 2 operations (greet, wave), until the file is fixed`);
    host.writeAllowlist(V1);
    await eventually('the fix served', () => (allowlistStatus().ok ? true : undefined));
    const fixed = allowlistStatus();
    expect(fixed).toMatchObject({ serving: 'file', operations: ['greet'], error: null });
    expect(Date.parse(fixed.since!)).toBeGreaterThan(Date.parse(since!));
    expect(host.cli(['status']).stdout).toContain(`Allowlist: ok, 1 operations (greet), served since ${fixed.since}`);
  });
});
