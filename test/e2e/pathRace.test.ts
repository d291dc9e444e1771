// A sandbox that can write inside a path root races the host: a process swaps a sub-folder of the root
// with a symlink to a folder outside it (renameat2 RENAME_EXCHANGE, flat out) while requests name a
// file in that sub-folder. Whatever the timing, no read returns the outside file and no approved run
// creates a file outside: on Linux the program gets the very object that was checked. Also: the real
// daemon refuses roots that overlap its spool or home.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, symlinkSync, writeFileSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, runningHost } from '../helpers/host';
import { NO_OPERATIONS } from '../helpers/allowlists';
import { track } from '../helpers/processes';
import { CAN_HAND_OVER } from '../../main/core/exec/pathHandles';
import type { ApprovalInfo, KeyFile, RequestState } from '../../shared/protocol/types';

/** Exchanges two names in a loop, as fast as it can; says "racing" once it has swapped once. */
const RACER = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
def swap():
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
swap()
print("racing", flush=True)
while True:
    swap()
`;

const FINAL: RequestState[] = ['succeeded', 'failed', 'rejected', 'denied', 'expired', 'cancelled', 'uncertain'];
const READS = 60;
const CREATES = 20;

const allowlist = (shared: string) => `version: 1
operations:
  - name: read
    command: [/bin/cat, "{file}"]
    cwd: ${JSON.stringify(shared)}
    args:
      file: {type: path, within: [${JSON.stringify(shared)}], shared_with_sandbox: true}
    scope: read
    approval: never
    concurrency: 4
  - name: make
    command: [/usr/bin/touch, "{file}"]
    cwd: ${JSON.stringify(shared)}
    args:
      file: {type: path, within: [${JSON.stringify(shared)}], must_exist: false, shared_with_sandbox: true}
    scope: write
    approval: always
    concurrency: 4
