// Anyone who can write the spool can put something of its own at a bound request's results/<id>.json:
// an unsigned forgery, a file signed for another key, an older version the host signed (a replay), a
// change in place with the times set back, a FIFO, a symlink, a folder (one of mode 000 too). The real
// daemon (as an ordinary user where AS_USER allows: a folder of mode 000 is then not its to move without
// making it writable first) writes its own result again and records what it found, while the request
// waits for approval and after it finished, and after a restart for what was planted while it was
// down. A removed result is written again, finished or not. A writer replacing results in a loop gets
// them written again within a budget: repairs counted in the audit log, an id repaired again and again
// left to the sweep (said once), the daemon answering meanwhile, the last forgery still undone.
// A file for an id that is not bound is left alone, and so is a result the command line wrote.
// A finished run's signed result gives the length and SHA-256 of its live log exactly as the host
// left it (the limit line and the leftover-processes line included).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually, type DaemonProcess } from '../helpers/host';
import { PLAIN_ECHO, allowlistYaml } from '../helpers/allowlists';
import { AS_USER, NO_UNPRIVILEGED_USER, outputOf, track, UNREAD_NOTE } from '../helpers/processes';
import { BACKOFF_AFTER } from '../../main/core/spool/resultRepair';
import { openHostDoc, signHostDoc, type HostDocKey } from '../../shared/protocol/hostAuth';
import { decodeSecret } from '../../shared/protocol/sign';
import type { KeyFile, ResultDoc } from '../../shared/protocol/types';

const ALLOWLIST = allowlistYaml(
  PLAIN_ECHO,
  { name: 'deploy', command: ['/bin/echo', 'deployed'], scope: 'write', approval: 'always' },
  { name: 'chatty', command: ['/usr/bin/seq', '1', '5000'], max_output_bytes: 1024 },
  { name: 'leave', command: ['/bin/sh', '-c', 'sleep 300 & echo started'] },
);

let host: TestHost;
let key: KeyFile;
let other: KeyFile;
let daemon: DaemonProcess;
let outsideFile: string;
const asUser = AS_USER !== null;

const signerOf = (k: KeyFile): HostDocKey => ({ keyId: k.key_id, secret: decodeSecret(k.secret) });
const resultFile = (id: string) => path.join(host.spool, 'results', `${id}.json`);

/** The result as the host signed it for `key`, once the name holds a regular file (a FIFO is never read). */
function signedResult(id: string): ResultDoc | undefined {
  const st = lstatSync(resultFile(id), { throwIfNoEntry: false });
  if (!st?.isFile()) return undefined;
  const opened = openHostDoc('result', readFileSync(resultFile(id), 'utf8'), signerOf(key));
  return opened.ok && opened.doc.id === id ? (opened.doc as unknown as ResultDoc) : undefined;
}

/** Puts `content` at the result's name the way a writer of the spool would: written aside, renamed over it. */
function replaceWith(id: string, content: string): void {
  const tmp = path.join(host.spool, 'tmp', `forged-${id}`);
  writeFileSync(tmp, content);
  renameSync(tmp, resultFile(id));
}

/** A result saying the request succeeded, as the agent would want to read it. */
function forgedSuccess(id: string): string {
  const doc = { v: 1, id, op: 'echo', state: 'succeeded', exit_code: 0, stdout: 'forged\n', stderr: '', error: null };
  return JSON.stringify(doc, null, 2) + '\n';
}

function mkfifo(p: string): void {
  const r = spawnSync('mkfifo', [p]);
  if (r.status !== 0) throw new Error(`mkfifo ${p}: ${r.stderr}`);
}

