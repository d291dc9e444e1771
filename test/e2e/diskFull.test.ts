// The spool's disk fills up under the daemon: it keeps running, says so in the log and the audit log,
// loses nothing (the ledger has every state), and writes the held-back results when space returns.
// Needs a small tmpfs; where this machine does not let us mount one, the test says so and skips.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import type { HostStatusDoc, KeyFile } from '../../shared/protocol/types';

const probe = spawnSync('sh', ['-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d"; s=$?; rmdir "$d"; exit $s']);
const canMount = probe.status === 0;
if (!canMount) console.warn(`SKIPPED disk-full test: cannot mount a tmpfs here (${probe.stderr.toString().trim() || `exit ${probe.status}`})`);

describe.skipIf(!canMount)('a full spool disk', () => {
  let host: TestHost;
  let key: KeyFile;
  let daemon: DaemonProcess;
  let filler: string;

  beforeAll(async () => {
    host = new TestHost(`version: 1
operations:
  - name: talk
    command: [/bin/sh, -c, 'echo "said $DUMBWAITER_REQUEST_ID"']
    scope: read
    approval: never
    concurrency: 4
`);
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
    // Fill the disk to the last byte.
    const fd = openSync(filler, 'w');
    try {
      for (;;) writeSync(fd, Buffer.alloc(64 * 1024));
    } catch (e) {
      expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      closeSync(fd);
    }
    expect(host.cli(['resume']).status).toBe(0);

    // The runs happen and the ledger has them, though no result file can be written.
    await eventually('the runs to finish in the ledger', () =>
      host.service((s) => [0, 1, 2].every((i) => s.request(`held-${i}`)?.state === 'succeeded')) ? true : undefined,
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