`;

describe.skipIf(!CAN_HAND_OVER)('a sub-folder of a shared root swapped for a symlink, in a loop, while requests use it', () => {
  let host: TestHost;
  let key: KeyFile;
  let shared: string;
  let outside: string;
  let racer: ChildProcess | null = null;

  beforeAll(async () => {
    host = new TestHost();
    shared = path.join(host.root, 'shared');
    outside = path.join(host.root, 'outside');
    mkdirSync(path.join(shared, 'sub'), { recursive: true });
    mkdirSync(path.join(outside, 'sub'), { recursive: true });
    writeFileSync(path.join(shared, 'sub', 'secret.txt'), 'inside\n');
    writeFileSync(path.join(outside, 'sub', 'secret.txt'), 'OUTSIDE\n');
    // The sandbox's stand-in: a symlink beside the sub-folder, leading to the same-looking folder outside.
    symlinkSync(path.join(outside, 'sub'), path.join(shared, 'link'));
    host.writeAllowlist(allowlist(shared));
    key = host.createKey('racer', 'write');
    await host.startDaemon();
  });

  afterAll(async () => {
    racer?.kill('SIGKILL');
    await host?.cleanup();
  });

  it('no read returns the outside file, no approved run creates a file outside, and the daemon answers after', async () => {
    racer = track(spawn('python3', ['-c', RACER, path.join(shared, 'sub'), path.join(shared, 'link')], { stdio: ['ignore', 'pipe', 'pipe'] }));
    let said = '';
    racer.stdout!.on('data', (c: Buffer) => (said += c.toString()));
    racer.stderr!.on('data', (c: Buffer) => (said += c.toString()));
    await eventually('the racer to swap', () => (said.includes('racing') ? true : racer!.exitCode !== null ? fail(`the racer stopped: ${said}`) : undefined));

    for (let i = 0; i < READS; i++) host.submit(key, `race-read-${String(i).padStart(3, '0')}`, 'read', { file: 'sub/secret.txt' });

    // Each approved run is checked again before it starts; one whose path resolved otherwise meanwhile
    // asks again, and is approved again, as a human who saw the inside path would. The creates come one
    // after another, each checked at its own moment: all at once, on a loaded machine, they could all
    // be checked while the racer waited for a core, and all meet the same side of the swap.
    const sharedShown = new Set<string>();
    for (let i = 0; i < CREATES; i++) {
      const id = `race-make-${String(i).padStart(3, '0')}`;
      host.submit(key, id, 'make', { file: `sub/new-${i}.txt` });
      await eventually(`${id} to finish`, () =>
        host.service((s) => {
          const row = s.requests.get(id);
          if (row?.state === 'awaiting_approval') {
            sharedShown.add(JSON.stringify((JSON.parse(row.approval_json!) as ApprovalInfo).shared_with_sandbox));
            s.verdicts.approve(id, 'test');
            return undefined;
          }
          return row && FINAL.includes(row.state) ? true : undefined;
        }), 120_000);
    }
    const makes = await Promise.all(Array.from({ length: CREATES }, (_, i) => host.waitResult(`race-make-${String(i).padStart(3, '0')}`)));
    const reads = await Promise.all(Array.from({ length: READS }, (_, i) => host.waitResult(`race-read-${String(i).padStart(3, '0')}`, undefined, 60_000)));

    racer.kill('SIGKILL');
    await new Promise((r) => (racer!.exitCode !== null || racer!.signalCode !== null ? r(null) : racer!.once('exit', r)));

    // The attack: never the outside file's content, never a file created outside.
    expect(reads.filter((r) => r.stdout.includes('OUTSIDE')).map((r) => r.id)).toEqual([]);
    expect(readdirSync(path.join(outside, 'sub')).sort()).toEqual(['secret.txt']);
    // What happened instead: read from inside, or refused (outside when checked, or swapped after it).
    for (const r of [...reads, ...makes]) {
      if (r.state === 'succeeded') continue;
      expect(`${r.id}: ${r.state} ${r.error?.code} ${r.error?.message}`).toMatch(/: (rejected bad_args .*outside the allowed folders|failed spawn_failed .*became a symlink after it was checked|failed spawn_failed .*no longer a folder)/);
    }
    const ok = reads.filter((r) => r.state === 'succeeded');
    for (const r of ok) expect(r.stdout).toBe('inside\n');
    // The race was live: some requests met the symlink when checked, some met the folder (and then
    // ran, or met the symlink at the handover). Each check sees either about half the time.
    const all = [...reads, ...makes];
    expect(all.filter((r) => r.error?.code === 'bad_args').length).toBeGreaterThan(0);
    expect(all.filter((r) => r.state === 'succeeded' || r.error?.code === 'spawn_failed').length).toBeGreaterThan(0);
    // The approver was told the root is shared; what was created is in the folder that was checked.
    expect([...sharedShown]).toEqual([JSON.stringify([shared])]);
    const insideDir = path.join(shared, lstatSync(path.join(shared, 'sub')).isSymbolicLink() ? 'link' : 'sub');
    makes.forEach((r, i) => {
      if (r.state === 'succeeded') expect(existsSync(path.join(insideDir, `new-${i}.txt`)), r.id).toBe(true);
    });

    // Alive and answering: a ping, and a read once the sandbox stopped.
    expect((await host.sentinel(key)).state).toBe('succeeded');
    host.submit(key, 'race-after', 'read', { file: path.join(insideDir, 'secret.txt') });
    expect(await host.waitResult('race-after')).toMatchObject({ state: 'succeeded', stdout: 'inside\n' });
  }, 300_000);
});

describe('a shared root itself replaced by a symlink after the allowlist was loaded', () => {
  let host: TestHost;

  afterAll(async () => {
    await host?.cleanup();
  });

  it('refuses what the link leads to: the root is the folder the allowlist named when it was loaded', async () => {
    host = new TestHost();
    const root = path.join(host.root, 'share', 'proj');
    const outside = path.join(host.root, 'outside');
    mkdirSync(root, { recursive: true });
    mkdirSync(outside);
    writeFileSync(path.join(root, 'notes.txt'), 'inside\n');
    writeFileSync(path.join(outside, 'notes.txt'), 'OUTSIDE\n');
    host.writeAllowlist(`version: 1