/** What the sandbox puts at a bound result, and what the audit entry must say it found. */
const PLANTS: Record<string, { plant: (id: string) => void; found: RegExp; asUserOnly?: boolean }> = {
  'an unsigned forgery': { plant: (id) => replaceWith(id, forgedSuccess(id)), found: /was an unsigned file \(\d+ bytes\)/ },
  'a result signed for another key': {
    plant: (id) => replaceWith(id, signHostDoc('result', signerOf(other), forgedSuccess(id))),
    found: /was a file signed for another key, [A-Za-z0-9_-]+ \(\d+ bytes\)/,
  },
  'a forgery with a made-up signature for its key': {
    plant: (id) => replaceWith(id, signHostDoc('result', { keyId: key.key_id, secret: Buffer.alloc(32, 7) }, forgedSuccess(id))),
    found: /was a file whose signature does not match \(\d+ bytes\)/,
  },
  'a change in place of the same size, with its times set back': {
    plant: (id) => {
      const file = resultFile(id);
      const before = statSync(file);
      const text = readFileSync(file, 'utf8').replace('"exit_code": 0', '"exit_code": 9');
      const fd = openSync(file, 'r+');
      writeSync(fd, text, 0);
      closeSync(fd);
      utimesSync(file, before.atime, before.mtime);
    },
    found: /was a file whose signature does not match \(\d+ bytes\)/,
  },
  'a FIFO': {
    plant: (id) => {
      const tmp = path.join(host.spool, 'tmp', `fifo-${id}`);
      mkfifo(tmp);
      renameSync(tmp, resultFile(id));
    },
    found: /was a FIFO/,
  },
  'a symlink to a host file': {
    plant: (id) => {
      const tmp = path.join(host.spool, 'tmp', `link-${id}`);
      symlinkSync(outsideFile, tmp);
      renameSync(tmp, resultFile(id));
    },
    found: /was a symbolic link/,
  },
  'a folder': {
    plant: (id) => {
      rmSync(resultFile(id));
      mkdirSync(resultFile(id));
      writeFileSync(path.join(resultFile(id), 'inside'), 'x');
    },
    found: /was a folder/,
  },
  'a folder of mode 000': {
    plant: (id) => {
      rmSync(resultFile(id));
      mkdirSync(resultFile(id));
      chmodSync(resultFile(id), 0o000);
    },
    found: /was a folder/,
    asUserOnly: true,
  },
};
const KINDS = Object.keys(PLANTS).filter((k) => asUser || !PLANTS[k]!.asUserOnly);

/** The result_repaired entries of `id`, oldest first (the audit log lists the newest first). */
const repairsOf = (id: string) => host.audit('', 'result_repaired').filter((e) => e.request_id === id).reverse();

/** Waits until the host has written `id`'s result again and recorded it `times` times in all. */
async function repaired(id: string, times = 1): Promise<{ doc: ResultDoc; message: string }> {
  const entry = await eventually(`result_repaired #${times} for ${id}`, () => repairsOf(id)[times - 1]);
  const doc = await eventually(`${id}'s result to be the host's again`, () => signedResult(id));
  return { doc, message: entry.message };
}

beforeAll(async () => {
  host = new TestHost(ALLOWLIST);
  key = host.createKey('sandbox', 'write');
  other = host.createKey('other sandbox', 'read');
  outsideFile = path.join(host.root, 'precious.txt');
  writeFileSync(outsideFile, 'the host user\'s own file\n');
  daemon = await host.startDaemon({}, { asUser });
});

afterAll(async () => {
  await host?.cleanup();
});

if (!asUser) console.warn(`forgedResults: the daemon runs with root's powers and the mode-000 folder is skipped: ${NO_UNPRIVILEGED_USER}`);

