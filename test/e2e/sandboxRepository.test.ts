// Issue 12, item 11: git in a repository the sandbox can write runs whatever the repository's own
// .git/config names (gpg.program with log.showSignature, core.fsmonitor, a textconv diff driver, an
// external diff, hooks) and reads wherever core.worktree points. The example git operations of the
// default allowlist (taken from its very text, uncommented) switch that off: run through the real
// daemon with a read key against such a repository, none of the sandbox's programs runs, the folder
// core.worktree points at is never read, and the daemon answers after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse as parseYaml } from 'yaml';
import { TestHost } from '../helpers/host';
import { EXAMPLE_ALLOWLIST } from '../../main/core/allowlist/example';
import type { KeyFile } from '../../shared/protocol/types';

const HAS_GIT = spawnSync('git', ['--version']).status === 0;
if (!HAS_GIT) console.warn('sandboxRepository: skipped: git is not installed on this machine');

/** The commented git operations at the end of the example allowlist, uncommented, on `repo`. */
function exampleGitOperations(repo: string): string {
  const lines = EXAMPLE_ALLOWLIST.split('\n');
  const start = lines.findIndex((l) => l.startsWith('  # - name: git-'));
  expect(start, 'the example allowlist has git operations').toBeGreaterThan(0);
  const block = lines.slice(start).filter((l) => l.startsWith('  # '));
  return block.map((l) => `  ${l.slice(4)}`.replace(/^(\s+cwd: )~\/code\/app$/, `$1${JSON.stringify(repo)}`)).join('\n');
}

let host: TestHost;
let key: KeyFile;
let repo: string;
let marks: string;
let plain: { ran: string[]; status: string };

function git(args: string[], o: { env?: Record<string, string> } = {}): string {
  const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, ...o.env } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** The programs of the sandbox that ran: each leaves a file named for what it was run as. */
function ran(): string[] {
  return readdirSync(marks).sort();
}

/** A repository as the sandbox can leave it: a signed commit, a changed file and a config that
 *  names the sandbox's program for every way git has to run one. */
function armRepository(): void {
  mkdirSync(repo);
  mkdirSync(marks);
  const secret = path.join(host.root, 'elsewhere');
  mkdirSync(secret);
  writeFileSync(path.join(secret, 'private-notes.txt'), 'not for the sandbox\n');
  git(['init', '-q', '-b', 'main']);
  git(['config', 'user.email', 'agent@sandbox']);
  git(['config', 'user.name', 'agent']);
  writeFileSync(path.join(repo, 'notes.txt'), 'one\n');
  writeFileSync(path.join(repo, '.gitattributes'), '* diff=evil\n');
  git(['add', '.']);
  git(['commit', '-q', '-m', 'first']);
  // A commit with a signature, so that log.showSignature has something to verify.
  const tree = git(['rev-parse', 'HEAD^{tree}']).trim();
  const parent = git(['rev-parse', 'HEAD']).trim();
  const signed = `tree ${tree}\nparent ${parent}\nauthor agent <agent@sandbox> 1700000000 +0000\ncommitter agent <agent@sandbox> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----\n\nsigned work\n`;
  const commitFile = path.join(host.root, 'signed-commit');
  writeFileSync(commitFile, signed);
  git(['update-ref', 'refs/heads/main', git(['hash-object', '-t', 'commit', '-w', commitFile]).trim()]);

  const program = (name: string) => {
    const p = path.join(host.root, `sandbox-${name}.sh`);
    writeFileSync(p, `#!/bin/sh\n: > ${JSON.stringify(path.join(marks, name))}\ncat >/dev/null\n`);
    chmodSync(p, 0o755);
    return p;
  };
  git(['config', 'gpg.program', program('gpg.program')]);
  git(['config', 'gpg.ssh.program', program('gpg.ssh.program')]);
  git(['config', 'log.showSignature', 'true']);
  git(['config', 'core.fsmonitor', program('core.fsmonitor')]);
  git(['config', 'diff.evil.textconv', program('textconv')]);
  git(['config', 'diff.external', program('diff.external')]);
  git(['config', 'core.pager', program('core.pager')]);
  git(['config', 'core.hooksPath', path.join(host.root, 'hooks')]);
  mkdirSync(path.join(host.root, 'hooks'));
  const hook = path.join(host.root, 'hooks', 'post-index-change');
  writeFileSync(hook, `#!/bin/sh\n: > ${JSON.stringify(path.join(marks, 'post-index-change'))}\n`);
  chmodSync(hook, 0o755);
  // The working file changed (same size, an old time stamp: git must read it again).
  writeFileSync(path.join(repo, 'notes.txt'), 'two\n');
  utimesSync(path.join(repo, 'notes.txt'), new Date('2020-01-01'), new Date('2020-01-01'));
}

