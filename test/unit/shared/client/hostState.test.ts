// Whether the host is running, as a client tells it from host.json.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hostStateOf, localTime, readHostState, startsRequests, HEARTBEAT_FUTURE_MS, HEARTBEAT_STALE_MS } from '../../../../shared/client/hostState';
import { MAX_HOST_JSON_BYTES } from '../../../../shared/protocol/types';

const now = Date.parse('2026-12-01T12:00:00.000Z');
const beat = (msAgo: number) => new Date(now - msAgo).toISOString();

describe('hostStateOf', () => {
  it('a host with a fresh heartbeat runs; paused says so', () => {
    expect(hostStateOf({ heartbeat_at: beat(3000), up: true, paused: false, app_version: '1.2.3' }, now)).toMatchObject({ running: true, since: null, text: 'the host is running (Dumbwaiter 1.2.3, per host.json)' });
    expect(hostStateOf({ heartbeat_at: beat(3000), paused: true }, now).text).toContain('paused');
  });

  it('a running host that holds new requests back says why, escaped and bounded; a stopped one holds nothing', () => {
    const held = hostStateOf({ heartbeat_at: beat(1000), app_version: '1.2.3', held: 'no room\u001b]52;c;eA==\u0007' + 'x'.repeat(400) }, now);
    expect(held).toMatchObject({ running: true });
    expect(held.held).not.toContain('\u001b');
    expect(held.held).not.toContain('\u0007');
    expect(held.held!.length).toBeLessThan(340);
    expect(held.text).toMatch(/^the host is running \(Dumbwaiter 1\.2\.3, per host\.json\), but takes no new requests: no room/);
    expect(startsRequests(held)).toBe(false);
    expect(startsRequests(hostStateOf({ heartbeat_at: beat(1000) }, now))).toBe(true);
    expect(hostStateOf({ heartbeat_at: beat(1000), up: false, held: 'no room' }, now).held).toBeNull();
  });

  it('a host that said it stopped, or whose heartbeat is stale, is not running since its last heartbeat', () => {
    const stopped = hostStateOf({ heartbeat_at: beat(1000), up: false }, now);
    expect(stopped).toMatchObject({ running: false, since: beat(1000) });
    expect(stopped.text).toBe(`the host is not running (since ${localTime(beat(1000), new Date(now))}, per host.json)`);
    expect(hostStateOf({ heartbeat_at: beat(HEARTBEAT_STALE_MS + 1), up: true }, now).running).toBe(false);
  });

  it('a forged version with terminal escapes or new lines is shown as "?", never raw', () => {
    for (const forged of ['1.0\u001b[2J\u001b[1;1Hok  key accepted', '1.0\nFAIL nothing', 'x'.repeat(41), '']) {
      const state = hostStateOf({ heartbeat_at: beat(1000), app_version: forged }, now);
      expect(state.version).toBe('?');
      expect(state.text).toBe('the host is running (Dumbwaiter ?, per host.json)');
    }
    expect(hostStateOf({ heartbeat_at: beat(1000), app_version: '1.4.0-beta.2+g1a2b' }, now).version).toBe('1.4.0-beta.2+g1a2b');
  });

  it('a heartbeat more than a minute in the future is no proof of a running host', () => {
    const ahead = hostStateOf({ heartbeat_at: beat(-(HEARTBEAT_FUTURE_MS + 1)), up: true }, now);
    expect(ahead).toMatchObject({ running: false, since: null });
    expect(ahead.text).toBe('the host is not running as far as host.json tells: its heartbeat is in the future, so its clock or the file is wrong');
    expect(hostStateOf({ heartbeat_at: '2999-01-01T00:00:00.000Z', up: true }, now).running).toBe(false);
    // A clock a little ahead of this sandbox's is not a forgery.
    expect(hostStateOf({ heartbeat_at: beat(-5000), up: true }, now).running).toBe(true);
  });

  it("the host's probe of the mount is read only when it has the probe's shape, its summary cut to 300 characters", () => {
    const probe = { verdict: 'degraded', summary: '9p: no file events: rescan only (every 1000 ms)', events: false };
    expect(hostStateOf({ heartbeat_at: beat(1000), probe } as never, now).probe).toEqual({ verdict: 'degraded', summary: probe.summary });
    expect(hostStateOf({ heartbeat_at: beat(1000), probe: { ...probe, summary: 'x'.repeat(5000) } } as never, now).probe!.summary).toHaveLength(300);
    for (const forged of [{ ...probe, verdict: 'fine' }, { ...probe, summary: 7 }, 'ok', null, []]) {
      expect(hostStateOf({ heartbeat_at: beat(1000), probe: forged } as never, now).probe).toBeNull();
    }
    expect(hostStateOf(null, now).probe).toBeNull();
  });

  it('no host.json: it has never run; a broken one has no heartbeat', () => {
    expect(hostStateOf(null, now)).toMatchObject({ running: false, since: null, text: 'the host has never run on this spool (no host.json)' });
    expect(hostStateOf({}, now)).toMatchObject({ running: false, text: 'the host is not running (host.json has no heartbeat)' });
  });

  it('local times: the time of day today, with the date otherwise', () => {
    const t = new Date(now);
    expect(localTime(t.toISOString(), t)).toMatch(/^\d\d:\d\d:\d\d$/);
    expect(localTime(new Date(now - 3 * 86_400_000).toISOString(), t)).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  it('a host.json larger than the host ever writes is not its own, however fresh its heartbeat', () => {
    const spool = mkdtempSync(path.join(os.tmpdir(), 'host-json-'));
    try {
      const fresh = JSON.stringify({ v: 1, heartbeat_at: new Date().toISOString(), up: true });
      writeFileSync(path.join(spool, 'host.json'), fresh);
      expect(readHostState(spool).running).toBe(true);
      writeFileSync(path.join(spool, 'host.json'), fresh.replace(/}$/, `, "pad": "${'x'.repeat(MAX_HOST_JSON_BYTES)}"}`));
      expect(readHostState(spool)).toMatchObject({ running: false, text: 'the host is not running (host.json has no heartbeat)' });
    } finally {
      rmSync(spool, { recursive: true, force: true });
    }
  });
});