describe('a bound request whose result file is not what the host wrote', () => {
  it.each(KINDS)('after it finished: %s is replaced by the host\'s signed result and audited', async (kind) => {
    const id = `finished-${KINDS.indexOf(kind)}`;
    host.submit(key, id, 'echo', { msg: 'real' });
    await eventually(`${id} to succeed`, () => (signedResult(id)?.state === 'succeeded' ? true : undefined));
    PLANTS[kind]!.plant(id);
    const { doc, message } = await repaired(id);
    expect(doc).toMatchObject({ id, state: 'succeeded', exit_code: 0, stdout: 'real\n' });
    expect(message).toMatch(PLANTS[kind]!.found);
    expect(message).not.toContain('forged');
    expect(readFileSync(outsideFile, 'utf8')).toBe('the host user\'s own file\n');
  });

  it('while it awaits approval, and after it finished: a forged success, then the replayed approval-time result', async () => {
    const id = 'awaiting-1';
    host.submit(key, id, 'deploy');
    await eventually(`${id} to await approval`, () => (signedResult(id)?.state === 'awaiting_approval' ? true : undefined));
    const asked = readFileSync(resultFile(id), 'utf8');

    replaceWith(id, forgedSuccess(id));
    expect((await repaired(id)).doc).toMatchObject({ state: 'awaiting_approval' });

    expect(host.cli(['approvals', 'approve', id]).status).toBe(0);
    await eventually(`${id} to succeed`, () => (signedResult(id)?.state === 'succeeded' ? true : undefined));
    replaceWith(id, asked); // a version the host really signed for this key, put back
    const second = await repaired(id, 2);
    expect(second.doc).toMatchObject({ state: 'succeeded', stdout: 'deployed\n' });
    expect(second.message).toMatch(/was another version the host signed for this key \(a replay\)/);
  });

  it('a removed result is written again, of a request that has not finished and of a finished one (retention would keep it)', async () => {
    host.submit(key, 'removed-waiting', 'deploy');
    host.submit(key, 'removed-done', 'echo', { msg: 'done' });
    await eventually('both results', () => (signedResult('removed-waiting')?.state === 'awaiting_approval' && signedResult('removed-done')?.state === 'succeeded' ? true : undefined));
    rmSync(resultFile('removed-done'));
    rmSync(resultFile('removed-waiting'));
    expect((await repaired('removed-waiting')).message).toMatch(/was removed/);
    const done = await repaired('removed-done');
    expect(done.message).toBe('results/removed-done.json was removed; the host wrote its result again');
    expect(done.doc).toMatchObject({ state: 'succeeded', stdout: 'done\n' });
  });

  it('a file planted for an id that is not bound is left alone, and so is a result the command line wrote', async () => {
    host.submit(key, 'denied-by-cli', 'deploy');
    await eventually('denied-by-cli to await approval', () => (signedResult('denied-by-cli')?.state === 'awaiting_approval' ? true : undefined));
    const planted = forgedSuccess('never-submitted');
    writeFileSync(resultFile('never-submitted'), planted);
    expect(host.cli(['approvals', 'deny', 'denied-by-cli', '--reason', 'no']).status).toBe(0);
    // Events are looked at in the order they came: once a forgery planted after both is repaired,
    // both were looked at.
    host.submit(key, 'marker', 'echo', { msg: 'marker' });
    await eventually('marker to succeed', () => (signedResult('marker')?.state === 'succeeded' ? true : undefined));
    replaceWith('marker', forgedSuccess('marker'));
    await repaired('marker');
    expect(readFileSync(resultFile('never-submitted'), 'utf8')).toBe(planted);
    expect(repairsOf('never-submitted')).toEqual([]);
    expect(signedResult('denied-by-cli')).toMatchObject({ state: 'denied' });
    expect(repairsOf('denied-by-cli')).toEqual([]);
  });

  it('after a restart, a forgery planted while the daemon was stopped is found by comparing the files once', async () => {
    host.submit(key, 'before-restart', 'echo', { msg: 'before' });
    host.submit(key, 'untouched', 'echo', { msg: 'untouched' });
    await eventually('both to succeed', () => (signedResult('before-restart')?.state === 'succeeded' && signedResult('untouched')?.state === 'succeeded' ? true : undefined));
    await daemon.stop();
    const untouched = readFileSync(resultFile('untouched'), 'utf8');
    const mtime = statSync(resultFile('untouched')).mtimeMs;
    replaceWith('before-restart', forgedSuccess('before-restart'));
    daemon = await host.startDaemon({}, { asUser });
    expect((await repaired('before-restart')).doc).toMatchObject({ state: 'succeeded', stdout: 'before\n' });
    // The host's own files are compared, not rewritten.
    expect(readFileSync(resultFile('untouched'), 'utf8')).toBe(untouched);
    expect(statSync(resultFile('untouched')).mtimeMs).toBe(mtime);
    expect(repairsOf('untouched')).toEqual([]);
  });
});

