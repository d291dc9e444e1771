// The spawner process that starts the real daemon's runs (main/core/exec/spawner.ts): it does not
// outlive a SIGKILLed daemon, and when it is SIGKILLed itself during a run, the daemon watches that
// run as a restarted host watches an orphan (running, orphaned; uncertain once it ends, never re-run)
// and starts the next run in a new spawner.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { TestHost, eventually } from '../helpers/host';
import { alive, groupRunning, stopGroups, trackGroup } from '../helpers/processes';
import { GatedRuns } from '../helpers/gatedRuns';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost;
let key: KeyFile;
let gated: GatedRuns;

beforeEach(() => {
  host = new TestHost('version: 1\noperations: []\n');
  gated = new GatedRuns(host);
  host.writeAllowlist(`version: 1
operations:
${gated.op('sleeper', '    concurrency: 1\n')}
  - name: echo
    command: [/bin/echo, "{word}"]
    args:
      word: {type: string, max_length: 50}
    scope: read
    approval: never
`);
  key = host.createKey('spawner', 'read');
});

afterEach(async () => {
  await host.cleanup();
  stopGroups();
});

/** The daemon's spawner process: its child running spawnerMain. */
function spawnerOf(daemonPid: number): Promise<number> {
  return eventually(`the spawner of daemon ${daemonPid}`, () => {
    for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid === daemonPid && readFileSync(`/proc/${name}/cmdline`, 'latin1').includes('spawner')) return Number(name);
      } catch {
        /* gone meanwhile */
      }
    }
    return undefined;
  });
}

describe.runIf(process.platform === 'linux')('the spawner process', () => {
  it('does not outlive a SIGKILLed daemon', async () => {
    const d = await host.startDaemon();
    const spawner = await spawnerOf(d.proc.pid!);
    await d.kill9();
    await eventually('the spawner to exit', () => (alive(spawner) ? undefined : true));
  });

  it('killed during a run: the run is watched as an orphan, ends uncertain, is never re-run, and the next run starts', async () => {
    const d = await host.startDaemon();
    const first = await spawnerOf(d.proc.pid!);
    host.submit(key, 'lost-1', 'sleeper', { go: gated.goFile('lost-1') });
    await host.waitResult('lost-1', ['running']);
    const pid = trackGroup(await host.runPid('lost-1'));
    await eventually('lost-1 to have started', () => (gated.runs('lost-1') === 1 ? true : undefined));

    process.kill(first, 'SIGKILL');
    await eventually('lost-1 to be orphaned', () => (host.result('lost-1')?.orphaned ? true : undefined));
    expect(host.result('lost-1')?.state).toBe('running');
    expect(host.audit('lost-1', 'orphaned')[0]?.message).toContain(`the host's spawner) ended while it ran, and its processes (process group ${pid}) still run`);
    expect(groupRunning(pid)).toBe(true);

    // Its slot is held: another run of its operation waits; another operation's run starts, in a new spawner.
    writeFileSync(gated.goFile('next'), '');
    host.submit(key, 'next', 'sleeper', { go: gated.goFile('next') });
    host.submit(key, 'echo-1', 'echo', { word: 'again' });
    expect(await host.waitResult('echo-1')).toMatchObject({ state: 'succeeded', stdout: 'again\n' });
    expect((await host.waitResult('next', ['queued'])).state).toBe('queued'); // shown once it has waited 50 ms
    const second = await spawnerOf(d.proc.pid!);
    expect(second).not.toBe(first);

    writeFileSync(gated.goFile('lost-1'), '');
    const r = await host.waitResult('lost-1', ['uncertain', 'succeeded', 'failed']);
    expect(r).toMatchObject({ state: 'uncertain', error: { code: 'interrupted' } });
    expect(r.error!.message).toContain("the host's spawner) ended while it ran, and its processes");
    expect(r.error!.message).toContain('will not be re-run');
    expect((await host.waitResult('next')).state).toBe('succeeded');
    expect(gated.runs('lost-1')).toBe(1);
    expect(alive(d.proc.pid!)).toBe(true);
  });
});
