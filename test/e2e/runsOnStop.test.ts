// What the headless daemon's clean stop (SIGTERM, Ctrl-C) does with the runs still going, by the
// runs_on_stop setting: 'stop' gives them the grace period, then ends them (recorded uncertain);
// 'leave' leaves them running in the run keeper's hands, their rows `running`, a second signal changing
// nothing, and the next start picks them up from the keeper and records them as they end.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { TestHost, eventually } from '../helpers/host';
import { NO_OPERATIONS, allowlistYaml } from '../helpers/allowlists';
import { alive, groupRunning, stopGroups, trackGroup } from '../helpers/processes';
import { GatedRuns } from '../helpers/gatedRuns';
import type { KeyFile } from '../../shared/protocol/types';

let host: TestHost, gated: GatedRuns, key: KeyFile;

beforeEach(() => {
  host = new TestHost(NO_OPERATIONS);
  gated = new GatedRuns(host);
  host.writeAllowlist(allowlistYaml(gated.spec('quiet')));
  key = host.createKey('stops', 'read');
});

afterEach(async () => {
  await host.cleanup();
  stopGroups();
});

/** Starts a daemon and a run that waits for its go file, and waits until the run has started. */
async function runningQuietly(id: string) {
  const d = await host.startDaemon();
  host.submit(key, id, 'quiet', { go: gated.goFile(id) });
  await host.waitResult(id, ['running']);
  const pid = trackGroup(await host.runPid(id));
  await eventually(`${id} to have started`, () => (gated.runs(id) === 1 ? true : undefined));
  return { d, pid };
}

const row = (id: string) => host.service((s) => s.requests.get(id))!;

describe("runs_on_stop: 'leave'", () => {
  it('a SIGTERM stops the daemon with its run left running and its row running; a second signal changes nothing; the next start follows it, leaves it running too when it stops, and the one after records it as it ended', async () => {
    expect(host.cli(['config', 'set', 'runs_on_stop', 'leave']).status).toBe(0);
    const { d, pid } = await runningQuietly('left-1');

    // Two signals at once (a Ctrl-C on top of a SIGTERM): whichever it hears first stops it; the other,
    // if it is heard before the daemon is gone (a stop that leaves its runs takes a few ms, and on a
    // loaded machine it was seen to end before the second was handled), only says it is stopping already.
    d.proc.kill('SIGTERM');
    d.proc.kill('SIGINT');
    expect(await d.exited).toEqual({ code: 0, signal: null });
    await d.closed; // the second signal's line may be the last it wrote
    const said = d.stderr.split('\n').filter((l) => /^SIG(TERM|INT): /.test(l));
    expect(said[0]).toMatch(/^SIG(TERM|INT): stopping; running work is left running \(runs_on_stop: leave\)/);
    expect(said.slice(1)).toEqual(said.length > 1 ? [expect.stringMatching(/^SIG(TERM|INT): already stopping; running work is left running/)] : []);
    expect(d.stderr).not.toContain('ending running work now');
    expect(d.stderr).toContain('leaving 1 running request(s) running');
    expect(d.stderr).not.toContain('looking for its processes'); // letting the keeper go with the run is no loss to look into

    expect(groupRunning(pid)).toBe(true);
    expect(row('left-1')).toMatchObject({ state: 'running', orphaned: 0, error_code: null });
    expect(host.result('left-1')?.state).toBe('running');
    expect(host.audit('', 'daemon_stopped').map((e) => e.message)).toEqual(['daemon stopped cleanly, leaving 1 run running (recorded when the host starts again)']);
    expect(host.audit('', 'orphaned')).toEqual([]); // the stop recorded nothing of the run

    // The next start finds it in the keeper's hands and follows it: no orphan, the same run.
    const second = await host.startDaemon();
    await eventually('left-1 to be followed again', () => (second.stderr.includes('left-1: still running in the run keeper') ? true : undefined));
    expect(row('left-1')).toMatchObject({ state: 'running', orphaned: 0 });
    // It is left running again by that daemon's stop, and followed by the start after.
    expect(await second.stop()).toEqual({ code: 0, signal: null });
    expect(groupRunning(pid)).toBe(true);
    const third = await host.startDaemon();
    await eventually('left-1 to be followed again', () => (third.stderr.includes('left-1: still running in the run keeper') ? true : undefined));
    writeFileSync(gated.goFile('left-1'), '');
    const end = await host.waitResult('left-1', ['uncertain', 'succeeded']);
    expect(end).toMatchObject({ state: 'succeeded', exit_code: 0 }); // the keeper saw it end
    expect(host.audit('', 'orphaned')).toEqual([]);
    expect(gated.runs('left-1')).toBe(1); // never run again
  });

  it('a daemon with nothing running stops as usual, and says nothing was left', async () => {
    expect(host.cli(['config', 'set', 'runs_on_stop', 'leave']).status).toBe(0);
    const d = await host.startDaemon();
    expect(await d.stop()).toEqual({ code: 0, signal: null });
    expect(host.audit('', 'daemon_stopped').map((e) => e.message)).toEqual(['daemon stopped cleanly']);
  });
});

describe("runs_on_stop: 'stop' (the default)", () => {
  it('a SIGTERM ends the run after the grace period and records it uncertain', async () => {
    expect(host.service((s) => s.settings.get().runs_on_stop)).toBe('stop');
    const { d, pid } = await runningQuietly('stopped-1');
    expect(await d.stop()).toEqual({ code: 0, signal: null });
    expect(d.stderr).toContain('SIGTERM: stopping (running work gets 2 s to finish)');
    await eventually('the run to be gone', () => (groupRunning(pid) ? undefined : true));
    expect(alive(pid)).toBe(false);
    expect(row('stopped-1')).toMatchObject({ state: 'uncertain', error_code: 'interrupted' });
    expect(host.audit('', 'daemon_stopped').map((e) => e.message)).toEqual(['daemon stopped cleanly']);
  });
});
