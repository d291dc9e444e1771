// Pause and resume with the real daemon: while paused, requests are claimed and recorded but nothing
// starts; host.json and `status` say so; the pause is kept in the ledger, so it survives a restart;
// both decisions are in the audit log with who made them.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { allowlistYaml, countingCommand } from '../helpers/allowlists';
import type { HostStatusDoc, KeyFile } from '../../shared/protocol/types';

const ACTOR = `cli:${os.userInfo().username}`;

let host: TestHost;
let key: KeyFile;
let counter: string;

function makeHost(): void {
  host = new TestHost();
  counter = path.join(host.root, 'runs.txt');
  host.writeAllowlist(allowlistYaml({ name: 'record', command: countingCommand(counter), concurrency: 4 }));
  key = host.createKey('pause', 'read');
}

afterEach(async () => {
  await host.cleanup();
});

function runs(): string[] {
  return existsSync(counter) ? readFileSync(counter, 'utf8').split('\n').filter(Boolean) : [];
}

function hostJson(): HostStatusDoc | undefined {
  try {
    return JSON.parse(readFileSync(path.join(host.spool, 'host.json'), 'utf8')) as HostStatusDoc;
  } catch {
    return undefined;
  }
}

/** Waits (at most 2 s: the daemon must act within a second or so) until host.json says `paused`. */
function hostJsonSays(paused: boolean): Promise<HostStatusDoc> {
  return eventually(`host.json to say paused: ${paused}`, () => {
    const doc = hostJson();
    return doc?.paused === paused ? doc : undefined;
  }, 2000);
}

function status(): { paused: boolean; requests: Record<string, number> } {
  const r = host.cli(['status', '--json']);
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as { paused: boolean; requests: Record<string, number> };
}

describe('pause and resume', () => {
  it('while paused, requests are claimed and recorded as queued but nothing starts; resume starts them', async () => {
    makeHost();
    await host.startDaemon();
    host.submit(key, 'before-1', 'record');
    expect((await host.waitResult('before-1')).state).toBe('succeeded');
    expect(hostJson()?.paused).toBe(false);

    const p = host.cli(['pause']);
    expect(p.status).toBe(0);
    expect(p.stdout).toContain('Paused');
    const doc = await hostJsonSays(true);
    expect(doc.up).toBe(true);
    expect(status().paused).toBe(true);
    expect(host.cli(['status']).stdout).toContain('PAUSED');

    for (const id of ['held-1', 'held-2']) host.submit(key, id, 'record');
    // Claimed (out of the queue) and recorded (a result, in the ledger) ...
    for (const id of ['held-1', 'held-2']) expect((await host.waitResult(id, ['queued'])).state).toBe('queued');
    expect(host.exists('queue/held-1.json')).toBe(false);
    expect(host.exists('queue/held-2.json')).toBe(false);
    expect(host.audit('held-1', 'claimed')).toHaveLength(1);
    // ... but nothing starts: the daemon's pass over the queue that recorded them ended by starting what
    // may start, and a ping it takes after their results were seen comes after that pass.
    expect((await host.sentinel(key)).state).toBe('succeeded');
    for (const id of ['held-1', 'held-2']) {
      const r = host.result(id)!;
      expect(r.state).toBe('queued');
      expect(r.started_at).toBeNull();
    }
    expect(runs()).toEqual(['before-1']);
    expect(status().requests.queued).toBe(2);

    // Pausing twice changes nothing and says so.
    const again = host.cli(['pause', '--json']);
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ paused: true, changed: false });
    expect(host.audit('', 'paused')).toHaveLength(1);

    const r = host.cli(['resume']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Resumed');
    for (const id of ['held-1', 'held-2']) expect((await host.waitResult(id, ['succeeded'], 3000)).state).toBe('succeeded');
    expect(runs().sort()).toEqual(['before-1', 'held-1', 'held-2']);
    await hostJsonSays(false);
    expect(status().paused).toBe(false);
    expect(host.cli(['resume']).stdout).toContain('Not paused');

    const paused = host.audit('', 'paused');
    const resumed = host.audit('', 'resumed');
    expect(paused).toHaveLength(1);
    expect(resumed).toHaveLength(1);
    expect(paused[0]!.actor).toBe(ACTOR);
    expect(resumed[0]!.actor).toBe(ACTOR);
    expect(paused[0]!.message).toContain(`paused by ${ACTOR}`);
    expect(resumed[0]!.message).toContain(`resumed by ${ACTOR}`);
  });

  it('a pause survives a daemon restart', async () => {
    makeHost();
    const d1 = await host.startDaemon();
    expect(host.cli(['pause']).status).toBe(0);
    await hostJsonSays(true);
    host.submit(key, 'held-r1', 'record');
    expect((await host.waitResult('held-r1', ['queued'])).state).toBe('queued');
    await d1.stop();
    expect(hostJson()?.up).toBe(false);

    // Arrives while the host is down: waits in the queue, is claimed at the start, still does not run.
    host.submit(key, 'held-r2', 'record');
    await host.startDaemon();
    const doc = await hostJsonSays(true);
    expect(doc.up).toBe(true);
    expect((await host.waitResult('held-r2', ['queued'])).state).toBe('queued');
    expect((await host.sentinel(key)).state).toBe('succeeded'); // a pass of the daemon after held-r2's (see above)
    expect(host.result('held-r1')?.state).toBe('queued');
    expect(host.result('held-r2')?.state).toBe('queued');
    expect(runs()).toEqual([]);
    expect(status().paused).toBe(true);

    expect(host.cli(['resume']).status).toBe(0);
    for (const id of ['held-r1', 'held-r2']) expect((await host.waitResult(id, ['succeeded'], 3000)).state).toBe('succeeded');
    expect(runs().sort()).toEqual(['held-r1', 'held-r2']);
    await hostJsonSays(false);
  });

  it('pause set with no daemon running holds from the daemon\'s start', async () => {
    makeHost();
    const p = host.cli(['pause']);
    expect(p.status).toBe(0);
    host.submit(key, 'cold-1', 'record');
    await host.startDaemon();
    await hostJsonSays(true);
    expect((await host.waitResult('cold-1', ['queued'])).state).toBe('queued');
    expect((await host.sentinel(key)).state).toBe('succeeded'); // a pass of the daemon after cold-1's (see the first test)
    expect(host.result('cold-1')?.state).toBe('queued');
    expect(runs()).toEqual([]);
    expect(host.cli(['resume']).status).toBe(0);
    expect((await host.waitResult('cold-1', ['succeeded'], 3000)).state).toBe('succeeded');
    expect(host.audit('', 'paused')[0]?.actor).toBe(ACTOR);
    expect(host.audit('', 'resumed')[0]?.actor).toBe(ACTOR);
  });
});
