// A queue flood without a key: thousands of junk entries of every kind written into queue/ while the
// daemon runs. A valid request written in the middle of it is answered, every junk entry is moved out
// of the way (or refused and dropped, for validly named garbage) and accounted for in the audit log,
// and the daemon answers as usual afterwards. How fast, and in how much memory, `npm run bench` says.
// Then junk that is expensive to refuse (64 KiB, a real key id, a wrong MAC): a request written among
// it is taken by its file event's name, not after every name that sorts before it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, runningHost, type DaemonProcess } from '../helpers/host';
import { allowlistYaml, echoOp } from '../helpers/allowlists';
import { MAX_REQUEST_BYTES, type KeyFile } from '../../shared/protocol/types';

const N = 6000;
let host: TestHost;
let key: KeyFile;
let daemon: DaemonProcess;

beforeAll(async () => {
  ({ host, key, daemon } = await runningHost(allowlistYaml(echoOp()), { name: 'flood', scope: 'read' }));
});

afterAll(async () => {
  await host.cleanup();
});

const queue = () => path.join(host.spool, 'queue');

describe('a flood of junk in queue/', () => {
  it(`answers a valid request written during a flood of ${N} junk entries, and drains every one of them`, async () => {
    const target = path.join(host.root, 'target');
    writeFileSync(target, 'do not touch\n');
    const kinds = { bad_name: 0, garbage: 0, folder: 0, symlink: 0, fifo: 0 };
    const fifos: string[] = [];
    // Named to sort before the valid request: in name order, all of it comes first.
    for (let i = 0; i < N; i++) {
      const tag = String(i).padStart(5, '0');
      const kind = i % 10;
      if (kind < 5) {
        writeFileSync(path.join(queue(), `a junk ${tag}`), 'junk');
        kinds.bad_name++;
      } else if (kind < 8) {
        writeFileSync(path.join(queue(), `a-${tag}.json`), '{"v":1,"key_id":"nobody","payload":"{}","mac":"x"}');
        kinds.garbage++;
      } else if (kind === 8 && i % 20 === 8) {
        mkdirSync(path.join(queue(), `a-dir-${tag}.json`));
        kinds.folder++;
      } else if (kind === 8) {
        symlinkSync(target, path.join(queue(), `a-link-${tag}.json`));
        kinds.symlink++;
      } else {
        fifos.push(path.join(queue(), `a-fifo-${tag}.json`));
        kinds.fifo++;
        if (fifos.length === 100) expect(spawnSync('mkfifo', fifos.splice(0)).status).toBe(0);
      }
      if (i === N / 2) host.submit(key, 'valid-during', 'echo', { msg: 'during the flood' });
    }
    if (fifos.length) expect(spawnSync('mkfifo', fifos.splice(0)).status).toBe(0);

    expect((await host.waitResult('valid-during', undefined, 300_000)).stdout).toBe('during the flood\n');
    await eventually('queue/ to be drained', () => (readdirSync(queue()).length === 0 ? true : undefined), 300_000);

    // Moved away as they were, or (validly named garbage) refused after reading and dropped.
    expect(readdirSync(path.join(host.spool, 'quarantine'))).toHaveLength(N - kinds.garbage);
    const claimed = path.join(host.spool, 'claimed');
    for (const mine of readdirSync(claimed)) expect(readdirSync(path.join(claimed, mine))).toEqual([]);
    expect(readFileSync(target, 'utf8')).toBe('do not touch\n');
    // Every one is accounted for: told one by one, or counted in an entry for its step.
    await eventually('every junk entry in the audit log', () => {
      const rejected = host.service((s) => s.audit.search({ kind: 'rejected', limit: 10_000 }));
      const accounted = rejected.reduce((n, a) => n + (typeof a.details?.count === 'number' ? a.details.count : 1), 0);
      return accounted === N ? true : undefined;
    });

    host.submit(key, 'valid-after', 'echo', { msg: 'after the flood' });
    expect((await host.waitResult('valid-after')).stdout).toBe('after the flood\n');
    expect(daemon.proc.exitCode).toBeNull();
  }, 600_000);

  it('answers a request written among 64 KiB junk naming a real key, while that junk is still in queue/', async () => {
    await host.sentinel(key); // the first flood is over
    // Each costs a full read and a MAC over 64 KiB to refuse. 1,100 written after the request: more
    // than one step can look at, and more than a thousand names to push its own name out.
    const BEFORE = 2000;
    const AFTER = 1100;
    const shell = JSON.stringify({ v: 1, key_id: key.key_id, payload: '', mac: '0'.repeat(64) });
    const body = JSON.stringify({ v: 1, key_id: key.key_id, payload: 'x'.repeat(MAX_REQUEST_BYTES - shell.length), mac: '0'.repeat(64) });
    expect(Buffer.byteLength(body)).toBe(MAX_REQUEST_BYTES);
    const junkLeft = () => readdirSync(queue()).filter((n) => n.startsWith('e-')).length;
    // The daemon stopped while it is all written: its file events then name the files in exactly this
    // order, whatever the machine's speed. Every junk name sorts before the request's.
    process.kill(daemon.proc.pid!, 'SIGSTOP');
    try {
      for (let i = 0; i < BEFORE; i++) host.writeQueueFile(`e-1-${String(i).padStart(5, '0')}.json`, body);
      host.submit(key, 'v-among-junk', 'echo', { msg: 'among the junk' });
      for (let i = 0; i < AFTER; i++) host.writeQueueFile(`e-2-${String(i).padStart(5, '0')}.json`, body);
    } finally {
      process.kill(daemon.proc.pid!, 'SIGCONT');
    }

    // Answered (its first result is written when it is claimed) while junk is still there: the result
    // is looked for first, and junk only ever leaves queue/, so it was there when the result was seen.
    const left = await eventually('the request among the junk to be claimed', () => (host.result('v-among-junk') ? junkLeft() : undefined), 300_000);
    expect(left).toBeGreaterThan(0);
    expect((await host.waitResult('v-among-junk', undefined, 300_000)).stdout).toBe('among the junk\n');

    await eventually('queue/ to be drained', () => (readdirSync(queue()).length === 0 ? true : undefined), 300_000);
    // Every one refused as what it is, a bad signature, counted or told (not as a bad envelope).
    await eventually('every 64 KiB junk file in the audit log as bad_signature', () => {
      const rejected = host.service((s) => s.audit.search({ kind: 'rejected', limit: 20_000 }));
      const signatures = rejected.reduce((n, a) => {
        const codes = a.details?.codes as Record<string, number> | undefined;
        return n + (codes ? (codes.bad_signature ?? 0) : a.details?.code === 'bad_signature' ? 1 : 0);
      }, 0);
      return signatures === BEFORE + AFTER ? true : undefined;
    });
    expect(await host.sentinel(key)).toMatchObject({ state: 'succeeded' });
    expect(daemon.proc.exitCode).toBeNull();
  }, 600_000);
});

