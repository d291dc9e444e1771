// The README's quick start: a request from a plain shell script (sh + openssl) to a result file, which
// it believes only when the host signed it for its key (docs/vectors-host-v1.json).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestHost, eventually } from '../helpers/host';
import { track } from '../helpers/processes';
import { EXAMPLE_ALLOWLIST } from '../../main/core/allowlist/example';
import { signHostDoc } from '../../shared/protocol/hostAuth';
import { decodeSecret } from '../../shared/protocol/sign';
import type { KeyFile } from '../../shared/protocol/types';

const SCRIPT = path.resolve(import.meta.dirname, '../../examples/submit.sh');
const HOST_VECTORS = path.resolve(import.meta.dirname, '../../docs/vectors-host-v1.json');
let host: TestHost;
let key: KeyFile;
let keyFile: string;

const sh = (args: string[]) => spawnSync('sh', [SCRIPT, ...args], { encoding: 'utf8', timeout: 60_000 });

/** Puts a file at results/<id>.json the way any writer of the spool can: a rename over it. */
function plantResult(id: string, text: string): void {
  const tmp = path.join(host.spool, 'tmp', `forged-${id}`);
  writeFileSync(tmp, text);
  renameSync(tmp, path.join(host.spool, 'results', `${id}.json`));
}

beforeAll(async () => {
  host = new TestHost(EXAMPLE_ALLOWLIST);
  keyFile = path.join(host.root, 'key.json');
  key = host.createKey('shell', 'read');
  writeFileSync(keyFile, JSON.stringify(key));
  await host.startDaemon();
});

afterAll(async () => {
  await host.cleanup();
});

describe('examples/submit.sh --verify against the host vectors', () => {
  const vectors = JSON.parse(readFileSync(HOST_VECTORS, 'utf8')) as {
    key_file: KeyFile;
    signed: { about: string; kind: string; text: string; file: string }[];
    refused: { about: string; kind: string; file: string; why: string }[];
  };
  let vectorKey: string;
  const verify = (kind: string, file: string) => {
    const f = path.join(host.root, 'vector.json');
    writeFileSync(f, file);
    return sh(['--verify', vectorKey, kind, f]);
  };
  beforeAll(() => {
    vectorKey = path.join(host.root, 'vector-key.json');
    writeFileSync(vectorKey, JSON.stringify(vectors.key_file));
  });

  it.each(vectors.signed)('verifies $about and prints the document behind the prefix', (v) => {
    const r = verify(v.kind, v.file);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(v.text);
  });

  it.each(vectors.refused)('refuses $about ($why)', (v) => {
    const r = verify(v.kind, v.file);
    expect(r.status).toBe(1);
    expect(r.stdout.trim()).toBe(v.why);
  });
});

