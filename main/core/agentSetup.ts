// The lines that register the spool's MCP server (`node bin/dw.cjs mcp`) with an agent: Claude Code,
// Codex, Gemini CLI and any client that takes the common `mcpServers` JSON. One place, printed by
// `keys create` (HostKeys.pasteLines) and quoted in docs/SANDBOX.md, which a test holds to them.
// The paths are the sandbox's: a container sees the spool and the key where they are mounted.
import path from 'node:path';
import { shellWord } from '../../shared/text/shellWord';

/** Where docs/SANDBOX.md mounts the spool and the key file in a container. */
export const SANDBOX_SPOOL = '/dumbwaiter';
export const SANDBOX_KEY_FILE = '/run/secrets/dumbwaiter-key.json';

export interface McpServer {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The MCP server as its client starts it. The key and spool go in its own environment: a client
 *  (Codex among them) may not pass its own environment on to the servers it starts. */
export function mcpServer(spool = SANDBOX_SPOOL, keyFile = SANDBOX_KEY_FILE): McpServer {
  return { command: 'node', args: [path.posix.join(spool, 'bin', 'dw.cjs'), 'mcp'], env: { DUMBWAITER_SPOOL: spool, DUMBWAITER_KEY_FILE: keyFile } };
}

/** `claude mcp add` (its -e takes NAME=VALUE; after `--`, the server's own command line). */
export function claudeCodeLine(s: McpServer): string {
  const env = Object.entries(s.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  return ['claude', 'mcp', 'add', 'dumbwaiter', ...env, '--', s.command, ...s.args].map(shellWord).join(' ');
}

/** Codex's ~/.codex/config.toml. A JSON string is a TOML basic string (same escapes). */
export function codexToml(s: McpServer): string {
  const str = (v: string) => JSON.stringify(v);
  const env = Object.entries(s.env).map(([k, v]) => `${k} = ${str(v)}`).join(', ');
  return [`[mcp_servers.dumbwaiter]`, `command = ${str(s.command)}`, `args = [${s.args.map(str).join(', ')}]`, `env = { ${env} }`].join('\n');
}

/** The `mcpServers` JSON of Gemini CLI's ~/.gemini/settings.json, Claude Desktop, Cursor and most others. */
export function mcpServersJson(s: McpServer): string {
  return JSON.stringify({ mcpServers: { dumbwaiter: s } }, null, 2);
}

const indent = (text: string) => text.split('\n').map((l) => `    ${l}`).join('\n');

/** What `keys create` prints: the mounts, then each agent's lines for the paths inside the container. */
export function agentSetupLines(hostSpool: string, hostKeyFile: string): string {
  const s = mcpServer();
  return [
    `The agent's MCP server, for a container that mounts the spool at ${SANDBOX_SPOOL} and the key at ${SANDBOX_KEY_FILE}`,
    `(docker run --user "$(id -u):$(id -g)" -v ${shellWord(`${hostSpool}:${SANDBOX_SPOOL}`)} -v ${shellWord(`${hostKeyFile}:${SANDBOX_KEY_FILE}:ro`)} ...;`,
    `an agent outside a container: put ${shellWord(hostSpool)} and ${shellWord(hostKeyFile)} in their place):`,
    '',
    '  Claude Code:',
    indent(claudeCodeLine(s)),
    '',
    '  Codex, in ~/.codex/config.toml:',
    indent(codexToml(s)),
    '',
    '  Gemini CLI, in ~/.gemini/settings.json (and any MCP client that takes this JSON):',
    indent(mcpServersJson(s)),
  ].join('\n');
}
