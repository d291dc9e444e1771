// `dw mcp`: a Model Context Protocol server on stdio. Each operation of the host's catalog is a tool
// whose input schema is its args_schema plus `dumbwaiter_intent` and `dumbwaiter_plan_id`; three more
// tools check on, wait for and cancel a request, and `dumbwaiter_plan` proposes a plan for one approval. A call returns within the wait limit, or, when it carries a progressToken, waits until
// the request is settled and reports progress meanwhile (the client's own timeout governs then).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ProgressToken,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { MAX_INTENT_CHARS, type CatalogOperation, type ResultDoc } from '../protocol/types';
import { REQUEST_ID, isRequestId } from '../protocol/ids';
import { BadRequestIdError, RequestTooLargeError, checkRequestId, isResult, isSettled, logCheckNote, type SpoolClient, type Status, type SubmitRequest } from './spoolClient';
import { checkArgs, ArgError } from './typedArgs';
import { DEFAULT_PLAN_EXPIRES_S, PlanError, checkPlanSteps, planStepsOf } from './plans';
import { MAX_PLAN_LIFETIME_S, MAX_PLAN_STEPS, PLAN_OP } from '../protocol/plan';
import { outcomeLines, pendingNotes, type Ended } from './runNotes';
import { withoutSettleHint } from '../protocol/reconcileText';
import { startsRequests } from './hostState';
import { utcText, waitingText } from './approvalWait';
import { APP_VERSION } from './version';
import { DEFAULT_WAIT_S } from './limits';

/** The reserved inputs of every operation tool (the allowlist refuses arguments named dumbwaiter_*). */
const INTENT_INPUT = 'dumbwaiter_intent';
const PLAN_ID_INPUT = 'dumbwaiter_plan_id';
const PLAN_TOOL = 'dumbwaiter_plan';
const CATALOG_POLL_MS = 2000;
/** Progress: live output at most about once a second, and something at least every 10 s, so that a
 *  client that resets its timeout on progress never times out while a request waits. */
const PROGRESS_TICK_MS = 1000;
const KEEPALIVE_MS = 10_000;
const OUTPUT_LINES = 20;
const OUTPUT_CHARS = 4000;
const TITLE_CHARS = 60;

const ID_SCHEMA: Tool['inputSchema'] = {
  type: 'object',
  properties: { id: { type: 'string', description: 'the request id a previous call returned' } },
  required: ['id'],
  additionalProperties: false,
};

const INTENT_SCHEMA = {
  type: 'string',
  maxLength: MAX_INTENT_CHARS,
  description: 'why you ask: shown to the human who approves',
};

const PLAN_ID_SCHEMA = {
  type: 'string',
  pattern: REQUEST_ID.source,
  description: `the plan_id ${PLAN_TOOL} returned, when this call is a step of that approved plan: with the same arguments as the step it then runs without asking again (each step once)`,
};

const PLAN_TOOL_DEF: Tool = {
  name: PLAN_TOOL,
  description:
    'Propose a plan: the operations (tools) you will call, with their exact arguments, for a human to approve at once before any of them runs. ' +
    `Waits for the decision like an operation tool. Once approved, call each step's tool with the step's arguments and ${PLAN_ID_INPUT} set to the plan_id: it runs without asking again (each step once, until the plan expires).`,
  inputSchema: {
    type: 'object',
    properties: {
      steps: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_PLAN_STEPS,
        items: {
          type: 'object',
          properties: {
            op: { type: 'string', description: 'the operation: the name of its tool' },
            args: { type: 'object', description: "the tool's arguments, exactly as you will pass them (without the dumbwaiter_* inputs)" },
          },
          required: ['op'],
          additionalProperties: false,
        },
      },
      intent: { ...INTENT_SCHEMA, description: 'what the plan is for: shown to the human who approves it' },
      expires_in_s: { type: 'number', minimum: 1, maximum: MAX_PLAN_LIFETIME_S, description: `how long the approved plan may be used, in seconds (default ${DEFAULT_PLAN_EXPIRES_S})` },
    },
    required: ['steps', 'intent'],
    additionalProperties: false,
  },
  annotations: { title: 'Propose a plan for approval', readOnlyHint: false, destructiveHint: false, openWorldHint: false },
};