/** What plain git does in the armed repository: the programs it ran, and what status lists once
 *  core.worktree points at a folder of the host's. Then the marks are cleared and core.worktree set. */
function plainGit(): { ran: string[]; status: string } {
  git(['status', '--porcelain']);
  git(['log', '-1']);
  git(['diff']);
  git(['diff', '--no-ext-diff']);
  const programs = ran();
  for (const m of programs) rmSync(path.join(marks, m));
  git(['config', 'core.worktree', path.join(host.root, 'elsewhere')]);
  const status = git(['status', '--porcelain']);
  for (const m of ran()) rmSync(path.join(marks, m));
  return { ran: programs, status };
}

beforeAll(async () => {
  if (!HAS_GIT) return;
  host = new TestHost();
  repo = path.join(host.root, 'repo');
  marks = path.join(host.root, 'marks');
  armRepository();
  plain = plainGit();
  host.writeAllowlist(`version: 1\noperations:\n${exampleGitOperations(repo)}\n`);
  key = host.createKey('agent', 'read');
  await host.startDaemon();
});

afterAll(async () => {
  await host?.cleanup();
});

describe.skipIf(!HAS_GIT)('the example git operations on a repository the sandbox wrote', () => {
  it('is armed: plain git runs the sandbox programs and lists the files of the folder core.worktree names', () => {
    expect(plain.ran).toEqual(['core.fsmonitor', 'diff.external', 'gpg.program', 'post-index-change', 'textconv']);
    expect(plain.status).toContain('private-notes.txt');
  });

  it('git-status, git-log and git-diff run with a read key, show the repository and run nothing of the sandbox', async () => {
    host.submit(key, 'git-1', 'git-status');
    host.submit(key, 'git-2', 'git-log', { count: 5 });
    host.submit(key, 'git-3', 'git-diff');
    const status = await host.waitResult('git-1');
    const log = await host.waitResult('git-2');
    const diff = await host.waitResult('git-3');
    expect([status.state, log.state, diff.state], JSON.stringify([status.error, log.error, diff.error])).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(status.stdout).toBe(' M notes.txt\n');
    expect(status.stdout).not.toContain('private-notes');
    expect(log.stdout).toMatch(/^[0-9a-f]+ 2023-11-14 agent signed work\n[0-9a-f]+ \d{4}-\d\d-\d\d agent first\n$/);
    expect(diff.stdout).toContain('-one\n+two\n');
    expect(ran()).toEqual([]);
    expect(existsSync(path.join(host.root, 'elsewhere', '.git'))).toBe(false);
  });

  it('the daemon answers a valid request after them', async () => {
    expect((await host.sentinel(key)).state).toBe('succeeded');
  });
});

describe('the git example in docs/SANDBOX.md', () => {
  it('is the git-log of the default allowlist, in every field it shows', () => {
    type Op = { name: string; command: string[]; env: Record<string, string>; args: unknown };
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/SANDBOX.md'), 'utf8');
    const block = /```yaml\n([^`]*name: git-log[^`]*)```/.exec(doc)?.[1];
    expect(block, 'a yaml block with git-log').toBeDefined();
    const [shown] = parseYaml(block!) as [Op];
    const example = (parseYaml(exampleGitOperations('~/code/app')) as Op[]).find((o) => o.name === 'git-log');
    expect(example).toMatchObject(shown);
  });
});
