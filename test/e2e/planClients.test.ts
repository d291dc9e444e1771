// Plans and a request's own limits from each sandbox client, against the real daemon: `dw plan` (the
// bundled dw.cjs and dw.py, copied out of the spool and run with nothing else) waits for the human's
// decision and prints the plan id and each step's argv; an approved plan's steps then run with
// `dw run ... --plan ID` without asking, each once; a denied plan exits 81 and lets nothing through;
// `--time-limit`/`--max-output` tighten one run, and are refused when larger than the operation allows;
// `--timeout` on `dw run` and `dw plan` is how long dw waits, as it always was, never the run's limit.
// `dw mcp` through the SDK's own client: the dumbwaiter_plan tool and dumbwaiter_plan_id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { GATED_OP, TestHost, eventually, sandboxWithClients } from '../helpers/host';
import { allowlistYaml, countingCommand, echoOp } from '../helpers/allowlists';
import { track } from '../helpers/processes';
import { waitingSaid } from '../helpers/clientCases';
import type { PlanStep } from '../../shared/protocol/types';

let host: TestHost;
let sandbox: string;
let env: Record<string, string>;

const RUNS = () => path.join(host.work, 'runs.txt');

beforeAll(async () => {
  host = new TestHost();
  host.writeAllowlist(
    allowlistYaml(
      echoOp({ description: 'Print the words' }),
      {
        name: 'deploy',
        description: 'Ship to a target (a human approves each run)',
        command: countingCommand(RUNS(), 'echo "deployed $1"', '{target}'),
        cwd: host.work,
        args: { target: { type: 'string', enum: ['staging', 'prod', 'qa'] } },
        scope: 'write',
        approval: 'always',
        concurrency: 4,
      },
      { name: 'slow', command: ['/bin/sh', '-c', 'echo started; sleep 20'], timeout_s: 30, concurrency: 4 },
      GATED_OP,
    ),
  );
  const key = host.createKey('planner', 'write');
  await host.startDaemon();
  // A sandbox with nothing but copies of the spool's clients and a key file.
  ({ dir: sandbox, env } = sandboxWithClients(host.spool, key));
});

afterAll(async () => {
  await host.cleanup();
  rmSync(sandbox, { recursive: true, force: true });
});

type Dw = 'dw.cjs' | 'dw.py';
const program = (dw: Dw, args: string[]): [string, string[]] => (dw === 'dw.cjs' ? [process.execPath, [path.join(sandbox, dw), ...args]] : ['python3', [path.join(sandbox, dw), ...args]]);

function run(dw: Dw, args: string[], input?: string) {
  const [cmd, argv] = program(dw, args);
  const r = spawnSync(cmd, argv, { encoding: 'utf8', cwd: sandbox, env: { ...env, PYTHONDONTWRITEBYTECODE: '1' }, timeout: 60_000, input });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A client started in the background: `id` is the request id it prints first on stderr. */
function start(dw: Dw, args: string[]) {
  const [cmd, argv] = program(dw, args);
  const proc = track(spawn(cmd, argv, { cwd: sandbox, env: { ...env, PYTHONDONTWRITEBYTECODE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] }));
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => proc.on('close', (status) => resolve({ status, stdout, stderr })));
  const id = () => eventually('the request id on stderr', () => (stderr.includes('\n') ? stderr.split('\n')[0] : undefined));
  return { id, done };
}

function planFile(name: string, steps: unknown): string {
  const file = path.join(sandbox, name);
  writeFileSync(file, JSON.stringify(steps));
  return file;
}

function cli(args: string[]): void {
  const r = host.cli(args);
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
}

const decidedBy = (id: string) => host.service((s) => s.requests.get(id)?.decided_by);
const runs = () => (existsSync(RUNS()) ? readFileSync(RUNS(), 'utf8').trim().split('\n').filter(Boolean) : []);
const spoolFiles = () => [...readdirSync(path.join(host.spool, 'queue')), ...readdirSync(path.join(host.spool, 'tmp'))];
const firstLine = (text: string) => text.split('\n')[0]!;
const stepLine = (i: number, s: PlanStep, used: string) => `  ${i}. ${s.op} ${JSON.stringify(s.args)}: runs ${JSON.stringify(s.argv)} in ${s.cwd} (${s.scope}); ${used}`;

/** A sentinel the daemon answers after what came before: it is alive and serving this key. */
function expectAlive(dw: Dw): void {
  const r = run(dw, ['run', 'echo', 'msg=alive']);
  expect(r.status).toBe(0);
  expect(r.stdout).toBe('alive\n');
}

