// The daemon's allowlist as the spools change under it, on a real ledger and real files: an edit that
// does not load keeps the last good version, but a new spool inside an operation's root makes that
// version unsafe too (another sandbox would read the new spool's files), so then nothing is offered,
// as a restart would find, said once in the audit log.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { AllowlistSource } from '../../../../main/core/daemon/allowlistSource';
import { SETTLE_MS } from '../../../../main/core/fs/settle';
import type { AllowlistContext } from '../../../../main/core/allowlist/roots';
import type { Allowlist } from '../../../../main/core/allowlist/types';
import { scopedLogger } from '../../../../main/core/log';
import { TestLedger } from '../../../helpers/ledger';

let l: TestLedger;
let file: string;
let proj: string;
let ctx: AllowlistContext;
let served: Allowlist[];
let source: AllowlistSource;

/** `read-file` reads below the project folder; `greet` touches no folder. */
const allowlist = (extra = '') => `version: 1
operations:
  - name: greet
    command: [echo, hi]
  - name: read-file
    command: [cat, "{file}"]
    args:
      file: {type: path, within: [${JSON.stringify(proj)}]}
${extra}`;

beforeEach(() => {
  l = new TestLedger();
  file = path.join(l.dir, 'allowlist.yaml');
  proj = path.join(l.dir, 'proj');
  mkdirSync(path.join(l.dir, 'spool-a'));
  mkdirSync(proj);
  ctx = { spools: [{ name: 'a', dir: path.join(l.dir, 'spool-a') }], home: path.join(l.dir, 'home') };
  served = [];
  writeFileSync(file, allowlist());
  source = new AllowlistSource(file, path.join(l.dir, 'allowlist.last-good.yaml'), () => ctx, l.audit, scopedLogger('test'), (a) => served.push(a));
  source.loadInitial();
});
afterEach(() => {
  l.close();
  rmSync(l.dir, { recursive: true, force: true });
});

const ops = () => [...source.get().operations.keys()];
/** The file replaced whole, as the app and the command line write it (read at once). */
const replace = (text: string) => {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
};
const invalid = () => l.audit.search({ kind: 'allowlist_invalid', limit: 100 }).map((a) => a.message);
/** The newest allowlist_invalid entry (search lists the newest first). */
const latestInvalid = () => invalid()[0];
/** The home gains spool `cee` inside the project folder, as `spools add` or a hand edit would. */
const addCeeInsideProj = () => {
  ctx = { ...ctx, spools: [...ctx.spools, { name: 'cee', dir: path.join(proj, 'cee') }] };
};

