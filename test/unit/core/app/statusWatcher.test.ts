// Successive status snapshots turned into the app's events: a change of state, a new approval.
import { describe, expect, it } from 'vitest';
import { StatusWatcher } from '../../../../main/core/app/statusWatcher';
import type { StatusView } from '../../../../shared/ipc/views';

const base: StatusView = { home: '', spool: null, spools: [], daemon: { running: true, heartbeat_at: null }, spool_problem: null, paused: false, allowlist: { ok: true, operations: [], error: null, disabled: [], serving: 'file', since: null }, requests: {}, uncertain: [], keys: { active: 0, revoked: 0 }, spend: [], running: [], approvals: [] };
const waiting = { id: 'a1', op: 'x', key_id: 'k', spool: 'default', waiting_since: '', expires_at: null, approval: {} as never, args: {}, run: null, steps: null };

describe('status watcher', () => {
  it('reports new approvals once each, and a change only when something but the heartbeat moved', () => {
    const w = new StatusWatcher();
    expect(w.update(base)).toEqual({ changed: true, newApprovals: [] });
    expect(w.update({ ...base, approvals: [waiting] }).newApprovals.map((p) => p.id)).toEqual(['a1']);
    expect(w.update({ ...base, approvals: [waiting] })).toEqual({ changed: false, newApprovals: [] });
    // A heartbeat alone is no change (it moves every few seconds; the app would reload everything).
    const beat = { ...base, daemon: { running: true, heartbeat_at: '2026-11-29T12:00:05.000Z' }, approvals: [waiting] };
    expect(w.update(beat).changed).toBe(false);
    const spool = { name: 'default', dir: '/s', problem: null, probe: null, keys: 0, open: 0, heartbeat_at: '2026-11-29T12:00:05.000Z', operations: [] };
    expect(w.update({ ...beat, spools: [spool] }).changed).toBe(true);
    expect(w.update({ ...beat, spools: [{ ...spool, heartbeat_at: '2026-11-29T12:00:10.000Z' }] }).changed).toBe(false);
    expect(w.update({ ...beat, paused: true }).changed).toBe(true);
  });

  it('reports nothing as new on the first snapshot: what already waits is not news', () => {
    expect(new StatusWatcher().update({ ...base, approvals: [waiting] }).newApprovals).toEqual([]);
  });
});