describe.each(['dw.cjs', 'dw.py'] as const)('%s', (dw) => {
  it('dw plan waits for the human; approved, it prints the plan id and each step as it runs; each step then runs once with --plan, without asking', async () => {
    const file = planFile(`plan-${dw}.json`, { steps: [{ op: 'deploy', args: { target: 'staging' } }, { op: 'deploy', args: { target: 'prod' } }] });
    const p = start(dw, ['plan', file, '--intent', 'ship 1.2']);
    const id = await p.id();
    const waiting = await host.waitResult(id, ['awaiting_approval']);
    const steps = waiting.approval!.steps!;
    expect(steps.map((s) => s.argv.at(-1))).toEqual(['staging', 'prod']);
    cli(['approvals', 'approve', id]);
    const r = await p.done;
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(`plan ${id} waits for a human to approve its 2 steps`);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^plan ${id}: approved by .+, usable until \\d{4}-`));
    expect(lines.slice(1, 3)).toEqual([stepLine(1, steps[0]!, 'not used yet'), stepLine(2, steps[1]!, 'not used yet')]);
    expect(lines[3]).toContain(`dw run OP name=value ... --plan ${id}`);

    const step = run(dw, ['run', 'deploy', 'target=prod', '--plan', id]);
    expect(step.status).toBe(0);
    expect(step.stdout).toBe('deployed prod\n');
    const stepId = firstLine(step.stderr);
    expect(decidedBy(stepId)).toBe(`plan ${id}`);
    expect(runs()).toContain(stepId);
    // dw status of the plan: which request used each step.
    await eventually('the plan to show its used step', () => {
      const st = run(dw, ['status', id]);
      return st.stdout.includes(stepLine(2, steps[1]!, `used by ${stepId} (succeeded)`)) ? st : undefined;
    });
    expect(run(dw, ['status', id]).stdout).toContain(stepLine(1, steps[0]!, 'not used yet'));
    // The same step again is used up: a human is asked (and says no), nothing runs.
    const again = run(dw, ['submit', 'deploy', 'target=prod', '--plan', id]).stdout.trim();
    await host.waitResult(again, ['awaiting_approval']);
    cli(['approvals', 'deny', again]);
    expect((await host.waitResult(again)).state).toBe('denied');
    expect(runs()).not.toContain(again);
    expectAlive(dw);
  });

  it('dw run of a request that claims a plan it is no step of says once that it waits for a human because of that, with the difference and the deny time; approved, it runs', async () => {
    const p = start(dw, ['plan', planFile(`claimed-${dw}.json`, [{ op: 'deploy', args: { target: 'staging' } }])]);
    const planId = await p.id();
    await host.waitResult(planId, ['awaiting_approval']);
    cli(['approvals', 'approve', planId]);
    expect((await p.done).status).toBe(0);

    const step = start(dw, ['run', 'deploy', 'target=qa', '--plan', planId]);
    const id = await step.id();
    const waiting = await host.waitResult(id, ['awaiting_approval']);
    const reason = `no step of plan ${planId} is deploy with these arguments: the closest, step 1, differs in target (step "staging", request "qa")`;
    expect(waiting.approval?.plan_claim).toEqual({ plan_id: planId, reason });
    cli(['approvals', 'approve', id]);
    const r = await step.done;
    expect([r.status, r.stdout]).toEqual([0, 'deployed qa\n']);
    const { said, expected } = waitingSaid(r.stderr, waiting);
    expect(said).toEqual([expected]);
    expect(expected).toContain(`request ${id} waits for a human's decision because it is not a step of plan ${planId}: ${reason}; unless decided, it is denied automatically at `);
  });

  it('a denied plan exits 81, and a request naming it still asks a human', async () => {
    const p = start(dw, ['plan', planFile(`denied-${dw}.json`, [{ op: 'deploy', args: { target: 'qa' } }]), '--expires', '10m']);
    const id = await p.id();
    await host.waitResult(id, ['awaiting_approval']);
    cli(['approvals', 'deny', id, '--reason', 'not today']);
    const r = await p.done;
    expect(r.status).toBe(81);
    expect(r.stdout.split('\n')[0]).toBe(`plan ${id}: denied`);
    expect(r.stderr).toContain('not today');
    const step = run(dw, ['submit', 'deploy', 'target=qa', '--plan', id]).stdout.trim();
    await host.waitResult(step, ['awaiting_approval']);
    cli(['approvals', 'deny', step]);
    expect((await host.waitResult(step)).state).toBe('denied');
    expect(runs()).not.toContain(step);
  });

  it('dw plan reads the plan from stdin, and refuses a plan that does not fit before writing anything', () => {
    const before = spoolFiles();
    const bad: [string[], string | undefined, number, string][] = [
      [['plan', '-'], '{"steps": []}', 65, 'the plan on stdin: a plan needs at least one step'],
      [['plan', '-'], '[{"op": "rm"}]', 65, 'the plan on stdin: steps[0]: the host offers no operation "rm"'],
      [['plan', '-'], '[{"op": "deploy", "args": {"target": "moon"}}]', 65, 'steps[0] (deploy): argument "target" must be one of'],
      [['plan', '-'], JSON.stringify(Array(51).fill({ op: 'echo', args: { msg: 'x' } })), 65, 'a plan has at most 50 steps, this one has 51'],
      [['plan', '-', '--expires', '25h'], '[{"op": "echo", "args": {"msg": "x"}}]', 64, '--expires is at most 24 h'],
      [['plan', path.join(sandbox, 'no-such-plan.json')], undefined, 64, 'cannot read the plan'],
    ];
    for (const [args, input, status, message] of bad) {
      const r = run(dw, args, input);
      expect(r.status, message).toBe(status);
      expect(r.stderr).toContain(message);
    }
    expect(spoolFiles()).toEqual(before);
    expectAlive(dw);
  });

  it('--time-limit 1 ends the run with timeout; more than the operation allows is refused bad_args (80); not a whole number is a usage error with nothing written', async () => {
    const r = run(dw, ['run', 'slow', '--time-limit', '1']);
    expect(r.status).toBe(86);
    const id = firstLine(r.stderr);
    expect(host.result(id)).toMatchObject({ state: 'failed', error: { code: 'timeout' } });
    expect(r.stderr).toContain(`${id}`);
    expect(r.stderr).toContain('timeout');

    const more = run(dw, ['run', 'slow', '--time-limit', '31']);
    expect(more.status).toBe(80);
    expect(more.stderr).toContain('bad_args');
    expect(host.result(firstLine(more.stderr))).toMatchObject({ state: 'rejected', started_at: null });

    const before = spoolFiles();
    for (const args of [['--time-limit', '0'], ['--time-limit', '1.5'], ['--max-output', 'lots'], ['--plan', '../results/x']]) {
      const bad = run(dw, ['run', 'echo', 'msg=x', ...args]);
      expect(bad.status, args.join(' ')).toBe(64);
      expect(bad.stderr).toContain(args[0]);
    }
    expect(spoolFiles()).toEqual(before);
    expectAlive(dw);
  });

  it('--timeout on dw run and dw plan is how long dw waits (85, the request goes on and succeeds), not a limit sent with the request', async () => {
    // The run waits for a file the test writes only once dw has given up waiting: exit 85 whatever the machine's pace.
    const go = path.join(sandbox, `go-wait-${dw}`);
    const r = run(dw, ['run', 'gated', `go=${go}`, '--timeout', '1']);
    expect(r.status).toBe(85);
    const id = firstLine(r.stderr);
    expect(r.stderr).toContain(`dw wait ${id}`);
    await host.waitResult(id, ['running']);
    // Sent as the run's own limit, it would be in the ledger and would have ended the run (failed, timeout).
    expect(host.service((s) => s.requests.get(id)!.limits_json)).toBeNull();
    writeFileSync(go, '');
    expect(await host.waitResult(id)).toMatchObject({ state: 'succeeded', stdout: 'started\ndone\n', error: null });

    const p = run(dw, ['plan', planFile(`wait-${dw}.json`, [{ op: 'deploy', args: { target: 'qa' } }]), '--timeout', '1']);
    expect(p.status).toBe(85);
    const planId = firstLine(p.stderr);
    expect(p.stderr).toContain(`dw wait ${planId}`);
    expect((await host.waitResult(planId, ['awaiting_approval'])).state).toBe('awaiting_approval');
    cli(['approvals', 'deny', planId]);
    expect((await host.waitResult(planId)).state).toBe('denied');
    expectAlive(dw);
  });

  it('--max-output keeps that much of the output, and the signed result says it was cut', async () => {
    const r = run(dw, ['run', 'echo', 'msg=0123456789abcdef', '--max-output', '8']);
    expect(r.status).toBe(0);
    const result = host.result(firstLine(r.stderr))!;
    expect(result).toMatchObject({ state: 'succeeded', stdout_truncated: true });
    expect(result.stdout.length).toBeLessThanOrEqual(8);
  });
});

