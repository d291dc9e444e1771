// The agent's guide in the spool's bin/: the real daemon writes AGENTS.md and SKILL.md from the catalog
// it publishes, rewrites both when the allowlist changes, replaces a link or a FIFO the sandbox put at
// their names without following or opening it, and serves on when a folder there blocks the write.
// `dumbwaiter keys create` says how to hand the guide over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lstatSync, mkdirSync, readFileSync, rmdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { eventually, runningHost, type DaemonProcess, type TestHost } from '../helpers/host';
import { agentGuide } from '../../main/core/spool/agentGuide';
import type { CatalogDoc, KeyFile } from '../../shared/protocol/types';

const op = (name: string, description: string) => `
  - name: ${name}
    description: ${JSON.stringify(description)}
    command: [echo, "${name}", "{word}"]
    args:
      word: {type: string, pattern: "[a-z]+"}
    scope: read
    approval: never
`;
const V1 = `version: 1\noperations:${op('greet', 'Say hello')}`;
const V2 = `version: 1\noperations:${op('greet', 'Say hello')}${op('wave', 'Wave at someone')}`;
const V3 = `version: 1\noperations:${op('greet', 'Say hello')}${op('nod', 'Nod politely')}`;

let host: TestHost;
let key: KeyFile;
let daemon: DaemonProcess;

const bin = (name: string) => path.join(host.spool, 'bin', name);
const read = (name: string) => readFileSync(bin(name), 'utf8');
const isFile = (name: string) => {
  try {
    return lstatSync(bin(name)).isFile();
  } catch {
    return false; // not written yet
  }
};
const catalog = (): CatalogDoc => JSON.parse(readFileSync(path.join(host.spool, 'catalog.json'), 'utf8')) as CatalogDoc;
/** Both files, once they are regular files holding the guide of the catalog now published that lists `op`. */
const guideWith = (op: string) =>
  eventually(`bin/AGENTS.md and bin/SKILL.md listing ${op}`, () => {
    if (!isFile('AGENTS.md') || !isFile('SKILL.md')) return undefined;
    const c = catalog();
    if (!c.operations.some((o) => o.name === op)) return undefined;
    const want = agentGuide(c);
    return read('AGENTS.md') === want.agents && read('SKILL.md') === want.skill ? want : undefined;
  });

beforeAll(async () => {
  ({ host, key, daemon } = await runningHost(V1, { name: 'guide', scope: 'read' }));
});

afterAll(async () => {
  await host.cleanup();
});

describe('the agent guide in bin/', () => {
  it('is written at daemon start from the published catalog, next to the clients', async () => {
    const guide = await guideWith('greet');
    expect(guide.agents).toContain('- `greet` (read, runs without asking');
    expect(guide.agents).toContain('Say hello');
    expect(guide.skill).toMatch(/^---\nname: dumbwaiter\ndescription: ".*greet.*"\n---\n/);
    expect(isFile('dw.cjs')).toBe(true);
    expect(lstatSync(bin('AGENTS.md')).mode & 0o777).toBe(0o644);
  });

  it('is rewritten when the allowlist changes', async () => {
    host.writeAllowlist(V2);
    const guide = await guideWith('wave');
    expect(guide.agents).toContain('- `wave` (read, runs without asking');
    expect(guide.agents).toContain('Wave at someone');
    expect(guide.skill).toContain('wave');
  });

  it('replaces a symlink and a FIFO the sandbox planted at its names, never following or opening them', async () => {
    const victim = path.join(host.root, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    unlinkSync(bin('AGENTS.md'));
    symlinkSync(victim, bin('AGENTS.md'));
    unlinkSync(bin('SKILL.md'));
    expect(spawnSync('mkfifo', [bin('SKILL.md')]).status).toBe(0);

    host.writeAllowlist(V3);
    const guide = await guideWith('nod');
    expect(guide.agents).toContain('Nod politely');
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    // The daemon is alive and answers a valid request right after.
    host.submit(key, 'guide-1', 'nod', { word: 'yes' });
    expect(await host.waitResult('guide-1')).toMatchObject({ state: 'succeeded', stdout: 'nod yes\n' });
    expect(daemon.proc.exitCode).toBeNull();
  });

  it('a folder planted at its name is left, said in the audit log, and the daemon serves on', async () => {
    unlinkSync(bin('AGENTS.md'));
    mkdirSync(bin('AGENTS.md'));
    host.writeAllowlist(V2);
    const entry = await eventually('the failed write in the audit log', () => host.audit('bin/AGENTS.md', 'internal_error')[0]);
    expect(entry.message).toMatch(/bin\/AGENTS\.md/);
    expect(lstatSync(bin('AGENTS.md')).isDirectory()).toBe(true);
    host.submit(key, 'guide-2', 'wave', { word: 'still' });
    expect(await host.waitResult('guide-2')).toMatchObject({ state: 'succeeded', stdout: 'wave still\n' });
    // Once it is gone, the next rewrite puts the guide back.
    rmdirSync(bin('AGENTS.md'));
    host.writeAllowlist(V1);
    await eventually('the guide back without wave', () => (isFile('AGENTS.md') && !read('AGENTS.md').includes('wave') ? true : undefined));
    expect(read('AGENTS.md')).toBe(agentGuide(catalog()).agents);
  });

  it('keys create prints how to hand the guide to the agent', () => {
    const out = path.join(host.root, 'handover.key.json');
    const r = host.cli(['keys', 'create', 'handover', '--out', out]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Tell the agent: "Read $DUMBWAITER_SPOOL/bin/AGENTS.md before using Dumbwaiter."');
    expect(r.stdout).toContain('copy $DUMBWAITER_SPOOL/bin/SKILL.md into its skills folder as dumbwaiter/SKILL.md');
  });
});
