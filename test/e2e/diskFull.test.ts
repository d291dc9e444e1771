// The spool's disk fills up under the daemon: it keeps running, says so in the log and the audit log,
// loses nothing (the ledger has every state), and writes the held-back results when space returns.
// Needs a small tmpfs; where this machine does not let us mount one, the test says so and skips.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GATED_OP, TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { allowlistYaml, type OpSpec } from '../helpers/allowlists';
import type { HostStatusDoc, KeyFile } from '../../shared/protocol/types';

const probe = spawnSync('sh', ['-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d"; s=$?; rmdir "$d"; exit $s']);
const canMount = probe.status === 0;
if (!canMount) console.warn(`SKIPPED disk-full test: cannot mount a tmpfs here (${probe.stderr.toString().trim() || `exit ${probe.status}`})`);

const TALK_OP: OpSpec = { name: 'talk', command: ['/bin/sh', '-c', 'echo "said $DUMBWAITER_REQUEST_ID"'], concurrency: 4 };
const TALK = allowlistYaml(TALK_OP);

/** Writes `file` until its disk is full to the last byte, as a sandbox can from its spool. */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(256 * 1024));
  } catch (e) {
    expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(!canMount)('a full spool disk', () => {
  let host: TestHost;
  let key: KeyFile;
  let daemon: DaemonProcess;
  let filler: string;

  beforeAll(async () => {
    host = new TestHost(TALK);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', host.spool]).status).toBe(0);
    expect(host.cli(['init']).status).toBe(0); // lays the spool out again, inside the tmpfs
    key = host.createKey('full', 'read');
    daemon = await host.startDaemon();
    filler = path.join(host.spool, 'tmp', 'filler');
  });

  afterAll(async () => {
    await daemon?.stop();
    spawnSync('umount', [host.spool]);
    await host.cleanup();
  });

  it('keeps running and recording, says so, and catches up when space returns', async () => {
    host.submit(key, 'before', 'talk');
    expect((await host.waitResult('before')).state).toBe('succeeded');

    expect(host.cli(['pause']).status).toBe(0);
    for (let i = 0; i < 3; i++) host.submit(key, `held-${i}`, 'talk');
    for (let i = 0; i < 3; i++) await host.waitResult(`held-${i}`, ['queued']);
    fillDisk(filler);
    expect(host.cli(['resume']).status).toBe(0);

    // The runs happen and the ledger has them, though no result file can be written.
    await eventually('the runs to finish in the ledger', () =>
      host.service((s) => [0, 1, 2].every((i) => s.requests.get(`held-${i}`)?.state === 'succeeded')) ? true : undefined,
    );
    const full = await eventually('a disk_full audit entry', () => host.audit('', 'disk_full')[0]);
    expect(full.message).toContain('ENOSPC');
    // The line was written before the audit entry, but this process may not have read the pipe yet.
    await eventually('the log line', () => (daemon.stderr.includes('the disk of spool "default" is full') ? true : undefined));
    expect(daemon.proc.exitCode).toBeNull();
    expect(host.result('held-0')?.state).toBe('queued'); // the file could not be replaced

    rmSync(filler);
    for (let i = 0; i < 3; i++) expect((await host.waitResult(`held-${i}`, ['succeeded'])).stdout).toBe(`said held-${i}\n`);
    await eventually('a disk_ok audit entry', () => host.audit('', 'disk_ok')[0]);
    await eventually('host.json without disk_full', () => {
      const h = JSON.parse(readFileSync(path.join(host.spool, 'host.json'), 'utf8')) as HostStatusDoc;
      return h.disk_full ? undefined : true;
    }, 12_000);
    host.submit(key, 'after', 'talk');
    expect((await host.waitResult('after')).state).toBe('succeeded');
  });
});

// The home and the spool on one filesystem, as the default layout puts them (both under $HOME): the
// sandbox fills it from its spool. The host keeps taking nothing new while the home is under its reserve
// (ledger/room.ts), stays up and says why, and takes the waiting request by itself once space returns.
// Run as root: a tmpfs's size binds root too (unlike ext4's reserved blocks), so this is what a user sees.
describe.skipIf(!canMount)('a full disk shared by the home and the spool', () => {
  let mount: string;
  let host: TestHost;
  let key: KeyFile;
  let daemon: DaemonProcess;

  beforeAll(async () => {
    mount = mkdtempSync(path.join(os.tmpdir(), 'dw-shared-'));
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=128m,mode=0700', 'tmpfs', mount]).status).toBe(0);
    host = new TestHost(allowlistYaml(TALK_OP, GATED_OP), {}, { root: mount });
    key = host.createKey('full', 'read');
    daemon = await host.startDaemon();
  });

  afterAll(async () => {
    await daemon?.stop();
    spawnSync('umount', [mount]);
    await host?.cleanup();
  });

  const hostJson = () => JSON.parse(readFileSync(path.join(host.spool, 'host.json'), 'utf8')) as HostStatusDoc;

  it('is warned about by `spools check`', () => {
    const r = host.cli(['spools', 'check', 'default'], { spool: null });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/FAIL apart from home +on the filesystem of the host's home/);
    expect(r.stdout).toContain("on the home's filesystem: a sandbox filling it stops the host taking requests");
  });

  it('keeps the host up, says why, and takes the request once space returns, without a restart', async () => {
    host.submit(key, 'before', 'talk');
    expect((await host.waitResult('before')).state).toBe('succeeded');
    const pid = daemon.proc.pid;

    // The request file is made while there is room, and put into queue/ once the disk is full (a rename
    // needs no space): the sandbox fills the disk from its spool to the last byte.
    const ready = path.join(host.spool, 'tmp', 'during.ready');
    writeFileSync(ready, host.envelope(key, 'during', 'talk'));
    const filler = path.join(host.spool, 'tmp', 'filler');
    fillDisk(filler);
    renameSync(ready, host.queuePath('during.json'));

    await eventually('the daemon to say it takes no new requests', () =>
      daemon.stderr.includes('new requests wait in queue/') ? true : daemon.proc.exitCode !== null ? fail(daemon.stderr) : undefined,
    );
    expect(daemon.proc.exitCode).toBeNull();
    expect(host.exists('queue/during.json')).toBe(true); // left where the sandbox put it
    const status = JSON.parse(host.cli(['status', '--json']).stdout) as { spool_problem: string | null; daemon: { running: boolean } };
    expect(status.daemon.running).toBe(true);
    expect(status.spool_problem).toMatch(/home's filesystem has .* free, under the 64\.0 MiB the host keeps for its ledger/);

    // A little room, still under the reserve: the heartbeat moves again and host.json says why.
    truncateSync(filler, statSync(filler).size - 4 * 1024 * 1024);
    const since = Date.now();
    const held = await eventually('a new heartbeat saying why', () => {
      const h = hostJson();
      return Date.parse(h.heartbeat_at) > since && h.held ? h : undefined;
    }, 12_000);
    expect(held.held).toContain('new requests wait in queue/');
    expect(host.exists('queue/during.json')).toBe(true);
    // Both clients tell the agent why its request is not taken, though the host runs.
    const keyPath = path.join(os.tmpdir(), `dw-full-key-${process.pid}.json`);
    writeFileSync(keyPath, JSON.stringify(key));
    try {
      const clients = [['node', path.join(host.spool, 'bin', 'dw.cjs')], ['python3', path.join(host.spool, 'bin', 'dw.py')]];
      for (const [i, [exe, client]] of clients.entries()) {
        const r = spawnSync(exe!, [client!, 'submit', 'talk', '--id', `told-${i}`, '--spool', host.spool, '--key-file', keyPath], { encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
        expect(r.stderr).toContain('the host is running');
        expect(r.stderr).toContain('but takes no new requests: the home');
      }
    } finally {
      rmSync(keyPath, { force: true });
    }

    rmSync(filler);
    expect((await host.waitResult('during')).stdout).toBe('said during\n');
    host.submit(key, 'after', 'talk');
    expect((await host.waitResult('after')).state).toBe('succeeded');
    expect(daemon.proc.pid).toBe(pid);
    expect(daemon.proc.exitCode).toBeNull();
    await eventually('host.json without the reason', () => (hostJson().held === undefined ? true : undefined), 12_000);
    expect(host.audit('', 'disk_full').some((e) => e.message.includes('the host takes no new requests'))).toBe(true);
    expect(host.audit('', 'disk_ok').some((e) => e.message.includes('the host takes requests again'))).toBe(true);
  });
});

describe.skipIf(!canMount)('a run that ends while the shared disk is full', () => {
  it('is recorded once there is room, without a restart', async () => {
    const mount = mkdtempSync(path.join(os.tmpdir(), 'dw-shared-'));
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=128m,mode=0700', 'tmpfs', mount]).status).toBe(0);
    const host = new TestHost(allowlistYaml(TALK_OP, GATED_OP), {}, { root: mount });
    try {
      const key = host.createKey('full', 'read');
      const daemon = await host.startDaemon();
      const go = path.join(host.work, 'go');
      host.submit(key, 'slow', 'gated', { go });
      await host.waitResult('slow', ['running']);
      const filler = path.join(host.spool, 'tmp', 'filler');
      fillDisk(filler);
      writeFileSync(go, ''); // an empty file needs no room on a tmpfs
      await eventually('the daemon to say it takes no new requests', () =>
        daemon.stderr.includes('new requests wait in queue/') ? true : daemon.proc.exitCode !== null ? fail(daemon.stderr) : undefined,
      );
      rmSync(filler);
      const r = await host.waitResult('slow');
      expect(r.state).toBe('succeeded');
      expect(r.stdout).toBe('started\ndone\n');
      expect(daemon.proc.exitCode).toBeNull();
    } finally {
      await host.cleanup().catch(() => {});
      spawnSync('umount', [mount]);
      rmSync(mount, { recursive: true, force: true });
    }
  });
});

function fail(stderr: string): never {
  throw new Error(`the daemon exited:\n${stderr}`);
}