describe('examples/submit.sh against the example allowlist', () => {
  it('gets a request from a shell script to a result', () => {
    const r = sh([keyFile, host.spool, 'echo', '{"msg":"hello from sh"}', 'sh-1']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: 'sh-1', state: 'succeeded', stdout: 'hello from sh\n' });
  });

  it('exits 1 with the result when the request is refused', () => {
    const r = sh([keyFile, host.spool, 'echo', '{"msg":"x","extra":1}', 'sh-2']);
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout).error.code).toBe('bad_args');
  });

  it('never reports a forged result planted at the name (unsigned, or signed with another key of the host): the real one', async () => {
    const forged = (id: string) => JSON.stringify({ v: 1, id, op: 'echo', state: 'succeeded', exit_code: 0, stdout: 'FORGED\n', stderr: '', error: null }, null, 2) + '\n';
    const other = host.createKey('other reader', 'read');
    plantResult('sh-forged-1', forged('sh-forged-1'));
    const a = sh([keyFile, host.spool, 'echo', '{"msg":"real one"}', 'sh-forged-1']);
    expect(a.status).toBe(0);
    expect(JSON.parse(a.stdout)).toMatchObject({ id: 'sh-forged-1', state: 'succeeded', stdout: 'real one\n' });
    plantResult('sh-forged-2', signHostDoc('result', { keyId: other.key_id, secret: decodeSecret(other.secret) }, forged('sh-forged-2')));
    const b = sh([keyFile, host.spool, 'echo', '{"msg":"real two"}', 'sh-forged-2']);
    expect(b.status).toBe(0);
    expect(JSON.parse(b.stdout)).toMatchObject({ id: 'sh-forged-2', state: 'succeeded', stdout: 'real two\n' });
    expect(a.stdout + b.stdout).not.toContain('FORGED');
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('exits 87 with the host message when the id is already bound to another request, never the old result', async () => {
    expect(sh([keyFile, host.spool, 'echo', '{"msg":"first"}', 'sh-reused']).status).toBe(0);
    const r = sh([keyFile, host.spool, 'echo', '{"msg":"second"}', 'sh-reused']);
    expect(r.status).toBe(87);
    expect(r.stderr).toContain('already bound to your earlier request');
    expect(r.stdout).toBe('');
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('reads at most 8 MiB of a huge (sparse) file planted in inbox/, says once that it ignored it, and gets the real result', async () => {
    const planted = path.join(host.spool, 'inbox', 'huge.json');
    const tmp = path.join(host.spool, 'tmp', 'huge.json');
    writeFileSync(tmp, '');
    truncateSync(tmp, 1024 ** 3); // 1 GiB: a script that copied it whole would still not fill the disk
    renameSync(tmp, planted);
    try {
      const r = sh([keyFile, host.spool, 'echo', '{"msg":"past a huge file"}', 'sh-huge-1']);
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ id: 'sh-huge-1', state: 'succeeded', stdout: 'past a huge file\n' });
      expect(r.stderr.split('ignored inbox/huge.json: it is larger than 8388608 bytes\n').length).toBe(2);
    } finally {
      rmSync(planted);
    }
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('a request file planted in claimed/ under its id does not make a finished request look pending: the host answer, exit 0', async () => {
    const planted = path.join(host.spool, 'claimed', 'zz');
    mkdirSync(planted, { recursive: true });
    writeFileSync(path.join(planted, 'sh-claimed-1.json'), '{}');
    try {
      const r = sh([keyFile, host.spool, 'echo', '{"msg":"past a planted claim"}', 'sh-claimed-1']);
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ id: 'sh-claimed-1', state: 'succeeded', stdout: 'past a planted claim\n' });
    } finally {
      rmSync(planted, { recursive: true, force: true });
    }
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });

  it('links planted at the names it would write in tmp/ (the request, its copy of what it reads) are never written through; nothing is left behind', async () => {
    const victim = path.join(host.root, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const privTmp = mkdtempSync(path.join(host.root, 'sh-tmpdir-'));
    const id = 'sh-links-1';
    // Stopped before it starts, so that its pid (the $$ of the script once exec'd) is known while the
    // links are planted at every name derived from it.
    const proc = track(
      spawn('sh', ['-c', 'kill -STOP $$; exec sh "$0" "$@"', SCRIPT, keyFile, host.spool, 'echo', '{"msg":"not through a link"}', id], {
        env: { ...process.env, TMPDIR: privTmp },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    proc.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    const done = new Promise<number | null>((resolve) => proc.on('close', (status) => resolve(status)));
    const pid = proc.pid!;
    await eventually('the script stopped before it starts', () => (/^\d+ \(.*\) T /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')) ? true : undefined));
    const links = [`${id}.${pid}`, `.${id}.${pid}.read`].map((n) => path.join(host.spool, 'tmp', n));
    for (const l of links) symlinkSync(victim, l);
    try {
      process.kill(pid, 'SIGCONT');
      expect(await done).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ id, state: 'succeeded', stdout: 'not through a link\n' });
      expect(readFileSync(victim, 'utf8')).toBe('precious\n');
      expect(readdirSync(privTmp)).toEqual([]); // its private folder (mktemp -d) went with it
      expect(readdirSync(path.join(host.spool, 'tmp')).filter((n) => n.startsWith(id))).toEqual([`${id}.${pid}`]); // the planted link only
    } finally {
      for (const l of links) rmSync(l, { force: true });
    }
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });
});