async function mcp(): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(sandbox, 'dw.cjs'), 'mcp'], env, cwd: sandbox, stderr: 'pipe' });
  const client = new Client({ name: 'plan-clients-test', version: '1' });
  await client.connect(transport);
  return client;
}

const body = (r: unknown) => JSON.parse(((r as CallToolResult).content[0] as { text: string }).text) as Record<string, unknown>;

describe('dw mcp', () => {
  it('offers dumbwaiter_plan, and dumbwaiter_plan_id on every operation tool', async () => {
    const client = await mcp();
    try {
      const { tools } = await client.listTools();
      const plan = tools.find((t) => t.name === 'dumbwaiter_plan')!;
      expect(plan.inputSchema.required).toEqual(['steps', 'intent']);
      expect(plan.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
      for (const name of ['echo', 'deploy', 'slow']) {
        expect(tools.find((t) => t.name === name)!.inputSchema.properties?.dumbwaiter_plan_id).toMatchObject({ type: 'string' });
      }
    } finally {
      await client.close();
    }
  });

  it('dumbwaiter_plan waits for the decision with progress, returns the plan id and its steps; a step called with dumbwaiter_plan_id runs without asking', async () => {
    const client = await mcp();
    try {
      const seen: Progress[] = [];
      const call = client.callTool(
        { name: 'dumbwaiter_plan', arguments: { steps: [{ op: 'deploy', args: { target: 'staging' } }], intent: 'ship to staging', expires_in_s: 600 } },
        undefined,
        { onprogress: (p) => seen.push(p), resetTimeoutOnProgress: true },
      );
      const id = await eventually('the plan id in progress', () => /plan (\S+) was submitted/.exec(seen[0]?.message ?? '')?.[1]);
      await host.waitResult(id, ['awaiting_approval']);
      await eventually('progress saying a human is asked', () => (seen.some((p) => p.message?.includes(`plan ${id} waits for a human to approve it`)) ? true : undefined));
      cli(['approvals', 'approve', id]);
      const r = await call;
      expect(r.isError).toBe(false);
      const plan = body(r);
      expect(plan).toMatchObject({ plan_id: id, state: 'approved' });
      expect((plan.steps as PlanStep[]).map((s) => [s.op, s.argv.at(-1), s.cwd, s.scope])).toEqual([['deploy', 'staging', host.work, 'write']]);
      expect(plan.note).toContain(`dumbwaiter_plan_id "${id}"`);

      const step = await client.callTool({ name: 'deploy', arguments: { target: 'staging', dumbwaiter_plan_id: id } });
      expect(step.isError).toBe(false);
      const stepBody = body(step);
      expect(stepBody).toMatchObject({ state: 'succeeded', stdout: 'deployed staging\n' });
      expect(decidedBy(stepBody.id as string)).toBe(`plan ${id}`);
      // dumbwaiter_status of the plan: the step used by that request.
      await eventually('the plan to show its used step', async () => {
        const st = body(await client.callTool({ name: 'dumbwaiter_status', arguments: { id } }));
        return (st.steps as PlanStep[])[0]!.request_id === stepBody.id ? st : undefined;
      });
    } finally {
      await client.close();
    }
  });

  it('a denied plan is an error result; a plan that does not fit is refused before anything is written', async () => {
    const client = await mcp();
    try {
      const before = spoolFiles();
      for (const [args, message] of [
        [{ steps: [{ op: 'rm' }], intent: 'x' }, 'the host offers no operation "rm"'],
        [{ steps: [], intent: 'x' }, 'a plan needs at least one step'],
        [{ steps: [{ op: 'echo', args: { msg: 'x' } }] }, 'intent must say what the plan is for'],
        [{ steps: [{ op: 'echo', args: { msg: 'x' } }], intent: 'x', expires_in_s: 90_000 }, 'expires_in_s must be a number of seconds from 1 to 86400'],
      ] as const) {
        const r = (await client.callTool({ name: 'dumbwaiter_plan', arguments: args })) as CallToolResult;
        expect(r.isError).toBe(true);
        expect((r.content[0] as { text: string }).text).toContain(message);
      }
      expect(spoolFiles()).toEqual(before);
      const bad = (await client.callTool({ name: 'echo', arguments: { msg: 'x', dumbwaiter_plan_id: '../x' } })) as CallToolResult;
      expect(bad.isError).toBe(true);

      const seen: Progress[] = [];
      const call = client.callTool({ name: 'dumbwaiter_plan', arguments: { steps: [{ op: 'deploy', args: { target: 'qa' } }], intent: 'qa' } }, undefined, {
        onprogress: (p) => seen.push(p),
        resetTimeoutOnProgress: true,
      });
      const id = await eventually('the plan id in progress', () => /plan (\S+) was submitted/.exec(seen[0]?.message ?? '')?.[1]);
      await host.waitResult(id, ['awaiting_approval']);
      cli(['approvals', 'deny', id]);
      const r = (await call) as CallToolResult;
      expect(r.isError).toBe(true);
      expect(body(r)).toMatchObject({ plan_id: id, state: 'denied' });
    } finally {
      await client.close();
    }
  });
});