const OWN_TOOLS: Tool[] = [
  {
    name: 'dumbwaiter_status',
    description: 'The current state and output of a request, by id (does not wait).',
    inputSchema: ID_SCHEMA,
    annotations: { title: 'Request status', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'dumbwaiter_wait',
    description:
      "Wait for a request to finish and return its result: up to the server's wait limit, or, with a progress token, until it is settled.",
    inputSchema: ID_SCHEMA,
    annotations: { title: 'Wait for a request', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'dumbwaiter_cancel',
    description: 'Cancel a request of yours that is queued, waiting for approval or running.',
    inputSchema: ID_SCHEMA,
    annotations: { title: 'Cancel a request', readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  },
];

/** The first sentence of the description, cut at a word to fit a title; the name when there is none. */
function titleOf(op: Pick<CatalogOperation, 'name' | 'description'>): string {
  const first = op.description.split(/\r?\n/)[0]!.split(/(?<=\.)\s/)[0]!.replace(/\.$/, '').trim();
  if (!first) return op.name;
  if ([...first].length <= TITLE_CHARS) return first;
  const cut = [...first].slice(0, TITLE_CHARS - 1).join('');
  return `${cut.slice(0, cut.lastIndexOf(' ') > 0 ? cut.lastIndexOf(' ') : cut.length)}…`;
}

function toolOf(op: CatalogOperation): Tool {
  const schema = op.args_schema as Tool['inputSchema'];
  return {
    name: op.name,
    description: `${op.description}${op.approval === 'always' ? ' (a human approves each call)' : ''}`,
    inputSchema: { ...schema, properties: { ...(schema.properties ?? {}), [INTENT_INPUT]: INTENT_SCHEMA, [PLAN_ID_INPUT]: PLAN_ID_SCHEMA } },
    // Write operations change things on the host; what any operation's program reaches is the allowlist
    // author's business, so none claims a closed world.
    annotations: { title: titleOf(op), readOnlyHint: op.scope === 'read', destructiveHint: op.scope === 'write', openWorldHint: true },
  };
}

function text(body: unknown, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: typeof body === 'string' ? body : JSON.stringify(body, null, 2) }], isError };
}

/** What a request is doing, in words, for progress messages and pending results. */
function describe(s: Status): string {
  switch (s.state) {
    case 'unclaimed':
      return `request ${s.id} waits in queue/ for the host to take it`;
    case 'unknown':
      return `request ${s.id} has no result yet`;
    case 'queued':
      return `request ${s.id} is queued: the host runs it when a slot is free`;
    case 'awaiting_approval':
      return waitingText(s);
    case 'running':
      return isResult(s) && s.orphaned ? `request ${s.id} is still running after the host restarted: the host watches it` : `request ${s.id} is running`;
    case 'uncertain':
      // Only while its reconcile check is still to come (else it is settled, and never described here).
      return `request ${s.id} was interrupted by a stop of the host: the host's reconcile check of whether it took effect is still to come`;
    default:
      return `request ${s.id} is ${s.state}`;
  }
}

/** A request as a tool result: a settled one is an error unless it succeeded; a pending one says how to
 *  check later (and that the host is not running, when it is not). */
