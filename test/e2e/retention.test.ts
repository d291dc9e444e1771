// Retention with the real daemon, made old for real: file times set into the past with utimes, ledger
// rows' times set into the past in the real SQLite file (with the daemon stopped), then a daemon start
// (which reaps). Old finished things go; unfinished and uncertain ones stay whatever their age; an id
// whose result file went but whose ledger row stays is still bound (a replay, nothing runs again).
// And the retention settings: refused when they would drop a binding too early, audited when changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { TestHost, clockPast, eventually } from '../helpers/host';
import { allowlistYaml, countingCommand, NO_OPERATIONS } from '../helpers/allowlists';
import type { KeyFile, ResultDoc } from '../../shared/protocol/types';

const ACTOR = `cli:${os.userInfo().username}`;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Row {
  id: string;
  state: string;
  updated_at: string;
}

describe('reaping at daemon start', () => {
  let host: TestHost;
  let key: KeyFile;
  let counter: string;
  let oldInbox: string;
  let newInbox: string;
  let oldQuarantine: string;
  let newQuarantine: string;
  let boundOldUpdatedAt: string;
  let auditBefore: { ancient: number; boundOld: number };

  const results = (name: string) => path.join(host.spool, 'results', name);
  const spoolFile = (...p: string[]) => path.join(host.spool, ...p);
  const runsOf = (id: string) => (existsSync(counter) ? readFileSync(counter, 'utf8').split('\n').filter((l) => l === id).length : 0);
  const ageFile = (file: string, ms: number) => {
    const t = new Date(Date.now() - ms);
    utimesSync(file, t, t);
  };
  const withLedger = <T>(fn: (db: Database.Database) => T): T => {
    const db = new Database(path.join(host.home, 'ledger.sqlite'));
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  const row = (id: string) => withLedger((db) => db.prepare('SELECT id, state, updated_at FROM requests WHERE id = ?').get(id) as Row | undefined);
  const auditCount = (id: string) => withLedger((db) => (db.prepare('SELECT COUNT(*) AS n FROM audit WHERE request_id = ?').get(id) as { n: number }).n);

  beforeAll(async () => {
    // Retention at its minimum: spool files 0.01 day (~14 min); ledger 2 days, the least that still
    // covers max_request_age_s (1 day) plus one day. Approvals wait up to 30 days (so none times out here).
    host = new TestHost(NO_OPERATIONS, {
      retention_spool_days: 0.01,
      retention_ledger_days: 2,
      max_request_age_s: 86400,
      approval_timeout_s: 30 * 86400,
    });
    counter = path.join(host.root, 'runs.txt');
    // It prints a line, so that each run has a log (a run with no output makes none).
    const record = { command: countingCommand(counter, 'echo ran; sleep "$1"', '{seconds}'), args: { seconds: { type: 'integer', min: 0, max: 60, default: 0 } } };
    host.writeAllowlist(allowlistYaml({ name: 'record', ...record, concurrency: 4 }, { name: 'asking', ...record, approval: 'always' }));
    key = host.createKey('retention', 'read');

    // 1. Finished requests, one waiting for approval, a conflict (inbox), hostile entries (quarantine).
    const d1 = await host.startDaemon();
    for (const id of ['old-done', 'recent-done', 'bound-old', 'ancient']) host.submit(key, id, 'record');
    for (const id of ['old-done', 'recent-done', 'bound-old', 'ancient']) expect((await host.waitResult(id)).state).toBe('succeeded');
    host.submit(key, 'waiting', 'asking');
    await host.waitResult('waiting', ['awaiting_approval']);
    host.submit(key, 'old-done', 'asking'); // conflict: an inbox message
    await eventually('the first conflict message', () => (host.inbox().length === 1 ? true : undefined));
    mkdirSync(host.queuePath('qdir.json')); // a folder in queue/: quarantined, with a rejected result
    await host.waitResult('qdir', ['rejected']);
    await clockPast(Date.now()); // later time stamps (ms) for the second message and entries than for the first
    host.submit(key, 'recent-done', 'asking');
    await eventually('the second conflict message', () => (host.inbox().length === 2 ? true : undefined));
    mkdirSync(host.queuePath('qdir2.json'));
    await host.waitResult('qdir2', ['rejected']);
    const inboxNames = readdirSync(spoolFile('inbox')).sort();
    const refs = inboxNames.map((n) => (JSON.parse(readFileSync(spoolFile('inbox', n), 'utf8')) as { ref: string }).ref);
    expect(refs).toEqual(['old-done', 'recent-done']);
    [oldInbox, newInbox] = inboxNames as [string, string];
    const quarantined = readdirSync(spoolFile('quarantine'));
    oldQuarantine = quarantined.find((n) => n.endsWith('-qdir.json'))!;
    newQuarantine = quarantined.find((n) => n.endsWith('-qdir2.json'))!;
    expect(oldQuarantine).toBeDefined();
    expect(newQuarantine).toBeDefined();

    // 2. A run cut short by a crash: uncertain after the next start.
    host.submit(key, 'unc', 'record', { seconds: 30 });
    await host.waitResult('unc', ['running']);
    await eventually('the run to start', () => (runsOf('unc') === 1 ? true : undefined));
    const pid = await host.runPid('unc');
    await d1.kill9();
    try {
      process.kill(-pid, 'SIGKILL'); // the orphaned run: not needed any more
    } catch {
      /* already gone */
    }
    // 3. A queued request: the host is paused (from here on), so it stays queued.
    expect(host.cli(['pause']).status).toBe(0);
    const d2 = await host.startDaemon();
    expect((await host.waitResult('unc', ['uncertain'])).error?.code).toBe('interrupted');
    host.submit(key, 'queued-1', 'record');
    await host.waitResult('queued-1', ['queued']);
    await d2.stop();

    // 4. Make things old, for real.
    for (const id of ['old-done', 'bound-old', 'ancient', 'unc']) {
      ageFile(results(`${id}.json`), 3 * DAY);
      ageFile(results(`${id}.log`), 3 * DAY);
    }
    for (const id of ['qdir', 'waiting', 'queued-1']) ageFile(results(`${id}.json`), 3 * DAY);
    // Newer than the 0.01 day (14.4 min) retention: stays.
    ageFile(results('recent-done.json'), 5 * 60_000);
    ageFile(results('recent-done.log'), 5 * 60_000);
    writeFileSync(spoolFile('tmp', 'old-leftover.json.123'), 'half');
    ageFile(spoolFile('tmp', 'old-leftover.json.123'), 2 * HOUR);
    writeFileSync(spoolFile('tmp', 'new-leftover.json.456'), 'being written');
    ageFile(spoolFile('tmp', 'new-leftover.json.456'), 30 * 60_000);
    writeFileSync(spoolFile('queue', '.half-written.json'), 'half');
    ageFile(spoolFile('queue', '.half-written.json'), 2 * HOUR);
    ageFile(spoolFile('inbox', oldInbox), 3 * DAY);
    ageFile(spoolFile('quarantine', oldQuarantine), 3 * DAY);

    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    boundOldUpdatedAt = ago(47 * HOUR); // within max_request_age_s + 1 day (48 h): must stay bound
    withLedger((db) => {
      const set = db.prepare('UPDATE requests SET updated_at = ? WHERE id = ?');
      expect(set.run(boundOldUpdatedAt, 'bound-old').changes).toBe(1);
      expect(set.run(ago(49 * HOUR), 'ancient').changes).toBe(1);
      // Old in the ledger as its file is in the spool (a result file is written at each change of its
      // row): the host's result repair restores a removed result of a request changed within the spool's
      // retention, and rewrites one that is not what the ledger says (as this one then is) when its sweep
      // covers it, which it does for requests changed within that retention plus a day.
      expect(set.run(ago(30 * HOUR), 'old-done').changes).toBe(1);
      for (const id of ['waiting', 'queued-1', 'unc']) expect(set.run(ago(10 * DAY), id).changes).toBe(1);
      db.prepare('UPDATE audit SET at = ? WHERE request_id = ?').run(ago(49 * HOUR), 'ancient');
      db.prepare('UPDATE audit SET at = ? WHERE request_id = ?').run(ago(47 * HOUR), 'bound-old');
    });
    auditBefore = { ancient: auditCount('ancient'), boundOld: auditCount('bound-old') };
    expect(auditBefore.ancient).toBeGreaterThan(0);
    expect(auditBefore.boundOld).toBeGreaterThan(0);

    // 5. The daemon reaps a moment after it starts: wait for its record of it.
    await host.startDaemon();
    await eventually('the reaping at the start', () => (host.audit('', 'reaped').length > 0 ? true : undefined));
  });

  afterAll(async () => {
    await host.cleanup();
  });

  it('removes old finished results and logs (bound or not), keeps recent ones', () => {
    for (const id of ['old-done', 'bound-old', 'ancient']) {
      expect(existsSync(results(`${id}.json`)), `${id}.json`).toBe(false);
      expect(existsSync(results(`${id}.log`)), `${id}.log`).toBe(false);
    }
    expect(existsSync(results('qdir.json'))).toBe(false); // a rejection that never bound its id
    expect(existsSync(results('recent-done.json'))).toBe(true);
    expect(existsSync(results('recent-done.log'))).toBe(true);
    expect(existsSync(results('qdir2.json'))).toBe(true);
  });

  it('keeps the results of queued, awaiting_approval and uncertain requests whatever their age', () => {
    expect(host.result('waiting')?.state).toBe('awaiting_approval');
    expect(host.result('queued-1')?.state).toBe('queued');
    expect(host.result('unc')?.state).toBe('uncertain');
    expect(existsSync(results('unc.log'))).toBe(true);
    // ... and their ledger rows, although they are older than the ledger retention.
    expect(row('waiting')?.state).toBe('awaiting_approval');
    expect(row('queued-1')?.state).toBe('queued');
    expect(row('unc')?.state).toBe('uncertain');
    expect(host.cli(['resolve', 'unc', '--failed']).status).toBe(0); // still there to be settled
  });

  it('removes tmp/ files (and in-progress queue leftovers) older than 1 h, keeps newer ones', () => {
    expect(existsSync(spoolFile('tmp', 'old-leftover.json.123'))).toBe(false);
    expect(existsSync(spoolFile('tmp', 'new-leftover.json.456'))).toBe(true);
    expect(existsSync(spoolFile('queue', '.half-written.json'))).toBe(false);
  });

  it('removes old inbox messages and quarantined entries, keeps newer ones', () => {
    expect(existsSync(spoolFile('inbox', oldInbox))).toBe(false);
    expect(existsSync(spoolFile('inbox', newInbox))).toBe(true);
    expect(existsSync(spoolFile('quarantine', oldQuarantine))).toBe(false);
    expect(existsSync(spoolFile('quarantine', newQuarantine))).toBe(true);
  });

  it('deletes ledger rows and audit entries older than the ledger retention, keeps those within max_request_age_s + 1 day', () => {
    expect(row('ancient')).toBeUndefined();
    expect(auditCount('ancient')).toBe(0);
    expect(row('bound-old')).toMatchObject({ state: 'succeeded', updated_at: boundOldUpdatedAt });
    expect(auditCount('bound-old')).toBe(auditBefore.boundOld);
    expect(row('old-done')?.state).toBe('succeeded');
    expect(row('recent-done')?.state).toBe('succeeded');
  });

  it('records what it removed in the audit log (kind reaped)', () => {
    const reaped = host.service((s) => s.audit.search({ kind: 'reaped' }));
    expect(reaped).toHaveLength(1);
    expect(reaped[0]!.actor).toBe('daemon');
    expect(reaped[0]!.details).toEqual({
      tmp: 1,
      queue_leftovers: 1,
      results: 7, // old-done, bound-old, ancient (.json and .log) and qdir.json
      inbox: 1,
      quarantine: 1,
      ledger_requests: 1,
      audit: auditBefore.ancient,
    });
    expect(reaped[0]!.message).toContain('7 results');
    expect(reaped[0]!.message).toContain('1 tmp');
    expect(reaped[0]!.message).toContain('1 ledger requests');
  });

  it('a replay of an id whose result file was reaped but whose ledger row stays is a replay: nothing runs, the result is written again', async () => {
    expect(runsOf('bound-old')).toBe(1);
    // A caller retrying (rebuilt now, same op and args).
    host.submit(key, 'bound-old', 'record');
    const back: ResultDoc = await host.waitResult('bound-old', ['succeeded']);
    expect(back.updated_at).toBe(boundOldUpdatedAt); // from the ledger row, not a new run
    expect(back.exit_code).toBe(0);
    await eventually('the replay to be recorded', () => (host.audit('bound-old', 'replay').length === 1 ? true : undefined));
    expect(host.audit('bound-old', 'replay')[0]!.message).toContain('nothing runs again');
    expect(host.exists('queue/bound-old.json')).toBe(false);
    // The daemon has taken a later request: the replay is dealt with. (The host is paused since step 3:
    // what shows that the replay ran nothing is that it queued nothing, the result and row unchanged.)
    expect((await host.sentinel(key)).state).toBe('succeeded');
    expect(host.result('bound-old')).toEqual(back);
    expect(row('bound-old')?.state).toBe('succeeded');
    expect(runsOf('bound-old')).toBe(1);
    expect(host.audit('bound-old', 'started')).toHaveLength(1);
  });
});

describe('retention settings', () => {
  let host: TestHost;

  beforeAll(() => {
    host = new TestHost();
  });

  afterAll(async () => {
    await host.cleanup();
  });

  const getJson = () => {
    const r = host.cli(['config', 'get', '--json']);
    expect(r.status).toBe(0);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  it('config get --json shows every setting, with the retention defaults', () => {
    const s = getJson();
    expect(s).toMatchObject({ retention_spool_days: 7, retention_ledger_days: 90, max_request_age_s: 86400, approval_timeout_s: 3600, ceilings: [] });
    expect(Object.keys(s).sort()).toEqual(
      ['approval_timeout_s', 'ceilings', 'file_events', 'host_id', 'kill_grace_s', 'max_concurrent_runs', 'max_request_age_s', 'notifications', 'rescan_interval_ms', 'retention_ledger_days', 'retention_spool_days', 'runs_on_stop', 'shutdown_grace_s', 'spools', 'start_at_login'].sort(),
    );
    const one = host.cli(['config', 'get', 'retention_ledger_days', '--json']);
    expect(JSON.parse(one.stdout)).toEqual({ retention_ledger_days: 90 });
  });

  it('refuses retention_ledger_days 1: it must cover max_request_age_s plus one day', () => {
    const before = readFileSync(path.join(host.home, 'settings.json'), 'utf8');
    const r = host.cli(['config', 'set', 'retention_ledger_days', '1']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('retention_ledger_days');
    expect(r.stderr).toContain('must cover max_request_age_s plus one day');
    expect(r.stdout).toBe('');
    expect(readFileSync(path.join(host.home, 'settings.json'), 'utf8')).toBe(before);
    expect(getJson().retention_ledger_days).toBe(90);
    expect(host.audit('', 'settings_changed')).toHaveLength(0);
  });

  it('refuses a max_request_age_s that the ledger retention would no longer cover', () => {
    expect(host.cli(['config', 'set', 'retention_ledger_days', '2']).status).toBe(0); // 2 days = 1 day + 1 day: fine
    const r = host.cli(['config', 'set', 'max_request_age_s', '172800']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('must cover max_request_age_s plus one day');
    expect(getJson()).toMatchObject({ retention_ledger_days: 2, max_request_age_s: 86400 });
  });

  it('sets a valid value, writes it to settings.json and audits it (kind settings_changed)', () => {
    const r = host.cli(['config', 'set', 'retention_spool_days', '3']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe('retention_spool_days = 3');
    expect(getJson().retention_spool_days).toBe(3);
    const onDisk = JSON.parse(readFileSync(path.join(host.home, 'settings.json'), 'utf8')) as Record<string, unknown>;
    expect(onDisk.retention_spool_days).toBe(3);
    const changed = host.audit('retention_spool_days', 'settings_changed');
    expect(changed).toHaveLength(1);
    expect(changed[0]!.actor).toBe(ACTOR);
    expect(changed[0]!.message).toContain('set retention_spool_days to 3 (was 7)');
    // The earlier valid change is audited too; the refused ones are not.
    expect(host.audit('', 'settings_changed').map((a) => a.message)).toEqual([
      expect.stringContaining('retention_spool_days to 3'),
      expect.stringContaining('retention_ledger_days to 2 (was 90)'),
    ]);
  });

  it('a hand-edited settings.json that breaks the rule is refused by the daemon as well', async () => {
    const file = path.join(host.home, 'settings.json');
    const s = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...s, retention_ledger_days: 1 }));
    await expect(host.startDaemon()).rejects.toThrow(/must cover max_request_age_s plus one day/);
    const get = host.cli(['config', 'get']);
    expect(get.status).toBe(1);
    expect(get.stderr).toContain('retention_ledger_days');
  });
});
