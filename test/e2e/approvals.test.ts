// Human approval with the real daemon: what the approver sees, approve and deny from the command line
// while the daemon runs, timeouts, restarts, time-boxed grants (covering the arguments the person saw,
// or what they widened), and revoked keys.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml, countingCommand } from '../helpers/allowlists';
import type { KeyFile } from '../../shared/protocol/types';

const allowlist = (root: string, word = 'deployed') =>
  allowlistYaml({
    name: 'deploy',
    description: 'Deploy (a write operation: asks a human by default)',
    command: countingCommand(path.join(root, 'runs.txt'), `echo ${word} "$1"`, '{target}'),
    cwd: root,
    env: { DEPLOY_REGION: 'eu-1' },
    args: { target: { type: 'string', enum: ['staging', 'production', 'canary'] } },
    scope: 'write',
    approval: 'always',
  });

let host: TestHost;
let key: KeyFile;

async function setup(settings: Record<string, unknown> = {}): Promise<DaemonProcess> {
  host = new TestHost(NO_OPERATIONS, settings);
  host.writeAllowlist(allowlist(host.work));
  key = host.createKey('agent-one', 'write');
  return host.startDaemon();
}

afterEach(async () => {
  await host.cleanup();
});

function runs(): string[] {
  const f = path.join(host.work, 'runs.txt');
  return existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n') : [];
}

