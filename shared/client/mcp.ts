// `dw mcp`: a Model Context Protocol server on stdio. Each operation of the host's catalog is a tool
// whose input schema is its args_schema; three more tools check on, wait for and cancel a request.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { isSettled, type SpoolClient, type Status } from './spoolClient';
import { checkArgs, ArgError } from './typedArgs';

const CATALOG_POLL_MS = 2000;

const ID_SCHEMA: Tool['inputSchema'] = {
  type: 'object',
  properties: { id: { type: 'string', description: 'the request id a previous call returned' } },
  required: ['id'],
  additionalProperties: false,
};

const OWN_TOOLS: Tool[] = [
  { name: 'dumbwaiter_status', description: 'The current state and output of a request, by id (does not wait).', inputSchema: ID_SCHEMA },
  {
    name: 'dumbwaiter_wait',
    description: 'Wait for a request to finish (up to the server\'s wait limit) and return its result.',
    inputSchema: ID_SCHEMA,
  },
  { name: 'dumbwaiter_cancel', description: 'Cancel a request of yours that is queued, waiting for approval or running.', inputSchema: ID_SCHEMA },
];

function text(body: unknown, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: typeof body === 'string' ? body : JSON.stringify(body, null, 2) }], isError };
}

/** A settled request as a tool result: an error unless it succeeded; a pending one says how to check later. */
function resultOf(s: Status): CallToolResult {
  if (!isSettled(s)) {
    return text({ id: s.id, state: s.state, note: `not finished yet: call dumbwaiter_wait or dumbwaiter_status with id "${s.id}"` });
  }
  return text(
    { id: s.id, state: s.state, exit_code: s.exit_code, stdout: s.stdout, stderr: s.stderr, error: s.error, ...(s.approval ? { approval: s.approval } : {}) },
    s.state !== 'succeeded',
  );
}

export async function serveMcp(client: SpoolClient, waitMs: number): Promise<void> {
  const server = new Server({ name: 'dumbwaiter', version: '1' }, { capabilities: { tools: { listChanged: true } } });
  const operations = () => client.catalog()?.operations ?? [];

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      ...operations().map((op) => ({
        name: op.name,
        description: `${op.description}${op.approval === 'always' ? ' (a human approves each call)' : ''}`,
        inputSchema: op.args_schema as Tool['inputSchema'],
      })),
      ...OWN_TOOLS,
    ],
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const name = req.params.name;
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    if (OWN_TOOLS.some((t) => t.name === name)) {
      const id = typeof args.id === 'string' ? args.id : '';
      if (!id) return text('an "id" is needed', true);
      if (name === 'dumbwaiter_status') return resultOf(client.status(id));
      if (name === 'dumbwaiter_wait') return resultOf(await client.wait(id, { timeoutMs: waitMs }));
      const cancel = client.submit({ op: 'dumbwaiter.cancel', args: { target: id } });
      const s = await client.wait(cancel, { timeoutMs: waitMs });
      return isSettled(s) && s.state === 'succeeded' ? text(s.stdout.trim()) : resultOf(s);
    }
    const op = operations().find((o) => o.name === name);
    if (!op) return text(`the host offers no tool "${name}"`, true);
    try {
      checkArgs(op.args_schema, args);
    } catch (e) {
      if (e instanceof ArgError) return text(`${name}: ${e.message}`, true);
      throw e;
    }
    const id = client.submit({ op: name, args });
    return resultOf(await client.wait(id, { timeoutMs: waitMs }));
  });

  // The tool list follows the catalog: tell the client whenever the host's allowlist changes.
  let seen = client.catalog()?.updated_at ?? '';
  const timer = setInterval(() => {
    const now = client.catalog()?.updated_at ?? '';
    if (now !== seen) {
      seen = now;
      void server.sendToolListChanged().catch(() => {});
    }
  }, CATALOG_POLL_MS);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  clearInterval(timer);
}
