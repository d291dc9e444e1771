// The `dumbwaiter` command line: init, unsafe spools, keys, status and audit, errors and exit codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { CLI, TestHost } from '../helpers/host';

let host: TestHost;
let scratch: string;

function dw(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  host = new TestHost();
  scratch = mkdtempSync(path.join(os.tmpdir(), 'dw-cli-'));
});

afterAll(async () => {
  await host.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

const mode = (p: string) => statSync(p).mode & 0o777;

/** Regular files below `dir` whose bytes contain `needle` (links are not followed). */
function filesContaining(dir: string, needle: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((rel) => path.join(dir, rel))
    .filter((p) => lstatSync(p).isFile() && readFileSync(p).includes(needle));
}

describe('dumbwaiter init', () => {
  it('creates a private home and a 0700 spool, and is harmless the second time', () => {
    const home = path.join(scratch, 'h1');
    const spool = path.join(scratch, 's1');
    const first = dw(['init', '--home', home, '--spool', spool]);
    expect(first.status).toBe(0);
    expect(mode(home)).toBe(0o700);
    expect(mode(spool)).toBe(0o700);
    for (const d of ['tmp', 'queue', 'claimed', 'results', 'inbox']) expect(mode(path.join(spool, d))).toBe(0o700);
    for (const client of ['dw.cjs', 'dw.py']) expect(statSync(path.join(spool, 'bin', client)).size).toBeGreaterThan(1000);
    expect(mode(path.join(home, 'ledger.sqlite'))).toBe(0o600);
    const allowlist = readFileSync(path.join(home, 'allowlist.yaml'), 'utf8');
    expect(allowlist).toMatch(/^# Dumbwaiter allowlist/);
    writeFileSync(path.join(home, 'allowlist.yaml'), allowlist + '# my own edit\n');
    const second = dw(['init', '--home', home, '--spool', spool]);
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('already in place');
    expect(readFileSync(path.join(home, 'allowlist.yaml'), 'utf8')).toContain('# my own edit');
  });

  it('prints next steps that work as typed: npx where dumbwaiter is not on PATH, the folders given, the key outside the current folder', () => {
    const home = path.join(scratch, 'h next');
    const spool = path.join(scratch, 's-next');
    const r = dw(['init', '--home', home, '--spool', spool], { PATH: path.dirname(process.execPath), HOME: scratch });
    expect(r.status).toBe(0);
    const where = ` --home '${home}' --spool ${spool}`;
    expect(r.stdout).toContain(`npx dumbwaiter keys create my-sandbox --out ${path.join(scratch, 'my-sandbox.key.json')}${where}\n`);
    expect(r.stdout).toContain(`npx dumbwaiter daemon${where}\n`);
  });

  it('takes the home and spool from the environment', () => {
    const home = path.join(scratch, 'h-env');
    const spool = path.join(scratch, 's-env');
    expect(dw(['init'], { DUMBWAITER_HOME: home, DUMBWAITER_SPOOL: spool }).status).toBe(0);
    const st = dw(['status', '--json'], { DUMBWAITER_HOME: home });
    expect(JSON.parse(st.stdout).spool).toBe(spool);
  });

  it.each([
    ['a symlink', (p: string) => {
      mkdirSync(p + '-real', { mode: 0o700 });
      symlinkSync(p + '-real', p);
    }, 'symbolic link'],
    ['world-writable', (p: string) => {
      mkdirSync(p);
      chmodSync(p, 0o777);
    }, 'chmod 700'],
    ['a file', (p: string) => writeFileSync(p, 'x'), 'not a folder'],
  ])('refuses a spool that is %s, saying how to fix it', (_what, make, hint) => {
    const spool = path.join(scratch, `bad-${Math.random().toString(36).slice(2)}`);
    make(spool);
    const r = dw(['init', '--home', path.join(scratch, `h-${path.basename(spool)}`), '--spool', spool]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(hint);
  });

  it('the daemon refuses a spool that became unsafe after init', () => {
    chmodSync(host.spool, 0o777);
    try {
      const r = host.cli(['daemon']);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('can be written by other users');
    } finally {
      chmodSync(host.spool, 0o700);
    }
  });
});

describe('dumbwaiter keys', () => {
  it('creates a key file readable by its owner only, and never lists secrets', () => {
    const out = path.join(scratch, 'k1.json');
    const r = host.cli(['keys', 'create', 'ci-sandbox', '--scope', 'write', '--ops', 'a,b', '--out', out]);
    expect(r.status).toBe(0);
    // The exact lines to paste into the sandbox.
    expect(r.stdout).toContain(`export DUMBWAITER_SPOOL='${host.spool}'`);
    expect(r.stdout).toContain(`export DUMBWAITER_KEY_FILE='${out}'`);
    expect(r.stdout).toContain('node "$DUMBWAITER_SPOOL/bin/dw.cjs" doctor');
    expect(mode(out)).toBe(0o600);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    expect(file).toMatchObject({ v: 1 });
    expect(file.key_id).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(Buffer.from(file.secret, 'base64url')).toHaveLength(32);
    const list = host.cli(['keys', 'list', '--json']);
    expect(list.stdout).not.toContain(file.secret);
    const keys = JSON.parse(list.stdout);
    expect(keys.find((k: { key_id: string }) => k.key_id === file.key_id)).toMatchObject({ name: 'ci-sandbox', scope: 'write', ops: ['a', 'b'], revoked_at: null });
    // The secret is nowhere in the spool.
    expect(filesContaining(host.spool, file.secret)).toEqual([]);
    // An existing file is not overwritten without --force.
    const again = host.cli(['keys', 'create', 'other', '--out', out]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('--force');
  });

  it('revokes and rotates', () => {
    const out = path.join(scratch, 'k2.json');
    host.cli(['keys', 'create', 'rot', '--out', out]);
    const old = JSON.parse(readFileSync(out, 'utf8'));
    const out2 = path.join(scratch, 'k2-new.json');
    const rot = host.cli(['keys', 'rotate', old.key_id, '--out', out2, '--json']);
    expect(rot.status).toBe(0);
    const fresh = JSON.parse(readFileSync(out2, 'utf8'));
    expect(fresh.key_id).not.toBe(old.key_id);
    const keys = JSON.parse(host.cli(['keys', 'list', '--json']).stdout) as { key_id: string; revoked_at: string | null; rotated_to: string | null; name: string }[];
    expect(keys.find((k) => k.key_id === old.key_id)).toMatchObject({ rotated_to: fresh.key_id });
    expect(keys.find((k) => k.key_id === old.key_id)?.revoked_at).not.toBeNull();
    expect(keys.find((k) => k.key_id === fresh.key_id)).toMatchObject({ name: 'rot', revoked_at: null });
    const rev = host.cli(['keys', 'revoke', fresh.key_id]);
    expect(rev.status).toBe(0);
    expect(host.cli(['keys', 'revoke', fresh.key_id]).stdout).toContain('already revoked');
    expect(host.cli(['keys', 'revoke', 'k_nope']).status).toBe(1);
    expect(host.audit('', 'key_rotated')).toHaveLength(1);
  });

  it('refuses a bad scope or name with a clear error', () => {
    const r = host.cli(['keys', 'create', 'x', '--scope', 'admin', '--out', path.join(scratch, 'k3.json')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('scope must be read or write');
  });
});

describe('status, audit and errors', () => {
  it('status --json reports the daemon, allowlist, requests and keys', () => {
    const s = JSON.parse(host.cli(['status', '--json']).stdout);
    expect(s).toMatchObject({ home: host.home, spool: host.spool, daemon: { running: false }, allowlist: { ok: true } });
    expect(s.keys.active).toBeGreaterThanOrEqual(1);
  });

  it('audit searches with --json, by word and by kind', () => {
    const rows = JSON.parse(host.cli(['audit', 'ci-sandbox', '--json']).stdout);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows[0].kind).toBe('key_created');
    expect(JSON.parse(host.cli(['audit', '--kind', 'key_revoked', '--json']).stdout)).toHaveLength(1);
    // FTS syntax in the query is taken literally, never an error.
    const odd = host.cli(['audit', 'NEAR("x" AND', '--json']);
    expect(odd.status).toBe(0);
    expect(JSON.parse(odd.stdout)).toEqual([]);
  });

  it('status counts every state the ledger has: a denied and a cancelled request show as such', async () => {
    const h = new TestHost('version: 1\noperations:\n  - name: ask\n    description: asks a human\n    command: [echo, hi]\n    scope: write\n');
    try {
      const key = h.createKey('sandbox');
      const daemon = await h.startDaemon();
      for (const id of ['to-deny', 'to-cancel']) h.submit(key, id, 'ask');
      for (const id of ['to-deny', 'to-cancel']) await h.waitResult(id, ['awaiting_approval']);
      expect(h.cli(['approvals', 'deny', 'to-deny']).status).toBe(0);
      expect(h.cli(['cancel', 'to-cancel']).status).toBe(0);
      await h.waitResult('to-deny', ['denied']);
      await h.waitResult('to-cancel', ['cancelled']);
      const line = h.cli(['status']).stdout.split('\n').find((l) => l.startsWith('Requests:'));
      expect(line).toMatch(/\bdenied 1\b/);
      expect(line).toMatch(/\bcancelled 1\b/);
      expect(line).toMatch(/\bawaiting_approval 0\b/);
      await daemon.stop();
    } finally {
      await h.cleanup();
    }
  });

  it('exits 2 with usage for an unknown command or option, 1 with a message for a missing home', () => {
    expect(dw(['frobnicate']).status).toBe(2);
    expect(host.cli(['status', '--bogus']).status).toBe(2);
    const r = dw(['status', '--home', path.join(scratch, 'nowhere')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('dumbwaiter init');
  });
});

describe('options anywhere, and help for every command', () => {
  it('takes --home before the command, between a command and its subcommand, and after', () => {
    const home = path.join(scratch, 'anywhere');
    expect(dw(['--home', home, 'init', '--spool', path.join(scratch, 'anywhere-spool')]).status).toBe(0);
    const keyFile = path.join(scratch, 'anywhere.key.json');
    expect(dw(['keys', '--home', home, 'create', 'k1', '--out', keyFile]).status).toBe(0);
    for (const args of [['--home', home, 'keys', 'list', '--json'], ['keys', '--home', home, 'list', '--json'], ['keys', 'list', '--json', '--home', home], ['--json', 'keys', '--home', home, 'list']]) {
      const r = dw(args, { DUMBWAITER_HOME: path.join(scratch, 'not-this-home') });
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect((JSON.parse(r.stdout) as { name: string }[]).map((k) => k.name)).toEqual(['k1']);
    }
  });

  it('prints the usage of each command and subcommand for --help, -h and help CMD, never the whole list', () => {
    const cases: [string[], RegExp][] = [
      [['init', '--help'], /^ {2}init \[--spool DIR/m],
      [['daemon', '-h'], /^ {2}daemon /m],
      [['keys', 'create', '--help'], /^ {2}keys create NAME --out FILE/m],
      [['keys', '--help'], /^ {2}keys list \| keys revoke/m],
      [['help', 'approvals', 'approve'], /^ {2}approvals approve ID \[--for DURATION/m],
      [['spools', '--home', '/nowhere', 'check', '--help'], /spools check NAME/],
      [['resume', '--help'], /^ {2}pause \| resume/m],
      [['config', '--help'], /^ {2}config get/m],
      [['resolve', '--help'], /^ {2}resolve ID --check/m],
      [['status', '--help'], /^ {2}status /m],
      [['audit', '--help'], /^ {2}audit \[QUERY\]/m],
      [['cancel', '--help'], /^ {2}cancel ID/m],
      [['service', '--help'], /^ {2}service install/m],
      [['requests', '--help'], /^ {2}requests /m],
      [['show', '--help'], /^ {2}show ID/m],
      [['logs', '--help'], /^ {2}logs ID/m],
      [['approvals', 'watch', '--help'], /^ {2}approvals watch/m],
    ];
    for (const [args, usage] of cases) {
      const r = dw(args);
      expect(r.status, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toMatch(usage);
      expect(r.stdout, args.join(' ')).toContain('Every command takes --home DIR');
      expect(r.stdout, args.join(' ')).not.toContain('Usage: dumbwaiter COMMAND'); // not the whole list
      expect(r.stdout.split('\n').filter((l) => /^ {2}\S/.test(l)).length, args.join(' ')).toBeLessThanOrEqual(3);
    }
  });

  it('says what is wrong, in one line and exit 2, for an option no command takes before its name, and for no command', () => {
    const unknown = dw(['--scope', 'write', 'keys', 'list']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe('dumbwaiter: unknown option "--scope" before the command');
    const none = dw(['--home', path.join(scratch, 'h1')]);
    expect(none.status).toBe(2);
    expect(none.stdout).toContain('Usage: dumbwaiter COMMAND [options]');
  });
});

describe('status says how runs start', () => {
  it('posix_spawn where the native addon was built at install, else Node spawn, with why, in text and --json', () => {
    const built = existsSync(path.join(import.meta.dirname, '..', '..', 'native', 'build', 'Release', 'dw_spawn.node')) && process.platform === 'linux';
    const json = JSON.parse(host.cli(['status', '--json']).stdout) as { spawning: { kind: string; why: string } };
    expect(json.spawning.kind).toBe(built ? 'posix_spawn' : 'node');
    expect(host.cli(['status']).stdout).toContain(`Spawning:  ${json.spawning.why}`);
  });
});