describe('AllowlistSource when the spools change', () => {
  it('offers nothing once a new spool lies inside a root of both the file and the last good version, and says so once', () => {
    expect(ops()).toEqual(['greet', 'read-file']);
    addCeeInsideProj();
    source.poll();
    expect(ops()).toEqual([]);
    expect(served.at(-1)!.operations.size).toBe(0);
    expect(source.status).toMatchObject({ ok: false, serving: 'none', operations: [], error: expect.stringMatching(/within: .*proj contains the spool "cee"/) });
    expect(invalid()).toEqual([expect.stringMatching(/contains the spool "cee"[^]*the last good allowlist does not load with the spools as they are now either, so no operation is offered until .*allowlist\.yaml is fixed: .*allowlist\.last-good\.yaml is invalid:[^]*contains the spool "cee"/)]);
    source.poll();
    expect(invalid()).toHaveLength(1);
  });

  it('offers what the fixed file allows once the root no longer holds the new spool', () => {
    addCeeInsideProj();
    source.poll();
    replace(allowlist().replace(JSON.stringify(proj), JSON.stringify(path.join(proj, 'src'))) + '# fixed\n');
    source.poll();
    expect(ops()).toEqual(['greet', 'read-file']);
    expect(source.status).toMatchObject({ ok: true, error: null });
  });

  it('keeps the last good version when it still loads with the new spools and only the edited file is wrong', () => {
    replace(allowlist('  - name: broken\n'));
    source.poll();
    expect(ops()).toEqual(['greet', 'read-file']);
    expect(latestInvalid()).toMatch(/keeping the last good allowlist \(2 operations\)$/);
    ctx = { ...ctx, spools: [...ctx.spools, { name: 'dee', dir: path.join(l.dir, 'spool-d') }] };
    source.poll();
    expect(ops()).toEqual(['greet', 'read-file']);
    expect(latestInvalid()).toMatch(/keeping the last good allowlist \(2 operations\)$/);
  });

  it('offers nothing when an invalid edit is in the file and the new spool lies inside a root of the last good version', () => {
    replace(allowlist('  - name: broken\n'));
    source.poll();
    expect(ops()).toEqual(['greet', 'read-file']);
    addCeeInsideProj();
    source.poll();
    expect(ops()).toEqual([]);
    expect(latestInvalid()).toMatch(/no operation is offered until .* is fixed: .*allowlist\.last-good\.yaml is invalid:[^]*contains the spool "cee"/);
  });

  it('keeps the last good version of a plain invalid edit while the spools stay as they were', () => {
    replace('version: 2\n');
    source.poll();
    expect(ops()).toEqual(['greet', 'read-file']);
    expect(source.status).toMatchObject({ ok: false, serving: 'last_good', operations: [{ name: 'greet' }, { name: 'read-file' }], error: expect.stringMatching(/version: must be 1/) });
  });

  it('finds after a restart what the running daemon found: nothing offered', () => {
    addCeeInsideProj();
    const restarted = new AllowlistSource(file, path.join(l.dir, 'allowlist.last-good.yaml'), () => ctx, l.audit, scopedLogger('test'), () => {});
    restarted.loadInitial();
    expect(restarted.get().operations.size).toBe(0);
    source.poll();
    expect(ops()).toEqual([]);
  });
});

describe('AllowlistSource when the file is written in place', () => {
  /** Written in place as an editor or `cat >` does: truncated, then written in steps. */
  let fd: number;
  const begin = () => (fd = openSync(file, 'w'));
  const write = (text: string) => writeSync(fd, text);
  const end = () => closeSync(fd);
  const third = () => allowlist('  - name: third\n    command: [echo, three]\n');
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());

  it('reads it once it has stopped changing: never half-written, never called invalid, never a valid prefix served', () => {
    const whole = third();
    begin();
    write(whole.slice(0, 40)); // "version: 1\noperations:\n  - name: greet\n": valid, and not what is being written
    source.poll(); // the watcher's event
    vi.advanceTimersByTime(SETTLE_MS - 1);
    write(whole.slice(40, 120));
    source.poll();
    vi.advanceTimersByTime(SETTLE_MS - 1);
    expect(ops()).toEqual(['greet', 'read-file']);
    write(whole.slice(120));
    end(); // its event dropped (chokidar drops a change that follows another within ms): the settle's end looks again
    vi.advanceTimersByTime(SETTLE_MS);
    expect(ops()).toEqual(['greet', 'read-file']);
    vi.advanceTimersByTime(SETTLE_MS);
    expect(ops()).toEqual(['greet', 'read-file', 'third']);
    expect(served.at(-1)!.operations.size).toBe(3);
    expect(invalid()).toEqual([]);
    expect(source.status).toMatchObject({ ok: true, serving: 'file', error: null });
  });

  it('calls a file that stays invalid invalid once it has settled, serving the last good version, since it was loaded', () => {
    const since = source.status.since;
    begin();
    write('version: 1\noperations:\n  - name: [');
    end();
    source.poll();
    expect(invalid()).toEqual([]);
    vi.advanceTimersByTime(SETTLE_MS);
    expect(invalid()).toEqual([expect.stringMatching(/YAML syntax[^]*keeping the last good allowlist \(2 operations\)$/)]);
    expect(source.status).toMatchObject({ ok: false, serving: 'last_good', since, error: expect.stringContaining('is invalid') });
    expect(ops()).toEqual(['greet', 'read-file']);
  });

  it('checks the version served against new spools at once, while the file is still being written', () => {
    begin();
    write('version: 1\n');
    source.poll();
    addCeeInsideProj();
    source.poll();
    expect(ops()).toEqual([]);
    expect(source.status).toMatchObject({ serving: 'none' });
    end();
  });
});