operations:
  - name: read
    command: [/bin/cat, "{file}"]
    cwd: ${JSON.stringify(host.work)}
    args:
      file: {type: path, within: [${JSON.stringify(root)}], shared_with_sandbox: true}
    scope: read
    approval: never
`);
    const key = host.createKey('reader', 'read');
    await host.startDaemon();
    host.submit(key, 'root-before', 'read', { file: path.join(root, 'notes.txt') });
    expect(await host.waitResult('root-before')).toMatchObject({ state: 'succeeded', stdout: 'inside\n' });

    // The sandbox (which writes share/) moves the root away and puts a link to elsewhere in its place.
    renameSync(root, `${root}.aside`);
    symlinkSync(outside, root);
    host.submit(key, 'root-swapped', 'read', { file: path.join(root, 'notes.txt') });
    expect(await host.waitResult('root-swapped')).toMatchObject({ state: 'rejected', stdout: '', error: { code: 'bad_args', message: expect.stringMatching(/outside the allowed folders/) } });
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });
});

describe('roots that overlap the spool or the home, loaded by the real daemon', () => {
  let host: TestHost;
  let key: KeyFile;

  beforeAll(async () => {
    ({ host, key } = await runningHost(NO_OPERATIONS, { name: 'reader', scope: 'read' }));
  });

  afterAll(async () => {
    await host?.cleanup();
  });

  const op = (within: string, extra = '') => `version: 1
operations:
  - name: look
    command: [/bin/ls, "{dir}"]
    cwd: ${JSON.stringify(host.work)}
    args:
      dir: {type: path, within: [${JSON.stringify(within)}]${extra}}
    scope: read
    approval: never
`;

  it('refuses a root that contains the spool (the whole allowlist stays the last good one) and says why in the audit log', async () => {
    host.writeAllowlist(op(host.spool));
    const entry = await eventually('the refusal in the audit log', () => host.audit('', 'allowlist_invalid').find((e) => e.message.includes('contains the spool')));
    expect(entry.message).toContain(`operations[0].args.dir.within: ${host.spool} contains the spool "default" (${host.spool})`);
    host.submit(key, 'overlap-1', 'look', { dir: path.join(host.spool, 'results') });
    expect(await host.waitResult('overlap-1')).toMatchObject({ state: 'rejected', error: { code: 'unknown_op' } });
  });

  it('refuses a root that contains the home even when declared shared, and loads a shared root inside the spool', async () => {
    host.writeAllowlist(op(host.root, ', shared_with_sandbox: true'));
    await eventually('the home refusal', () => host.audit('', 'allowlist_invalid').find((e) => e.message.includes("contains Dumbwaiter's home")));
    host.writeAllowlist(op(path.join(host.spool, 'results'), ', shared_with_sandbox: true'));
    await eventually('the shared root to load', () => host.audit('look', 'allowlist_loaded')[0]);
    host.submit(key, 'overlap-2', 'look', { dir: path.join(host.spool, 'results') });
    expect((await host.waitResult('overlap-2')).state).toBe('succeeded');
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('approvals list says which folders of a waiting request the sandbox can write', async () => {
    const results = path.join(host.spool, 'results');
    const loads = host.audit('', 'allowlist_loaded').length;
    host.writeAllowlist(op(results, ', shared_with_sandbox: true').replace('approval: never', 'approval: always').replace('scope: read', 'scope: write'));
    await eventually('the asking version to load', () => host.audit('', 'allowlist_loaded').length > loads || undefined);
    const writer = host.createKey('writer', 'write');
    host.submit(writer, 'overlap-3', 'look', { dir: results });
    await host.waitResult('overlap-3', ['awaiting_approval']);
    expect(host.cli(['approvals', 'list']).stdout).toContain(`  ! Works on folders the sandbox can write (what it reads there the sandbox put there; what it writes the sandbox can read or change): ${results}\n`);
    expect(host.cli(['approvals', 'deny', 'overlap-3']).status).toBe(0);
    expect((await host.sentinel(writer)).state).toBe('succeeded');
  });
});

function fail(message: string): never {
  throw new Error(message);
}