describe("a flood in one spool's claimed/<host>/ (its name is in host.json)", () => {
  it('is taken in steps: another spool is answered while thousands are still left there', async () => {
    const two = new TestHost(allowlistYaml(echoOp()));
    try {
      const work = two.addSpool('work');
      const other = two.createKey('other', 'read', null, 'work');
      const d = await two.startDaemon({}, { spool: null });
      expect((await two.sentinel(other, 'dumbwaiter.ping', {}, work)).state).toBe('succeeded');
      const hostId = (JSON.parse(readFileSync(path.join(two.home, 'settings.json'), 'utf8')) as { host_id: string }).host_id;
      const mine = path.join(two.spool, 'claimed', hostId);
      const M = 20_000;
      process.kill(d.proc.pid!, 'SIGSTOP');
      try {
        for (let i = 0; i < M; i++) writeFileSync(path.join(mine, `j-${String(i).padStart(5, '0')}.json`), 'junk');
      } finally {
        process.kill(d.proc.pid!, 'SIGCONT');
      }
      // Once the daemon has begun on them, the other spool's request: it does not wait for the rest.
      await eventually('the recovery of the planted files to begin', () => (readdirSync(mine).length < M ? true : undefined), 60_000);
      two.submit(other, 'w-during', 'echo', { msg: 'meanwhile' }, {}, work);
      const left = await eventually('the other spool\'s request to be claimed', () => (two.result('w-during', work) ? readdirSync(mine).length : undefined), 300_000);
      expect(left).toBeGreaterThan(0);
      expect((await two.waitResult('w-during', undefined, 300_000, work)).stdout).toBe('meanwhile\n');
      await eventually('claimed/<host>/ to be drained', () => (readdirSync(mine).length === 0 ? true : undefined), 300_000);
      expect(d.proc.exitCode).toBeNull();
    } finally {
      await two.cleanup();
    }
  }, 600_000);
});
