// The allowlist editor's calls: a dry run of a reconcile command, and what the audit log says of it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TestHost } from '../../../helpers/host';
import { Host } from '../../../../main/core/host/host';

let host: TestHost;
let svc: Host;

beforeEach(() => {
  host = new TestHost('version: 1\noperations: []\n');
});

afterEach(async () => {
  svc?.close();
  await host.cleanup();
});

describe('dryRunReconcile', () => {
  it('runs the reconcile command of the text being edited once, and the audit log says so with its verdict', async () => {
    svc = new Host(host.home, host.spool);
    const text = ['version: 1', 'operations:', '  - name: tag', '    command: [/bin/echo, tag]', '    reconcile: {command: [/bin/sh, -c, "exit 1"]}', ''].join('\n');
    const r = await svc.allowlist.dryRunReconcile(text, 'tag', {}, 'app (user)');
    expect(r).toMatchObject({ ok: true, verdict: 'not_applied', run: { exit_code: 1 } });
    const [entry] = svc.audit.search({ kind: 'dry_run' });
    expect(entry).toMatchObject({ op: 'tag', actor: 'app (user)', message: 'app (user) dry-ran the reconcile command of tag: exit code 1 (not_applied)' });
    expect(await svc.allowlist.dryRunReconcile(text, 'tag', { x: 1 }, 'app (user)')).toMatchObject({ ok: false });
    expect(svc.audit.search({ kind: 'dry_run' })).toHaveLength(1);
  });
});