function resultOf(s: Status, client: SpoolClient): CallToolResult {
  if (s.state === 'conflict') return text({ id: s.id, state: s.state, error: s.message }, true);
  if ('unsigned' in s) {
    return text(
      {
        id: s.id,
        state: s.state,
        error: s.error,
        note: "this refusal is not signed by the host, so it may not be the host's; the host signs every answer to a request it could authenticate: check the key with dw doctor",
      },
      true,
    );
  }
  if (isResult(s) && s.op === PLAN_OP) return planResultOf(s, client);
  if (!isResult(s) || !isSettled(s)) {
    const host = client.hostState();
    return text({
      id: s.id,
      state: s.state,
      note: `${describe(s)}; not finished yet: call dumbwaiter_wait or dumbwaiter_status with id "${s.id}"`,
      ...afterRestart(s),
      ...(startsRequests(host) ? {} : { host: host.text }),
    });
  }
  // The host's message as the agent can act on it: a host command in it is the human's (settleHint).
  const error = s.error && { ...s.error, message: withoutSettleHint(s.error.message) };
  return text(
    { id: s.id, state: s.state, exit_code: s.exit_code, stdout: s.stdout, stderr: s.stderr, error, ...(s.approval ? { approval: s.approval } : {}), ...afterRestart(s) },
    s.state !== 'succeeded',
  );
}

/** A run the host lost sight of (whether it outlived a restart, what the reconcile check said, who
 *  settled it), and how a settled request ended in the words dw says it on stderr. */
function afterRestart(s: Status): Record<string, unknown> {
  if (!isResult(s)) return {};
  const notes = isSettled(s) ? outcomeLines(s as Ended) : pendingNotes(s);
  return {
    ...(s.orphaned ? { orphaned: true } : {}),
    ...(s.resolved_by ? { resolved_by: s.resolved_by } : {}),
    ...(s.reconcile ? { reconcile: s.reconcile } : {}),
    ...(notes.length ? { notes } : {}),
  };
}

/** A plan as a tool result: its decision, its steps (as the host will run them, and the requests that
 *  used them), and once approved how to use it. */
function planResultOf(s: ResultDoc, client: SpoolClient): CallToolResult {
  const settled = isSettled(s);
  const host = client.hostState();
  const note =
    s.state === 'succeeded'
      ? `approved: call each step's tool with the step's arguments and ${PLAN_ID_INPUT} "${s.id}"; it then runs without asking again (each step once, until ${utcText(s.plan?.expires_at) ?? 'the plan expires'})`
      : settled
        ? `the plan was not approved (${s.state}): nothing of it runs without its own approval`
        : `${describe(s)}; not decided yet: call dumbwaiter_wait or dumbwaiter_status with id "${s.id}"`;
  return text(
    {
      plan_id: s.id,
      state: s.state === 'succeeded' ? 'approved' : s.state,
      ...(s.plan ? { expires_at: s.plan.expires_at } : {}),
      ...(s.approval?.decided_by ? { decided_by: s.approval.decided_by } : {}),
      steps: planStepsOf(s) ?? [],
      error: s.error,
      note,
      ...(settled || startsRequests(host) ? {} : { host: host.text }),
    },
    settled && s.state !== 'succeeded',
  );
}

/** Writes a request for a tool call; the id, or the error result saying why nothing was written. */
function submitted(client: SpoolClient, r: SubmitRequest): string | CallToolResult {
  try {
    return client.submit(r);
  } catch (e) {
    if (e instanceof RequestTooLargeError || e instanceof BadRequestIdError) return text(`${r.op}: ${e.message}`, true);
    throw e;
  }
}

/** The input of dumbwaiter_plan as a request, or the error result saying what does not fit. */
function planRequest(input: Record<string, unknown>, client: SpoolClient): SubmitRequest | CallToolResult {
  const { steps, intent, expires_in_s: expiresIn = DEFAULT_PLAN_EXPIRES_S, ...rest } = input;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return text(`${PLAN_TOOL}: unknown input "${extra}" (it takes steps, intent and expires_in_s)`, true);
  if (typeof intent !== 'string' || intent.trim() === '' || [...intent].length > MAX_INTENT_CHARS) {
    return text(`${PLAN_TOOL}: intent must say what the plan is for, in at most ${MAX_INTENT_CHARS} characters`, true);
  }
  if (typeof expiresIn !== 'number' || !(expiresIn >= 1 && expiresIn <= MAX_PLAN_LIFETIME_S)) {
    return text(`${PLAN_TOOL}: expires_in_s must be a number of seconds from 1 to ${MAX_PLAN_LIFETIME_S}`, true);
  }
  try {
    const checked = checkPlanSteps({ steps }, client.catalog());
    return { op: PLAN_OP, args: { steps: checked }, intent, expiresAt: new Date(Date.now() + expiresIn * 1000) };
  } catch (e) {
    if (e instanceof PlanError) return text(`${PLAN_TOOL}: ${e.message}`, true);
    throw e;
  }
}

