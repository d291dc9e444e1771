// The agents' MCP lines: each read back by the tool's own kind of parser (a shell, a TOML parser,
// JSON) gives the same server, whatever the paths hold, and docs/SANDBOX.md quotes them as generated.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { agentSetupLines, claudeCodeLine, codexToml, mcpServer, mcpServersJson } from '../../../main/core/agentSetup';

const odd = mcpServer(`/mnt/it's "the" spool $HOME \\ 100%`, '/run/secrets/k\tey.json');
const hasTomllib = spawnSync('python3', ['-c', 'import tomllib']).status === 0;

describe('claudeCodeLine', () => {
  it('is read by a POSIX shell as claude mcp add, the env and the server command, word for word', () => {
    const r = spawnSync('sh', ['-c', `set -- ${claudeCodeLine(odd)}; printf '%s\\0' "$@"`], { encoding: 'utf8' });
    expect(r.stdout.split('\0').slice(0, -1)).toEqual([
      'claude', 'mcp', 'add', 'dumbwaiter',
      '-e', `DUMBWAITER_SPOOL=${odd.env.DUMBWAITER_SPOOL}`, '-e', `DUMBWAITER_KEY_FILE=${odd.env.DUMBWAITER_KEY_FILE}`,
      '--', 'node', `${odd.env.DUMBWAITER_SPOOL}/bin/dw.cjs`, 'mcp',
    ]);
  });
});

describe('codexToml', () => {
  it.runIf(hasTomllib)('is parsed by a TOML parser (Python tomllib) into mcp_servers.dumbwaiter', () => {
    const r = spawnSync('python3', ['-c', 'import json, sys, tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))'], { input: codexToml(odd), encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ mcp_servers: { dumbwaiter: odd } });
  });

  it.skipIf(hasTomllib)('python3 with tomllib (3.11+) is not here and no TOML parser is in node_modules: the TOML was not parsed', () => {});
});

describe('mcpServersJson', () => {
  it('is the mcpServers JSON of Gemini CLI and other clients', () => {
    expect(JSON.parse(mcpServersJson(odd))).toEqual({ mcpServers: { dumbwaiter: { command: 'node', args: [`${odd.env.DUMBWAITER_SPOOL}/bin/dw.cjs`, 'mcp'], env: odd.env } } });
  });
});

describe('docs/SANDBOX.md', () => {
  it('gives the same lines as keys create, for the mounts it uses', () => {
    const doc = readFileSync(path.resolve('docs/SANDBOX.md'), 'utf8');
    const s = mcpServer();
    expect(doc).toContain(`\n${claudeCodeLine(s)}\n`);
    expect(doc).toContain(`\n${codexToml(s)}\n`);
    expect(doc).toContain(`\n${mcpServersJson(s)}\n`);
    expect(agentSetupLines('/h/spool', '/h/k.json')).toContain(claudeCodeLine(s));
  });
});
