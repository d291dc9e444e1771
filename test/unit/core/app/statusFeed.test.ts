// The app's live feed on a real daemon: every run that ends is reported once, even one that starts and
// ends between two passes (a quick run takes milliseconds); so is every verdict on an interrupted run,
// a human's or its reconcile check's. And the feed is pushed: by the daemon in the same process
// (Daemon.onChange), or by the home folder's watch for one in another process (followHome), each
// burst of changes coalesced into few passes.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatusFeed, followHome, type FeedPass } from '../../../../main/core/app/statusFeed';
import { Daemon } from '../../../../main/core/daemon/daemon';
import { Host } from '../../../../main/core/host/host';
import { HostCore } from '../../../../main/core/hostCore';
import type { EventName } from '../../../../shared/ipc/contract';
import type { KeyFile } from '../../../../shared/protocol/types';
import { TestHost, eventually, type DaemonProcess } from '../../../helpers/host';
import { GUARDED, NO_OPERATIONS, QUICK, allowlistYaml } from '../../../helpers/allowlists';

let host: TestHost;
let key: KeyFile;
let svc: Host;
let daemon: DaemonProcess;
/** Once it exists, the reconcile command of `checked` says the run took effect; until then it cannot tell. */
let tookEffect: string;

beforeAll(async () => {
  host = new TestHost(NO_OPERATIONS);
  tookEffect = path.join(host.root, 'took-effect');
  const held = ['sleep', '300'];
  host.writeAllowlist(
    allowlistYaml(QUICK, { name: 'fails', command: ['false'] }, { name: 'held', command: held }, GUARDED, {
      name: 'checked',
      command: held,
      reconcile: { command: ['/bin/sh', '-c', 'test -e "$0" && exit 0; exit 2', tookEffect] },
    }),
  );
  key = host.createKey();
  daemon = await host.startDaemon();
  svc = new Host(host.home, host.spool);
});

afterAll(async () => {
  svc?.close();
  await host?.cleanup();
});

describe('status feed', () => {
  it('reports each run that ended since the last poll once, quick ones included, and no request that never ran or was built in', async () => {
    host.submit(key, 'before-1', 'quick');
    await host.waitResult('before-1');
    const events: { event: EventName; payload: unknown }[] = [];
    const feed = new StatusFeed(svc, (event, payload) => events.push({ event, payload }));
    expect(feed.poll().changes.finished).toEqual([]); // what ended before the app looked is not news

    host.submit(key, 'run-1', 'quick');
    host.submit(key, 'run-2', 'fails');
    host.submit(key, 'never-ran', 'no-such-op');
    host.submit(key, 'ping-1', 'dumbwaiter.ping');
    host.submit(key, 'run-3', 'quick');
    for (const id of ['run-1', 'run-2', 'never-ran', 'ping-1', 'run-3']) await host.waitResult(id);
    const { finished } = feed.poll().changes; // in the order they ended, which runs side by side may swap
    expect([...finished].sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'run-1', op: 'quick', spool: 'default', state: 'succeeded' },
      { id: 'run-2', op: 'fails', spool: 'default', state: 'failed' },
      { id: 'run-3', op: 'quick', spool: 'default', state: 'succeeded' },
    ]);
    expect(events.filter((e) => e.event === 'run.finished').map((e) => e.payload)).toEqual(finished);
    expect(feed.poll().changes.finished).toEqual([]);

    host.submit(key, 'run-4', 'quick');
    await host.waitResult('run-4');
    expect(feed.poll().changes.finished.map((f) => f.id)).toEqual(['run-4']);

    // A run cut short by a crash ends twice for the app: uncertain, then with a human's verdict.
    host.submit(key, 'cut-1', 'held');
    await host.waitResult('cut-1', ['running']);
    const pid = await host.runPid('cut-1');
    await host.crash(daemon); // and its run keeper: the runs' ends are lost with it
    process.kill(-pid, 'SIGKILL'); // the killed daemon's run: not needed
    daemon = await host.startDaemon();
    await host.waitResult('cut-1', ['uncertain']);
    expect(feed.poll().changes.finished).toEqual([{ id: 'cut-1', op: 'held', spool: 'default', state: 'uncertain' }]);
    svc.verdicts.resolve('cut-1', 'failed', 'checked by hand', 'test');
    expect(feed.poll().changes.finished).toEqual([{ id: 'cut-1', op: 'held', spool: 'default', state: 'failed' }]);
  });

  it("reports an interrupted run again once its reconcile check settles it", async () => {
    const feed = new StatusFeed(svc, () => {});
    feed.poll();
    host.submit(key, 'cut-2', 'checked');
    await host.waitResult('cut-2', ['running']);
    const pid = await host.runPid('cut-2');
    await host.crash(daemon); // and its run keeper: the runs' ends are lost with it
    process.kill(-pid, 'SIGKILL');
    daemon = await host.startDaemon();
    // The restarted daemon's own check cannot tell yet: uncertain, with its attempt.
    await eventually("the daemon's check", () => (host.result('cut-2')?.reconcile ? true : undefined));
    expect(feed.poll().changes.finished).toEqual([{ id: 'cut-2', op: 'checked', spool: 'default', state: 'uncertain' }]);
    writeFileSync(tookEffect, '');
    expect(await svc.verdicts.checkReconcile('cut-2', 'test')).toMatchObject({ state: 'succeeded', resolved_by: 'reconcile' });
    expect(feed.poll().changes.finished).toEqual([{ id: 'cut-2', op: 'checked', spool: 'default', state: 'succeeded' }]);
  });
});