describe('a writer replacing results in a loop', () => {
  const IDS = Array.from({ length: 20 }, (_, i) => `flood-${i}`);
  type Details = { seen_by?: string; backed_off?: boolean | string[]; by_event?: string[] };
  const entries = () => host.service((s) => s.audit.search({ kind: 'result_repaired', limit: 10_000 })).filter((e) => e.request_id === null || IDS.includes(e.request_id));
  const details = (e: { details: Record<string, unknown> | null }) => (e.details ?? {}) as Details;
  /** Ids whose back-off the audit log says, once per saying (an entry of its own, or in a counted one). */
  const backOffsSaid = () => entries().flatMap((e) => (e.request_id ? (details(e).backed_off === true ? [e.request_id] : []) : ((details(e).backed_off as string[]) ?? []).filter((id) => IDS.includes(id))));
  /** Repairs made on a file event, by id: told one by one or counted. */
  const byEvent = () => {
    const n: Record<string, number> = {};
    for (const e of entries()) for (const id of e.request_id ? (details(e).seen_by === 'event' ? [e.request_id] : []) : (details(e).by_event ?? [])) n[id] = (n[id] ?? 0) + 1;
    return n;
  };

  it('gets each written again a few times, counted, then only by the sweep (said once); the daemon answers meanwhile and the last forgery is undone', async () => {
    for (const id of IDS) host.submit(key, id, 'echo', { msg: 'real' });
    await eventually('all to succeed', () => (IDS.every((id) => signedResult(id)?.state === 'succeeded') ? true : undefined));
    // Every id replaced over and over: a 2-byte file, or a sparse 64 MiB one (of which the host reads 4 KiB).
    const attacker = track(
      spawn(
        process.execPath,
        [
          '-e',
          `const fs = require('fs'), path = require('path');
           const [results, tmp, ...ids] = process.argv.slice(1);
           for (let round = 1; ; round++) {
             ids.forEach((id, i) => {
               const t = path.join(tmp, 'flood-' + id);
               const fd = fs.openSync(t, 'w');
               fs.writeSync(fd, '{}');
               if (i % 2) fs.ftruncateSync(fd, 64 * 1024 * 1024);
               fs.closeSync(fd);
               fs.renameSync(t, path.join(results, id + '.json'));
             });
             if (round % 20 === 0) process.stdout.write(round + '\\n');
           }`,
          path.join(host.spool, 'results'),
          path.join(host.spool, 'tmp'),
          ...IDS,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    const done = outputOf(attacker);
    let rounds = 0;
    attacker.stdout!.on('data', (c: Buffer) => (rounds = Math.max(rounds, ...c.toString().trim().split('\n').map(Number))));
    try {
      await eventually('every id to be left to the sweep', () => (IDS.every((id) => backOffsSaid().includes(id)) ? true : undefined), 60_000);
      expect(entries().some((e) => e.request_id === null && /^\d+ more result files were not the host's and were written again/.test(e.message))).toBe(true);
      // The daemon serves while the writer goes on; and many more rounds of forgeries get no more
      // repairs on file events, nor a second word about the back-off.
      const from = rounds;
      expect(await host.sentinel(key)).toMatchObject({ state: 'succeeded' });
      await eventually('200 more rounds of forgeries', () => (rounds >= from + 200 ? true : undefined), 60_000);
      expect(attacker.exitCode).toBeNull();
      for (const [id, n] of Object.entries(byEvent())) expect(n, id).toBeLessThanOrEqual(BACKOFF_AFTER);
      expect(backOffsSaid().sort()).toEqual([...IDS].sort());
    } finally {
      attacker.kill('SIGTERM');
      await done;
    }
    // The writer stopped: what it left last is undone by the sweep (within a minute).
    for (const id of IDS) {
      const doc = await eventually(`${id}'s result to be the host's again`, () => signedResult(id), 150_000);
      expect(doc).toMatchObject({ state: 'succeeded', stdout: 'real\n' });
    }
    expect(await host.sentinel(key)).toMatchObject({ state: 'succeeded' });
  }, 300_000);
});

describe("the live log's length and hash in the signed result", () => {
  const digestOf = (id: string) => {
    const bytes = readFileSync(path.join(host.spool, 'results', `${id}.log`));
    return { log_bytes: bytes.length, log_sha256: createHash('sha256').update(bytes).digest('hex') };
  };

  it('equal the bytes of results/<id>.log: a plain run', async () => {
    host.submit(key, 'log-plain', 'echo', { msg: 'logged' });
    const doc = await eventually('log-plain to succeed', () => (signedResult('log-plain')?.state === 'succeeded' ? signedResult('log-plain') : undefined));
    expect(doc).toMatchObject(digestOf('log-plain'));
    expect(doc.log_bytes).toBe('logged\n'.length);
  });

  it('equal the bytes of results/<id>.log with the output limit reached (the limit line included)', async () => {
    host.submit(key, 'log-limit', 'chatty');
    const doc = await eventually('log-limit to succeed', () => (signedResult('log-limit')?.state === 'succeeded' ? signedResult('log-limit') : undefined));
    expect(host.logOf('log-limit')).toContain('[dumbwaiter: output limit of 1024 bytes reached; the rest is not logged]');
    expect(doc).toMatchObject(digestOf('log-limit'));
  });

  it('equal the bytes of results/<id>.log with the leftover-processes line', async () => {
    host.submit(key, 'log-left', 'leave');
    const doc = await eventually('log-left to succeed', () => (signedResult('log-left')?.state === 'succeeded' ? signedResult('log-left') : undefined), 30_000);
    expect(host.logOf('log-left')).toMatch(new RegExp(`^started\\n\\[dumbwaiter: [12] process(es)? left behind by the run (was|were) ended${UNREAD_NOTE}\\]\\n$`));
    expect(doc).toMatchObject(digestOf('log-left'));
  });

  it('are absent before the run finished', async () => {
    host.submit(key, 'log-waiting', 'deploy');
    const doc = await eventually('log-waiting to await approval', () => signedResult('log-waiting'));
    expect(doc.log_bytes).toBeUndefined();
    expect(doc.log_sha256).toBeUndefined();
  });
});

it('the daemon is alive and answers a valid request after all of it', async () => {
  expect(daemon.proc.exitCode).toBeNull();
  host.submit(key, 'after-all', 'echo', { msg: 'still here' });
  expect(await eventually('after-all', () => (signedResult('after-all')?.state === 'succeeded' ? signedResult('after-all') : undefined))).toMatchObject({ stdout: 'still here\n' });
  expect(repairsOf('after-all')).toEqual([]);
});