function cliJson(args: string[]): unknown {
  const r = host.cli([...args, '--json']);
  if (r.status !== 0) throw new Error(`dumbwaiter ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe('approval', () => {
  it('waits for a human, shows what would run, and runs once approved from the command line', async () => {
    await setup();
    host.submit(key, 'ap-1', 'deploy', { target: 'staging' }, { intent: 'ship the fix for #42' });
    const waiting = await host.waitResult('ap-1', ['awaiting_approval']);
    expect(waiting.approval).toMatchObject({
      operation: 'deploy',
      argv: ['/bin/sh', '-c', expect.stringContaining('echo deployed'), path.join(host.work, 'runs.txt'), 'staging'],
      cwd: host.work,
      key_id: key.key_id,
      key_name: 'agent-one',
      intent: 'ship the fix for #42',
      ceiling: null,
    });
    expect(Date.parse(waiting.approval!.timeout_at) - Date.parse(waiting.approval!.requested_at)).toBe(3600 * 1000);
    const listed = cliJson(['approvals', 'list']) as { id: string; approval: { intent: string } }[];
    expect(listed.map((p) => p.id)).toEqual(['ap-1']);
    const card = host.cli(['approvals', 'list']).stdout;
    expect(card).toContain('  Why:      "ship the fix for #42" (the agent\'s words)\n');
    expect(card).toContain(`      in folder: ${JSON.stringify(host.work)}\n      environment (added to the host's own): DEPLOY_REGION="eu-1"\n`);
    expect(runs()).toEqual([]);

    const human = host.cli(['approvals', 'approve', 'ap-1']);
    expect(human.status).toBe(0);
    const done = await host.waitResult('ap-1', ['succeeded'], 5000);
    expect(done.stdout).toBe('deployed staging\n');
    expect(done.approval?.decided_by).toMatch(/^cli:/);
    expect(runs()).toEqual(['ap-1']);
    expect(host.audit('ap-1', 'approved')[0]?.actor).toMatch(/^cli:/);
    expect(host.audit('ap-1', 'approval_requested')).toHaveLength(1);
  });

  it('is denied from the command line with a reason, and never runs', async () => {
    await setup();
    host.submit(key, 'ap-2', 'deploy', { target: 'production' });
    await host.waitResult('ap-2', ['awaiting_approval']);
    expect(host.cli(['approvals', 'deny', 'ap-2', '--reason', 'not on a Friday']).status).toBe(0);
    const r = await host.waitResult('ap-2', ['denied'], 5000);
    expect(r.error).toMatchObject({ code: 'denied', message: expect.stringContaining('not on a Friday') });
    // A deploy submitted after the denial and approved runs; deploys run one at a time in claim order,
    // so ap-2, had anything let it run, would have run first.
    host.submit(key, 'ap-2-later', 'deploy', { target: 'staging' });
    await host.waitResult('ap-2-later', ['awaiting_approval']);
    expect(host.cli(['approvals', 'approve', 'ap-2-later']).status).toBe(0);
    await host.waitResult('ap-2-later', ['succeeded']);
    expect(runs()).toEqual(['ap-2-later']);
    expect(host.audit('ap-2', 'denied')[0]?.actor).toMatch(/^cli:/);
    // A decided request cannot be decided again.
    const again = host.cli(['approvals', 'approve', 'ap-2']);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('not awaiting approval');
  });

  it('is denied when nobody decides within the approval timeout', async () => {
    await setup({ approval_timeout_s: 1 });
    host.submit(key, 'ap-3', 'deploy', { target: 'staging' });
    const r = await host.waitResult('ap-3', ['denied'], 10_000);
    expect(r.error?.code).toBe('approval_timeout');
    expect(r.approval?.decided_by).toContain('timeout');
    expect(host.audit('ap-3', 'approval_timeout')[0]?.actor).toBe('daemon');
    expect(runs()).toEqual([]);
  });

  it('survives a SIGKILL: still pending after a restart; one approved while the host was down starts', async () => {
    const d1 = await setup();
    host.submit(key, 'ap-4', 'deploy', { target: 'staging' });
    host.submit(key, 'ap-5', 'deploy', { target: 'production' });
    await host.waitResult('ap-4', ['awaiting_approval']);
    await host.waitResult('ap-5', ['awaiting_approval']);
    await d1.kill9();
    expect(host.cli(['approvals', 'approve', 'ap-5']).status).toBe(0);
    await host.startDaemon();
    // ap-5 ran after the restart: deploys run one at a time in claim order, so ap-4, had the restart let
    // it run, would have run first.
    expect((await host.waitResult('ap-5', ['succeeded'])).stdout).toBe('deployed production\n');
    expect(runs()).toEqual(['ap-5']);
    expect(host.result('ap-4')?.state).toBe('awaiting_approval');
    expect((cliJson(['approvals', 'list']) as { id: string }[]).map((p) => p.id)).toEqual(['ap-4']);
    expect(host.cli(['approvals', 'approve', 'ap-4']).status).toBe(0);
    await host.waitResult('ap-4', ['succeeded']);
    expect(runs().sort()).toEqual(['ap-4', 'ap-5']);
  });

  it('asks again when what would run changed after the approval', async () => {
    await setup();
    host.submit(key, 'ap-6', 'deploy', { target: 'staging' });
    await host.waitResult('ap-6', ['awaiting_approval']);
    expect(host.cli(['pause']).status).toBe(0);
    expect(host.cli(['approvals', 'approve', 'ap-6']).status).toBe(0);
    await host.waitResult('ap-6', ['queued']);
    host.writeAllowlist(allowlist(host.work, 'DESTROYED'));
    await eventually('the allowlist to be reloaded', () => (host.audit('reloaded', 'allowlist_loaded').length > 0 ? true : undefined));
    expect(host.cli(['resume']).status).toBe(0);
    const again = await host.waitResult('ap-6', ['awaiting_approval']);
    expect(again.approval?.argv[2]).toContain('DESTROYED');
    expect(host.audit('ap-6', 'approval_requested').map((a) => a.message).join('\n')).toContain('changed since it was approved');
    expect(runs()).toEqual([]);
  });

  it('approves a key and operation for a while with a grant: used, visible, then expired', async () => {
    await setup();
    host.submit(key, 'gr-1', 'deploy', { target: 'staging' });
    host.submit(key, 'gr-2', 'deploy', { target: 'staging' });
    await host.waitResult('gr-1', ['awaiting_approval']);
    await host.waitResult('gr-2', ['awaiting_approval']);
    const approved = cliJson(['approvals', 'approve', 'gr-1', '--for', '4s']) as { grant: { id: string; expires_at: string }; also_approved: string[] };
    expect(approved.also_approved).toEqual(['gr-2']); // the other card waiting to run exactly what this one showed
    await host.waitResult('gr-1', ['succeeded']);
    await host.waitResult('gr-2', ['succeeded']);
    // Within the time box, the next call with the same arguments runs without asking.
    host.submit(key, 'gr-3', 'deploy', { target: 'staging' });
    const r3 = await host.waitResult('gr-3', ['succeeded']);
    expect(r3.approval).toBeUndefined();
    expect(host.audit('gr-3', 'claimed')[0]?.message).toContain(`grant ${approved.grant.id}`);
    const grants = cliJson(['approvals', 'grants']) as { id: string; uses: number; key_id: string; op: string }[];
    expect(grants).toEqual([expect.objectContaining({ id: approved.grant.id, key_id: key.key_id, op: 'deploy', uses: 2, args: { target: { equals: 'staging' } } })]);
    // After it expires, calls wait for a human again.
    await eventually('the grant to expire', () => (Date.now() > Date.parse(approved.grant.expires_at) + 100 ? true : undefined), 10_000);
    host.submit(key, 'gr-4', 'deploy', { target: 'staging' });
    await host.waitResult('gr-4', ['awaiting_approval']);
    expect(cliJson(['approvals', 'grants'])).toEqual([]);
    expect((cliJson(['approvals', 'grants', '--all']) as unknown[]).length).toBe(1);
  });

  it('a grant covers later calls with the arguments the person saw only: the same operation with others waits for a card', async () => {
    await setup();
    host.submit(key, 'ga-1', 'deploy', { target: 'staging' });
    await host.waitResult('ga-1', ['awaiting_approval']);
    const { grant } = cliJson(['approvals', 'approve', 'ga-1', '--for', '1h']) as { grant: { id: string } };
    await host.waitResult('ga-1', ['succeeded']);
    // The attack: the same key, the same operation, another argument.
    host.submit(key, 'ga-2', 'deploy', { target: 'production' });
    expect((await host.waitResult('ga-2', ['awaiting_approval', 'succeeded'])).state).toBe('awaiting_approval');
    host.submit(key, 'ga-3', 'deploy', { target: 'staging' });
    await host.waitResult('ga-3', ['succeeded']);
    expect(runs()).toEqual(['ga-1', 'ga-3']);
    expect(host.audit('ga-3', 'claimed')[0]?.message).toContain(`grant ${grant.id}`);
    const listed = host.cli(['approvals', 'grants']);
    expect(listed.stdout).toMatch(/ARGUMENTS\n.*target: "staging"\n$/);
  });

  it('with --args-match, a later call runs when the argument matches the pattern and waits when not; a widen the request cannot take is refused', async () => {
    await setup();
    host.submit(key, 'gm-1', 'deploy', { target: 'staging' });
    await host.waitResult('gm-1', ['awaiting_approval']);
    const refused = host.cli(['approvals', 'approve', 'gm-1', '--for', '1h', '--args-match', 'region=^eu$']);
    expect([refused.status, refused.stderr]).toEqual([1, expect.stringContaining('the request has no argument "region" to widen (its arguments: target)')]);
    const noTimeBox = host.cli(['approvals', 'approve', 'gm-1', '--args-match', 'target=^canary$']);
    expect([noTimeBox.status, noTimeBox.stderr]).toEqual([1, expect.stringContaining('only a time-boxed approval (--for)')]);
    expect(host.result('gm-1')?.state).toBe('awaiting_approval');
    const approved = host.cli(['approvals', 'approve', 'gm-1', '--for', '1h', '--args-match', 'target=^canary$']);
    expect(approved.stdout).toContain('  target: matching /^canary$/ (the whole value; of a list, each element)\n  and there is no other argument.');
    await host.waitResult('gm-1', ['succeeded']);
    host.submit(key, 'gm-2', 'deploy', { target: 'production' });
    expect((await host.waitResult('gm-2', ['awaiting_approval', 'succeeded'])).state).toBe('awaiting_approval');
    host.submit(key, 'gm-3', 'deploy', { target: 'canary' });
    expect((await host.waitResult('gm-3', ['awaiting_approval', 'succeeded'])).state).toBe('succeeded');
    expect(runs()).toEqual(['gm-1', 'gm-3']);
    expect(cliJson(['approvals', 'grants'])).toEqual([expect.objectContaining({ args: { target: { match: '^canary$' } }, uses: 1 })]);
  });

  it('with --any-args, later calls of the operation run whatever their arguments', async () => {
    await setup();
    host.submit(key, 'gy-1', 'deploy', { target: 'staging' });
    await host.waitResult('gy-1', ['awaiting_approval']);
    expect(cliJson(['approvals', 'approve', 'gy-1', '--for', '1h', '--any-args'])).toMatchObject({ grant: { args: { target: { any: true } } } });
    host.submit(key, 'gy-2', 'deploy', { target: 'production' });
    expect((await host.waitResult('gy-2', ['awaiting_approval', 'succeeded'])).state).toBe('succeeded');
  });

  it('approving one card for a while leaves another waiting card with other arguments waiting', async () => {
    await setup();
    host.submit(key, 'tc-1', 'deploy', { target: 'staging' });
    host.submit(key, 'tc-2', 'deploy', { target: 'production' });
    await host.waitResult('tc-1', ['awaiting_approval']);
    await host.waitResult('tc-2', ['awaiting_approval']);
    const approved = cliJson(['approvals', 'approve', 'tc-1', '--for', '1h']) as { also_approved: string[] };
    expect(approved.also_approved).toEqual([]);
    await host.waitResult('tc-1', ['succeeded']);
    expect((cliJson(['approvals', 'list']) as { id: string }[]).map((p) => p.id)).toEqual(['tc-2']);
    expect(host.result('tc-2')?.state).toBe('awaiting_approval');
    expect(runs()).toEqual(['tc-1']);
  });

  it('a revoked grant stops approving at once', async () => {
    await setup();
    host.submit(key, 'rg-1', 'deploy', { target: 'staging' });
    await host.waitResult('rg-1', ['awaiting_approval']);
    const { grant } = cliJson(['approvals', 'approve', 'rg-1', '--for', '1h']) as { grant: { id: string } };
    expect(host.cli(['approvals', 'revoke-grant', grant.id]).status).toBe(0);
    host.submit(key, 'rg-2', 'deploy', { target: 'staging' });
    await host.waitResult('rg-2', ['awaiting_approval']);
    expect(host.audit('', 'grant_revoked')[0]?.actor).toMatch(/^cli:/);
  });

  it("rejects a revoked key's waiting and queued requests and tells the sandbox", async () => {
    await setup();
    host.submit(key, 'rv-1', 'deploy', { target: 'staging' });
    await host.waitResult('rv-1', ['awaiting_approval']);
    expect(host.cli(['keys', 'revoke', key.key_id]).status).toBe(0);
    const r = await host.waitResult('rv-1', ['rejected']);
    expect(r.error?.code).toBe('revoked_key');
    const msg = host.inbox().find((m) => m.kind === 'key_revoked');
    expect(msg).toMatchObject({ kind: 'key_revoked', ref: key.key_id });
    host.submit(key, 'rv-2', 'deploy', { target: 'staging' });
    expect((await host.waitResult('rv-2')).error?.code).toBe('revoked_key');
  });
});