/** A feed whose every event and pass is kept, made only on changes (the test never calls poll). */
function pushedFeed(service: Host): { feed: StatusFeed; events: { event: EventName; payload: unknown }[]; passes: FeedPass[] } {
  const events: { event: EventName; payload: unknown }[] = [];
  const passes: FeedPass[] = [];
  const feed = new StatusFeed(service, (event, payload) => events.push({ event, payload }), (p) => passes.push(p));
  feed.poll(); // the app's first look, at its start
  return { feed, events, passes };
}

const eventOf = (events: { event: EventName; payload: unknown }[], event: EventName, id: string) =>
  events.find((e) => e.event === event && (e.payload as { id?: string }).id === id);

describe('status feed, pushed', () => {
  it('follows the command line daemon through the home folder: an arrival, its approval from the command line, its end and the daemon stopping reach it unasked', async () => {
    const { feed, events, passes } = pushedFeed(svc);
    const follow = followHome(svc.core.home, () => feed.changed())!;
    try {
      host.submit(key, 'push-1', 'guarded');
      await eventually('the approval to be pushed', () => eventOf(events, 'approval.requested', 'push-1'));
      expect(host.cli(['approvals', 'approve', 'push-1']).status).toBe(0);
      expect(await eventually('the end to be pushed', () => eventOf(events, 'run.finished', 'push-1'))).toMatchObject({ payload: { state: 'succeeded' } });
      await daemon.stop();
      await eventually('the stop to be pushed', () => (passes.at(-1)?.status.daemon.running === false ? true : undefined));
    } finally {
      follow.close();
      feed.close();
      daemon = await host.startDaemon();
    }
  });

  it("is told by the daemon in its own process after each change, the command line's included (its wake)", async () => {
    const own = new TestHost(`version: 1
operations:
  - name: guarded
    command: ["true"]
    scope: read
    approval: always
`);
    const ownKey = own.createKey();
    // As in the app: one core for the daemon and the service of this process.
    const core = HostCore.open(own.home);
    const d = await Daemon.start({ homeDir: own.home, core, consoleLog: false });
    const service = new Host(core, own.spool);
    const { feed, events } = pushedFeed(service);
    const unsubscribe = d.onChange(() => feed.changed());
    try {
      own.submit(ownKey, 'own-1', 'guarded');
      await eventually('the approval to be pushed', () => eventOf(events, 'approval.requested', 'own-1'));
      expect(own.cli(['approvals', 'approve', 'own-1']).status).toBe(0);
      expect(await eventually('the end to be pushed', () => eventOf(events, 'run.finished', 'own-1'))).toMatchObject({ payload: { state: 'succeeded' } });
      expect(own.cli(['pause']).status).toBe(0);
      await eventually('the pause to be pushed', () => events.find((e) => e.event === 'state.changed' && (e.payload as { paused: boolean }).paused));
    } finally {
      unsubscribe();
      feed.close();
      await d.stop();
      core.close();
      await own.cleanup();
    }
  });

  it('makes one pass for a burst of changes, and none once closed', async () => {
    const { feed, passes } = pushedFeed(svc);
    for (let i = 0; i < 100; i++) feed.changed();
    await eventually('the pass', () => (passes.length > 0 ? true : undefined));
    feed.changed();
    await eventually('the next pass', () => (passes.length > 1 ? true : undefined));
    expect(passes).toHaveLength(2);
    feed.changed();
    feed.close();
    const gone = pushedFeed(svc);
    gone.feed.changed();
    await eventually("another feed's pass, made after the closed one's would have been", () => (gone.passes.length > 0 ? true : undefined));
    gone.feed.close();
    expect(passes).toHaveLength(2);
  });
});
