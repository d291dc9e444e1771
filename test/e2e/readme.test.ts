// The README's Quick start, run as written on a fresh machine's home: each line of its sh block (but
// `npm install`, which made this checkout's node_modules) in one sh, with HOME a new empty folder (no
// ~/Documents, no ~/.config) and no Dumbwaiter variables, so `init` makes the home and the spool where
// the README says, the `daemon &` line starts the host, and examples/submit.sh prints the result the
// host signed. Then the default allowlist's list-documents, commented out on a machine without
// ~/Documents, works once the folder is made and the entry uncommented as the file says.
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { alive, stopGroups, track, trackGroup } from '../helpers/processes';
import { eventually } from '../helpers/host';
import { APP_NAME, homePaths } from '../../main/core/home';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const HOME = mkdtempSync(path.join(os.tmpdir(), 'dw-fresh-home-'));
const home = homePaths(process.platform === 'darwin' ? path.join(HOME, 'Library', 'Application Support', APP_NAME) : path.join(HOME, '.config', APP_NAME));
const spool = path.join(HOME, APP_NAME, 'spool');

afterAll(() => {
  stopGroups();
  rmSync(HOME, { recursive: true, force: true });
});

/** The environment of a fresh login: this one's, but HOME the new folder and nothing of Dumbwaiter's;
 *  npm neither checks for its own update nor reaches the registry. */
function freshEnv(): NodeJS.ProcessEnv {
  const { DUMBWAITER_HOME: _h, DUMBWAITER_SPOOL: _s, XDG_CONFIG_HOME: _x, ...env } = process.env;
  return { ...env, HOME, npm_config_update_notifier: 'false', npm_config_offline: 'true' };
}

/** Runs `script` in sh from the checkout, in a process group of its own (tracked: what it leaves
 *  running, the daemon, is stopped at the end whatever happens). Its output goes to files: the daemon
 *  it leaves running keeps them open, so pipes would never close. */
let runs = 0;
async function sh(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [out, err] = ['out', 'err'].map((k) => path.join(HOME, `.run-${++runs}.${k}`)) as [string, string];
  const fds = [openSync(out, 'w'), openSync(err, 'w')];
  try {
    const p = track(spawn('sh', ['-c', script], { cwd: ROOT, env: freshEnv(), detached: true, stdio: ['ignore', fds[0]!, fds[1]!] }));
    trackGroup(p.pid!);
    const code = await new Promise<number | null>((resolve) => p.on('exit', resolve));
    return { code, stdout: readFileSync(out, 'utf8'), stderr: readFileSync(err, 'utf8') };
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

/** The lines of the Quick start's sh block. */
function quickStart(): string[] {
  const at = README.indexOf('\n## Quick start');
  expect(at).toBeGreaterThan(0);
  const block = /```sh\n([^]*?)```/.exec(README.slice(at))?.[1];
  expect(block).toBeDefined();
  return block!.trimEnd().split('\n');
}

describe.runIf(process.platform !== 'win32')('the README on a fresh home', () => {
  it('the Quick start, as written: init, a key, the daemon in the background, and a request answered through sh + openssl', async () => {
    const lines = quickStart();
    expect(lines[0]).toMatch(/^npm install\b/);
    expect(existsSync(path.join(HOME, 'Documents'))).toBe(false);
    const r = await sh(lines.slice(1).join('\n'));
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    // The result the host signed: the argument reached echo as one argv element, never a shell.
    expect(r.stdout).toMatch(/"state": *"succeeded"/);
    expect(r.stdout).toContain('"stdout": "hello; rm -rf ~\\n"');
    // Where the README says the home and the spool are; the key file outside the checkout.
    expect(existsSync(home.allowlist)).toBe(true);
    expect(existsSync(path.join(spool, 'queue'))).toBe(true);
    expect(existsSync(path.join(HOME, 'my-sandbox.key.json'))).toBe(true);
    // No ~/Documents here: the example offers only what works.
    const catalog = JSON.parse(readFileSync(path.join(spool, 'catalog.json'), 'utf8')) as { operations: { name: string }[] };
    expect(catalog.operations.map((o) => o.name)).toEqual(['echo']);
  });

  it('list-documents works once ~/Documents is made and its entry uncommented, as the allowlist says', async () => {
    mkdirSync(path.join(HOME, 'Documents'));
    writeFileSync(path.join(HOME, 'Documents', 'notes.txt'), 'mine\n');
    const text = readFileSync(home.allowlist, 'utf8').split('\n');
    const from = text.findIndex((l) => l.startsWith('  # This machine had no ~/Documents'));
    const entry = text.findIndex((l, i) => i > from && l === '  # - name: list-documents');
    const end = text.findIndex((l, i) => i > entry && l === '');
    expect(from).toBeGreaterThan(0);
    const edited = [...text.slice(0, entry), ...text.slice(entry, end).map((l) => `  ${l.slice('  # '.length)}`), ...text.slice(end)];
    writeFileSync(`${home.allowlist}.new`, edited.join('\n'));
    renameSync(`${home.allowlist}.new`, home.allowlist); // whole, as an editor saves it
    // The daemon reloads it and offers it in the catalog.
    await eventually('list-documents in the catalog', () => (readFileSync(path.join(spool, 'catalog.json'), 'utf8').includes('"list-documents"') ? true : undefined));
    const r = await sh(`examples/submit.sh ~/my-sandbox.key.json ~/${APP_NAME}/spool list-documents '{}'`);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('notes.txt');
  });

  it('the daemon the Quick start started stops on SIGTERM', async () => {
    const info = JSON.parse(readFileSync(home.lockInfo, 'utf8')) as { pid: number };
    process.kill(info.pid, 'SIGTERM');
    await eventually('the daemon gone', () => (!alive(info.pid) && !existsSync(home.lockInfo) ? true : undefined), 30_000);
  });
});
