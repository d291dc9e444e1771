// The desktop app's first start, in Node against a temporary home: home and spool created once.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { firstRunSetup } from '../../../../main/core/app/firstRun';
import { StatusWatcher } from '../../../../main/core/app/statusWatcher';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-first-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('first run', () => {
  it('creates the home with the example allowlist and the spool, then changes nothing', () => {
    const home = path.join(dir, 'userData');
    const spool = path.join(dir, 'Dumbwaiter', 'spool');
    const first = firstRunSetup(home, spool);
    expect(first.firstRun).toBe(true);
    expect(readFileSync(path.join(home, 'allowlist.yaml'), 'utf8')).toContain('# Dumbwaiter allowlist');
    expect(statSync(spool).mode & 0o777).toBe(0o700);
    expect(existsSync(path.join(spool, 'bin', 'dw.cjs'))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(home, 'settings.json'), 'utf8')).spool).toBe(spool);
    const again = firstRunSetup(home, path.join(dir, 'elsewhere'));
    expect(again.firstRun).toBe(false);
    expect(again.spool.root).toBe(spool); // the home's setting wins over the default
    expect(existsSync(path.join(dir, 'elsewhere'))).toBe(false);
  });
});

describe('status watcher', () => {
  it('reports new approvals and finished runs once each', () => {
    const w = new StatusWatcher();
    const base = { home: '', spool: null, daemon: { running: true, heartbeat_at: null }, paused: false, allowlist: { ok: true, operations: [], error: null }, requests: {}, uncertain: [], keys: { active: 0, revoked: 0 }, spend: [] };
    const a = { id: 'a1', op: 'x', key_id: 'k', waiting_since: '', approval: {} as never };
    const r = { id: 'r1', op: 'x', key_id: 'k', started_at: null };
    expect(w.update({ ...base, approvals: [], running: [r] }, () => null)).toMatchObject({ changed: true, newApprovals: [], finished: [] });
    const second = w.update({ ...base, approvals: [a], running: [] }, (id) => ({ id, op: 'x', state: 'succeeded' }));
    expect(second.newApprovals.map((p) => p.id)).toEqual(['a1']);
    expect(second.finished).toEqual([{ id: 'r1', op: 'x', state: 'succeeded' }]);
    expect(w.update({ ...base, approvals: [a], running: [] }, () => null)).toEqual({ changed: false, newApprovals: [], finished: [] });
    // A heartbeat alone is no change (it moves every few seconds; the app would reload everything).
    const beat = { ...base, daemon: { running: true, heartbeat_at: '2026-11-29T12:00:05.000Z' }, approvals: [a], running: [] };
    expect(w.update(beat, () => null).changed).toBe(false);
    expect(w.update({ ...beat, paused: true }, () => null).changed).toBe(true);
  });
});