type Send = (n: ServerNotification) => Promise<void>;

/** The progress notifications of one call: each state change, the host going away and coming back, the
 *  latest lines of live output (batched), and a keep-alive when nothing changes. */
class Progress {
  private n = 0;
  private lastSent = 0;
  private last: Status | null = null;
  private host: string | null = null;
  private output = '';
  private outputCut = false;
  private readonly decoder = new TextDecoder();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly client: SpoolClient,
    private readonly token: ProgressToken,
    private readonly send: Send,
    private readonly id: string,
    first: string,
  ) {
    this.say(first);
    this.checkHost();
    this.timer = setInterval(() => this.tick(), PROGRESS_TICK_MS);
  }

  private say(message: string): void {
    this.lastSent = Date.now();
    const params = { progressToken: this.token, progress: ++this.n, message };
    void this.send({ method: 'notifications/progress', params }).catch(() => {}); // the client went away: the wait ends with it
  }

  state(s: Status): void {
    // A new state signed by the host proves it runs, whatever host.json says at this instant (a host
    // back and done within one tick, or host.json caught mid-replace, is still said to be back).
    this.checkHost(isResult(s));
    this.last = s;
    if (!isSettled(s)) this.say(describe(s)); // a settled one is the result, sent right after
  }

  chunk(b: Buffer): void {
    this.output += this.decoder.decode(b, { stream: true });
    if (this.output.length > OUTPUT_CHARS * 2) {
      this.output = this.output.slice(-OUTPUT_CHARS);
      this.outputCut = true;
    }
  }

  /** Says when the host is not running (or paused, or holding new requests), and when that changes. */
  private checkHost(answered = false): void {
    const host = this.client.hostState();
    const now = `${host.running || answered}:${host.paused}:${host.held}`;
    if (now === this.host) return;
    const wasKnown = this.host !== null;
    this.host = now;
    if ((!host.running && !answered) || host.paused || host.held) this.say(host.text);
    else if (wasKnown) this.say(`the host is running again${this.last ? `; ${describe(this.last)}` : ''}`);
  }

  private tick(): void {
    this.checkHost();
    if (this.output) {
      const lines = this.output.replace(/\n$/, '').split('\n');
      const latest = lines.slice(-OUTPUT_LINES).join('\n');
      const cut = this.outputCut || lines.length > OUTPUT_LINES || latest.length > OUTPUT_CHARS;
      this.say(`live output of request ${this.id}${cut ? ' (its latest lines)' : ''}:\n${latest.slice(-OUTPUT_CHARS)}`);
      this.output = '';
      this.outputCut = false;
    } else if (Date.now() - this.lastSent >= KEEPALIVE_MS) {
      this.say(this.last ? `still: ${describe(this.last)}` : `still waiting for request ${this.id}`);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

export async function serveMcp(client: SpoolClient, waitMs = DEFAULT_WAIT_S * 1000): Promise<void> {
  const server = new Server({ name: 'dumbwaiter', version: APP_VERSION }, { capabilities: { tools: { listChanged: true } } });
  /** The catalog's operations that can be tools: one named like a built-in tool is left out (it would
   *  shadow it), said on stderr, as is each entry the catalog check left out, once per catalog. */
  let noted = '';
  const operations = (): CatalogOperation[] => {
    const catalog = client.catalog();
    const builtIn = new Set([PLAN_TOOL, ...OWN_TOOLS.map((t) => t.name)]);
    const shadowing = (catalog?.operations ?? []).filter((o) => builtIn.has(o.name));
    const notes = [...(catalog?.skipped ?? []), ...shadowing.map((o) => `catalog.json: operation "${o.name}" is left out: it is named like a built-in tool`)];
    if (notes.length && notes.join('\n') !== noted) process.stderr.write(notes.map((n) => `dw mcp: ${n}\n`).join(''));
    noted = notes.join('\n');
    return (catalog?.operations ?? []).filter((o) => !builtIn.has(o.name));
  };

  /** Waits for a request: up to the wait limit, or until it is settled with progress when asked for. */
  async function settle(id: string, extra: { signal: AbortSignal; _meta?: { progressToken?: ProgressToken }; sendNotification: Send }, first: string) {
    const token = extra._meta?.progressToken;
    if (token === undefined) return resultOf(await client.wait(id, { timeoutMs: waitMs, signal: extra.signal }), client);
    const progress = new Progress(client, token, extra.sendNotification, id, first);
    try {
      // No time limit: the client's own timeout (or its cancellation, the signal) governs; the request goes on.
      const s = await client.follow(id, (b) => progress.chunk(b), { onChange: (st) => progress.state(st), signal: extra.signal });
      const result = resultOf(s, client);
      // The result holds the host's signed output; the live output sent as progress came from a file anyone may replace.
      const note = isResult(s) ? logCheckNote(s.log.check, s, 'progress') : null;
      if (note) result.content.push({ type: 'text', text: note });
      return result;
    } finally {
      progress.stop();
    }
  }

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...operations().map(toolOf), PLAN_TOOL_DEF, ...OWN_TOOLS] }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const name = req.params.name;
    const input = (req.params.arguments ?? {}) as Record<string, unknown>;
    if (OWN_TOOLS.some((t) => t.name === name)) {
      const id = typeof input.id === 'string' ? input.id : '';
      if (!id) return text('an "id" is needed', true);
      try {
        checkRequestId(id);
      } catch (e) {
        if (e instanceof BadRequestIdError) return text(e.message, true);
        throw e;
      }
      if (name === 'dumbwaiter_status') return resultOf(client.status(id), client);
      if (name === 'dumbwaiter_wait') return settle(id, extra, `waiting for request ${id}`);
      const cancel = client.submit({ op: 'dumbwaiter.cancel', args: { target: id } });
      const s = await client.wait(cancel, { timeoutMs: waitMs, signal: extra.signal });
      return isResult(s) && s.state === 'succeeded' ? text(s.stdout.trim()) : resultOf(s, client);
    }
    if (name === PLAN_TOOL) {
      const r = planRequest(input, client);
      if ('content' in r) return r;
      const id = submitted(client, r);
      if (typeof id !== 'string') return id;
      return settle(id, extra, `plan ${id} was submitted for a human to approve; if this call ends before it is decided, ask dumbwaiter_wait or dumbwaiter_status with id "${id}"`);
    }
    const op = operations().find((o) => o.name === name);
    if (!op) return text(`the host offers no tool "${name}"`, true);
    const { [INTENT_INPUT]: intent, [PLAN_ID_INPUT]: planId, ...args } = input;
    if (intent !== undefined && (typeof intent !== 'string' || [...intent].length > MAX_INTENT_CHARS)) {
      return text(`${name}: ${INTENT_INPUT} must be a string of at most ${MAX_INTENT_CHARS} characters`, true);
    }
    if (planId !== undefined && (typeof planId !== 'string' || !isRequestId(planId))) {
      return text(`${name}: ${PLAN_ID_INPUT} must be the plan_id ${PLAN_TOOL} returned`, true);
    }
    try {
      checkArgs(op.args_schema, args);
    } catch (e) {
      if (e instanceof ArgError) return text(`${name}: ${e.message}`, true);
      throw e;
    }
    const id = submitted(client, { op: name, args, ...(intent ? { intent } : {}), ...(planId !== undefined ? { plan_id: planId } : {}) });
    if (typeof id !== 'string') return id;
    return settle(id, extra, `request ${id} (${name}) was submitted; if this call ends before it does, ask dumbwaiter_wait or dumbwaiter_status with id "${id}"`);
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
