// One spool's server over a real home and real folders, without a daemon process: it pins the spool and
// writes what belongs there (host.json, catalog.json with this spool's operations only, bin/); a spool
// made unsafe is said as its problem and not touched, and once fixed, back() writes again what it could
// not meanwhile (a result decided while it was broken, the catalog, host.json); the heartbeat says what
// the host is doing; requests written to queue/ are taken; retention runs only in a usable spool.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SpoolServer } from '../../../../main/core/spool/server';
import { parseAllowlist } from '../../../../main/core/allowlist/load';
import { APP_VERSION } from '../../../../main/core/version';
import { envelope, eventually, readResult } from '../../../helpers/host';
import { HomeParts } from '../../../helpers/homeParts';
import { allowlistYaml, type OpSpec } from '../../../helpers/allowlists';
import type { CatalogDoc, HostStatusDoc, KeyFile } from '../../../../shared/protocol/types';

const OPS: OpSpec[] = [
  { name: 'held', command: ['/bin/true'], scope: 'write', approval: 'always' },
  { name: 'quick', command: ['/bin/true'] },
];
const ALLOWLIST = allowlistYaml(...OPS, { name: 'work_only', command: ['/bin/true'], spools: ['work'] });

let parts: HomeParts;
let server: SpoolServer;
let key: KeyFile;

const spoolFile = (name: string) => path.join(parts.spool, name);
const hostJson = () => JSON.parse(readFileSync(spoolFile('host.json'), 'utf8')) as HostStatusDoc;
const catalogOps = () => (JSON.parse(readFileSync(spoolFile('catalog.json'), 'utf8')) as CatalogDoc).operations.map((o) => o.name);
const submit = (id: string, op: string) => writeFileSync(path.join(parts.spool, 'queue', `${id}.json`), envelope(key, id, op));
const stateOf = (id: string) => parts.core.requests.get(id)?.state;

beforeEach(() => {
  parts = new HomeParts(ALLOWLIST, { file_events: false }, ['work']);
  key = parts.keyFile();
  server = new SpoolServer(parts.settings.spools.find((s) => s.name === 'default')!, parts.shared);
});

afterEach(async () => {
  chmodSync(parts.spool, 0o700); // put back, so that the folder can be removed
  await server.stop();
  server.close();
  await parts.close();
});

describe('a start', () => {
  it('pins the spool and publishes what belongs there: host.json, catalog.json with this spool\'s operations only, the clients in bin/', () => {
    server.start();
    expect(server.ok).toBe(true);
    expect(catalogOps().sort()).toEqual(['held', 'quick']); // work_only is offered to spool work alone
    expect(existsSync(spoolFile('bin'))).toBe(true);
    expect(hostJson()).toMatchObject({ spool: 'default', up: true });
    expect(parts.core.flags.spoolProblem('default')).toBeNull();
  });

  it('takes what is in queue/: a request recorded, answered in results/', async () => {
    server.start();
    submit('r-held', 'held');
    server.requestScan();
    await eventually('the request to be recorded', () => stateOf('r-held'));
    expect(stateOf('r-held')).toBe('awaiting_approval');
    await eventually('its result', () => readResult(parts.spool, 'r-held'));
    expect(readResult(parts.spool, 'r-held')!.state).toBe('awaiting_approval');
  });
});

describe('the heartbeat', () => {
  it('host.json says the host, its version, the pause, what waits and runs, and a stop', async () => {
    server.start();
    parts.core.flags.setPaused(true); // requests are recorded, none starts
    submit('r-quick', 'quick');
    server.requestScan();
    await eventually('the request to be recorded', () => stateOf('r-quick'));
    server.heartbeat();
    expect(hostJson()).toMatchObject({ v: 1, protocol: 1, host_id: parts.settings.host_id, app_version: APP_VERSION, paused: true, queue_depth: 1, running: 0, up: true, spool: 'default' });
    expect(hostJson()).not.toHaveProperty('disk_full');
    expect(hostJson()).not.toHaveProperty('held');
    parts.stopping = true;
    server.heartbeat();
    expect(hostJson()).toMatchObject({ up: false });
  });
});

describe('the catalog', () => {
  it('is published again for a new allowlist, with this spool\'s view of it', () => {
    server.start();
    const next = parseAllowlist(allowlistYaml(...OPS, { name: 'work_only', command: ['/bin/true'] }), 'allowlist.yaml', { spools: parts.settings.spools, home: parts.home.root });
    server.publishCatalog(next);
    expect(catalogOps().sort()).toEqual(['held', 'quick', 'work_only']);
  });
});

describe('a spool made unsafe, then fixed', () => {
  it('is not usable (its problem said, nothing written there); once fixed, back() writes what it held back: the result decided meanwhile, the catalog, host.json', async () => {
    server.start();
    submit('r-held', 'held');
    server.requestScan();
    await eventually('the request to wait for a human', () => readResult(parts.spool, 'r-held'));

    chmodSync(parts.spool, 0o777); // open to every user: the sandbox could swap anything in it
    expect(server.usable()).toBe(false);
    expect(server.ok).toBe(false);
    expect(parts.core.flags.spoolProblem('default')).toMatch(/can be written by other users/);
    rmSync(spoolFile('catalog.json'));
    rmSync(spoolFile('host.json'));
    parts.core.decisions.deny('r-held', 'test', 'not now'); // its result cannot be written meanwhile
    server.heartbeat();
    server.publishCatalog(parts.shared.allowlist());
    server.repairResults();
    expect(readResult(parts.spool, 'r-held')!.state).toBe('awaiting_approval');
    expect(existsSync(spoolFile('catalog.json'))).toBe(false);

    chmodSync(parts.spool, 0o700);
    expect(server.usable()).toBe(true);
    expect(parts.core.flags.spoolProblem('default')).toBeNull();
    expect(readResult(parts.spool, 'r-held')!.state).toBe('denied');
    expect(catalogOps().sort()).toEqual(['held', 'quick']);
    expect(hostJson()).toMatchObject({ spool: 'default', up: true });
    expect(server.reap()).not.toBeNull(); // retention runs again in it
  });

  it('retention does not touch an unusable spool', () => {
    server.start();
    chmodSync(parts.spool, 0o777);
    expect(server.reap()).toBeNull();
  });
});
