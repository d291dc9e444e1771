// `dw`: the sandbox's command line. Bundled into one file (spool/bin/dw.cjs) that runs on Node 18+.
import { parseArgs } from 'node:util';
import { closeSync, openSync, readSync } from 'node:fs';
import { loadKeyFile, KeyFileError } from './keyFile';
import { BadRequestIdError, RequestTooLargeError, SpoolClient, checkRequestId, hostDownText, isResult, isSettled, logCheckNote, type Followed, type Status, type SubmitRequest } from './spoolClient';
import { argsFromPairs, checkArgs, ArgError } from './typedArgs';
import { opsLines } from './catalogEntries';
import { EXIT, EXIT_MEANINGS, exitCodeOf } from './exitCodes';
import { checkSpool, NotASpoolError, SpoolPermissionError } from './spoolAccess';
import { DEFAULT_PLAN_EXPIRES_S, PlanError, parsePlanText, planBody, planHead } from './plans';
import { MAX_PLAN_LIFETIME_S, PLAN_OP, type ProposedStep } from '../protocol/plan';
import { FlagError, durationSeconds, positiveInteger } from './flagValues';
import { outcomeLines, pendingNotes, statusLines, type Ended } from './runNotes';
import { utcText, waitingText } from './approvalWait';
import { COMMAND_HELP } from './commandHelp';
import { MAX_INTENT_CHARS, MAX_REQUEST_BYTES, type InboxMessage, type ResultDoc } from '../protocol/types';
import { isRequestId } from '../protocol/ids';
import { visible, visibleJson } from '../text/visible';

class Exit extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const HELP = `dw: ask the Dumbwaiter host to run an allowlisted operation

  dw ops [--json]
  dw submit OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--expires-in S] [LIMITS]
  dw status ID [--json]
  dw wait ID [--timeout S] [--json]
  dw run OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--timeout S] [LIMITS]
  dw plan FILE|- [--intent TEXT] [--expires DURATION] [--id ID] [--timeout S] [--json]
  dw cancel ID
  dw inbox [--json]
  dw doctor
  dw mcp [--wait-s S]                 (Node only) an MCP server on stdio
  dw help COMMAND                     (or dw COMMAND --help) that command's usage

Options: --spool DIR (else $DUMBWAITER_SPOOL), --key-file FILE (else $DUMBWAITER_KEY_FILE).
LIMITS of one request, at most the operation's (larger is rejected, bad_args): --time-limit S (its
run is stopped after S seconds), --max-output BYTES; --plan ID runs it as a step of that approved plan.
--timeout S on dw wait, run and plan stops waiting after S seconds (85; the request goes on).
dw plan: FILE (or - for stdin) holds {"steps": [{"op": OP, "args": {...}}, ...]} (at most 50 steps);
it waits for a human's decision (an approved plan is usable for --expires, default 1h, at most 24h).
Exit codes:
${EXIT_MEANINGS.map(({ code, meaning }) => `  ${code.padEnd(6)}${meaning.replace(/`/g, '')}\n`).join('')}`;

const OPTIONS = {
  spool: { type: 'string' },
  'key-file': { type: 'string' },
  json: { type: 'boolean', default: false },
  'args-json': { type: 'string' },
  id: { type: 'string' },
  intent: { type: 'string' },
  'expires-in': { type: 'string' },
  expires: { type: 'string' },
  timeout: { type: 'string' },
  'time-limit': { type: 'string' },
  'max-output': { type: 'string' },
  plan: { type: 'string' },
  'wait-s': { type: 'string' }, // dw mcp's only: how long a tool call waits before it returns the id
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function spoolOf(v: Values): string {
  const spool = v.spool ?? process.env.DUMBWAITER_SPOOL;
  if (!spool) throw new Exit(EXIT.usage, 'no spool: pass --spool DIR or set DUMBWAITER_SPOOL');
  try {
    checkSpool(spool);
  } catch (e) {
    if (e instanceof NotASpoolError) throw new Exit(EXIT.unavailable, e.message);
    throw e;
  }
  return spool;
}

const notice = (text: string) => void process.stderr.write(`dw: ${text}\n`);

/** Says once, when the request comes to wait for a human, that it does, why, and until when. */
function noticeWhenWaiting(): (s: Status) => void {
  let said = false;
  return (s) => {
    if (said || s.state !== 'awaiting_approval') return;
    said = true;
    notice(waitingText(s));
  };
}

function clientOf(v: Values, onNotice: (text: string) => void = notice): SpoolClient {
  const spool = spoolOf(v);
  const keyFile = v['key-file'] ?? process.env.DUMBWAITER_KEY_FILE;
  if (!keyFile) throw new Exit(EXIT.noKey, 'no key: pass --key-file FILE or set DUMBWAITER_KEY_FILE');
  try {
    return new SpoolClient(spool, loadKeyFile(keyFile), { onNotice });
  } catch (e) {
    if (e instanceof KeyFileError) throw new Exit(EXIT.noKey, e.message);
    throw e;
  }
}

function seconds(text: string | undefined, what: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) throw new Exit(EXIT.usage, `${what} must be a number of seconds`);
  return n;
}

/** The typed args of a request from the command line, checked against the catalog before anything is written. */
function requestArgs(c: SpoolClient, op: string, pairs: string[], v: Values): Record<string, unknown> {
  let base: Record<string, unknown> = {};
  if (v['args-json'] !== undefined) {
    try {
      base = JSON.parse(v['args-json']) as Record<string, unknown>;
    } catch {
      throw new Exit(EXIT.badArgs, '--args-json is not valid JSON');
    }
    if (typeof base !== 'object' || base === null || Array.isArray(base)) throw new Exit(EXIT.badArgs, '--args-json must be a JSON object');
  }
  if (op.startsWith('dumbwaiter.')) {
    // Built-ins are not in the catalog: their arguments go as given.
    for (const p of pairs) {
      const eq = p.indexOf('=');
      if (eq <= 0) throw new Exit(EXIT.badArgs, `"${p}" is not name=value`);
      // An own property whatever the name (`__proto__` would set the prototype, and be dropped): the host judges it.
      Object.defineProperty(base, p.slice(0, eq), { value: p.slice(eq + 1), enumerable: true, writable: true, configurable: true });
    }
    return base;
  }
  const offered = c.catalog()?.operations ?? [];
  const entry = offered.find((o) => o.name === op);
  if (!entry) {
    const known = offered.map((o) => o.name);
    throw new Exit(EXIT.badArgs, `the host offers no operation "${op}"${known.length ? ` (it offers: ${known.join(', ')})` : ''}`);
  }
  try {
    if (pairs.length === 0) {
      checkArgs(entry.args_schema, base);
      return base;
    }
    return argsFromPairs(entry.args_schema, pairs, base);
  } catch (e) {
    if (e instanceof ArgError) throw new Exit(EXIT.badArgs, `${op}: ${e.message}`);
    throw e;
  }
}

/** A flag's value, or the usage error (64) saying what it takes. */
function flag<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof FlagError) throw new Exit(EXIT.usage, e.message);
    throw e;
  }
}

/** Writes a request; the id, or why nothing was written. */
function submit(c: SpoolClient, r: SubmitRequest): string {
  if (r.intent !== undefined && [...r.intent].length > MAX_INTENT_CHARS) throw new Exit(EXIT.badArgs, `--intent is longer than ${MAX_INTENT_CHARS} characters`);
  try {
    return c.submit(r);
  } catch (e) {
    if (e instanceof SpoolPermissionError) throw e;
    if (e instanceof RequestTooLargeError) throw new Exit(EXIT.badArgs, e.message);
    if (e instanceof BadRequestIdError) throw new Exit(EXIT.usage, e.message);
    throw new Exit(EXIT.unavailable, (e as Error).message);
  }
}

function submitFrom(c: SpoolClient, positionals: string[], v: Values): string {
  const [op, ...pairs] = positionals;
  if (!op) throw new Exit(EXIT.usage, 'which operation? (see: dw ops)');
  const expiresIn = seconds(v['expires-in'], '--expires-in');
  const timeLimit = flag(() => positiveInteger(v['time-limit'], '--time-limit', 'seconds'));
  const maxOutput = flag(() => positiveInteger(v['max-output'], '--max-output', 'bytes'));
  if (v.plan !== undefined && !isRequestId(v.plan)) throw new Exit(EXIT.usage, `--plan takes the id of an approved plan (as dw plan printed it), not "${visible(v.plan)}"`);
  const args = requestArgs(c, op, pairs, v);
  return submit(c, {
    op,
    args,
    id: v.id,
    intent: v.intent,
    expiresAt: expiresIn === undefined ? undefined : new Date(Date.now() + expiresIn * 1000),
    ...(v.plan !== undefined ? { plan_id: v.plan } : {}),
    ...(timeLimit !== undefined ? { timeout_s: timeLimit } : {}),
    ...(maxOutput !== undefined ? { max_output_bytes: maxOutput } : {}),
  });
}

/** A plan file (or stdin for `-`), read up to the largest request there can be. */
function readPlanFile(file: string): string {
  const cap = MAX_REQUEST_BYTES;
  let fd: number;
  try {
    fd = file === '-' ? 0 : openSync(file, 'r');
  } catch (e) {
    throw new Exit(EXIT.usage, `cannot read the plan ${file}: ${(e as Error).message}`);
  }
  const buf = Buffer.alloc(cap + 1);
  let n = 0;
  try {
    for (let got; n < buf.length && (got = readSync(fd, buf, n, buf.length - n, null)) > 0; n += got);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EOF') throw new Exit(EXIT.usage, `cannot read the plan ${file}: ${(e as Error).message}`);
  } finally {
    if (fd !== 0) closeSync(fd);
  }
  if (n > cap) throw new Exit(EXIT.badArgs, `the plan ${file} is larger than ${cap} bytes, more than a request may have`);
  return buf.subarray(0, n).toString('utf8');
}

function planSteps(c: SpoolClient, file: string): ProposedStep[] {
  try {
    return parsePlanText(readPlanFile(file), c.catalog());
  } catch (e) {
    if (e instanceof PlanError) throw new Exit(EXIT.badArgs, `${file === '-' ? 'the plan on stdin' : file}: ${e.message}`);
    throw e;
  }
}

/** An inbox message on one line, its time in UTC. The host signed it, but its words may quote the sandbox's. */
function inboxLine(m: InboxMessage): string {
  return visible(`${utcText(m.created_at) ?? m.created_at}  ${m.kind}${m.ref ? ` (${m.ref})` : ''}: ${m.text}`);
}

/** The run's output as the host signed it in its result: the outcome, whatever the live log showed. */
function printSignedOutput(s: ResultDoc): void {
  process.stdout.write(s.stdout);
  process.stderr.write(s.stderr);
}

/** What a settled (or still pending) request says, on stdout and stderr. */
function report(c: SpoolClient, s: Status, withOutput: boolean): void {
  const plan = isResult(s) && s.op === PLAN_OP;
  if (plan) process.stdout.write([planHead(s), ...planBody(s)].map((l) => `${l}\n`).join(''));
  if (!isSettled(s)) {
    const host = c.hostState();
    const why = host.running && !(host.held && s.state === 'unclaimed') ? '' : `: ${hostDownText(host, s)}`;
    notice(`${s.id} is still ${s.state}${why}; check again with: dw wait ${s.id}`);
    if (isResult(s)) for (const line of pendingNotes(s)) notice(line);
    return;
  }
  if (withOutput && !plan && isResult(s)) printSignedOutput(s);
  for (const line of outcomeLines(s as Ended)) notice(line);
}

/** After `dw run` streamed the live log: whether it was the host's, and the signed output unless it was checked to be. */
function reportRun(c: SpoolClient, s: Followed): void {
  const note = isResult(s) && isSettled(s) ? logCheckNote(s.log.check, s, 'stream') : null;
  if (note) notice(note);
  report(c, s, s.log.check !== 'match');
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new Exit(EXIT.usage, (e as Error).message);
  }
  const { values: v, positionals } = parsed;
  const [cmd, ...rest] = positionals;
  // `dw CMD --help` and `dw help CMD`: that command's usage; else the whole help.
  const helpOf = cmd === 'help' ? rest[0] : v.help ? cmd : undefined;
  if (cmd === 'help' || v.help || !cmd) {
    process.stdout.write((helpOf !== undefined && Object.hasOwn(COMMAND_HELP, helpOf) ? COMMAND_HELP[helpOf] : undefined) ?? HELP);
    return cmd || v.help ? EXIT.ok : EXIT.usage;
  }
  switch (cmd) {
    case 'ops': {
      const catalog = new SpoolClient(spoolOf(v), null).catalog();
      if (!catalog) throw new Exit(EXIT.unavailable, 'no catalog.json in the spool: has the host ever run?');
      for (const line of catalog.skipped) notice(line);
      if (v.json) return print(catalog.operations);
      process.stdout.write(opsLines(catalog.operations).map((l) => `${l}\n`).join(''));
      return EXIT.ok;
    }
    case 'submit': {
      const c = clientOf(v);
      const id = submitFrom(c, rest, v);
      process.stdout.write(id + '\n');
      const host = c.hostState();
      if (!host.running || host.held) notice(hostDownText(host, { id, state: 'unclaimed' }));
      return EXIT.ok;
    }
    case 'status': {
      const id = requestId(rest[0], 'dw status ID');
      const s = clientOf(v).status(id);
      if (v.json) return print(s);
      process.stdout.write(statusLines(s, isSettled(s)).map((l) => `${l}\n`).join(''));
      return EXIT.ok;
    }
    case 'wait': {
      const id = requestId(rest[0], 'dw wait ID');
      const c = clientOf(v);
      const s = await c.wait(id, { timeoutMs: timeoutMs(v), onChange: noticeWhenWaiting() });
      if (v.json) print(s);
      else report(c, s, true);
      return exitCodeOf(s);
    }
    case 'run': {
      const c = clientOf(v);
      const id = submitFrom(c, rest, v);
      process.stderr.write(`${id}\n`);
      const s = await c.follow(id, (chunk) => process.stdout.write(chunk), { timeoutMs: timeoutMs(v), onChange: noticeWhenWaiting() });
      reportRun(c, s);
      return exitCodeOf(s);
    }
    case 'plan': {
      if (rest.length !== 1) throw new Exit(EXIT.usage, 'usage: dw plan FILE|- [--intent TEXT] [--expires DURATION]');
      const expiresS = v.expires === undefined ? DEFAULT_PLAN_EXPIRES_S : flag(() => durationSeconds(v.expires!, '--expires', MAX_PLAN_LIFETIME_S));
      const c = clientOf(v);
      const steps = planSteps(c, rest[0]!);
      const id = submit(c, { op: PLAN_OP, args: { steps }, id: v.id, intent: v.intent, expiresAt: new Date(Date.now() + expiresS * 1000) });
      process.stderr.write(`${id}\n`);
      const s = await c.wait(id, { timeoutMs: timeoutMs(v), onChange: noticeWhenWaiting() });
      if (v.json) print(s);
      else report(c, s, true);
      return exitCodeOf(s);
    }
    case 'cancel': {
      const target = requestId(rest[0], 'dw cancel ID');
      const c = clientOf(v);
      const id = c.submit({ op: 'dumbwaiter.cancel', args: { target } });
      const s = await c.wait(id, { timeoutMs: timeoutMs(v) ?? 30_000 });
      report(c, s, true);
      return exitCodeOf(s);
    }
    case 'inbox': {
      // Only what the host signed for this key: anyone can write into inbox/.
      const msgs = clientOf(v).inbox();
      if (v.json) return print(msgs);
      if (msgs.length === 0) process.stdout.write('No messages.\n');
      for (const m of msgs) process.stdout.write(`${inboxLine(m)}\n`);
      return EXIT.ok;
    }
    case 'doctor':
      return doctor(v);
    case 'mcp': {
      const { serveMcp } = await import('./mcp');
      const waitS = seconds(v['wait-s'], '--wait-s');
      await serveMcp(clientOf(v), waitS === undefined ? undefined : waitS * 1000);
      return EXIT.ok;
    }
    default:
      throw new Exit(EXIT.usage, `unknown command "${cmd}" (see: dw --help)`);
  }
}

function need(x: string | undefined, usage: string): string {
  if (!x) throw new Exit(EXIT.usage, `usage: ${usage}`);
  return x;
}

/** An id given on the command line: one that is not a request id would name files outside the spool's folders. */
function requestId(x: string | undefined, usage: string): string {
  try {
    return checkRequestId(need(x, usage));
  } catch (e) {
    if (e instanceof BadRequestIdError) throw new Exit(EXIT.usage, e.message);
    throw e;
  }
}

/** How long dw wait, run and plan wait (`--timeout S`; a run's own limit is `--time-limit S`). */
function timeoutMs(v: Values): number | undefined {
  const s = seconds(v.timeout, '--timeout');
  return s === undefined ? undefined : s * 1000;
}

/** JSON for a program: the same values, with nothing in its strings that a terminal would act on. */
function print(x: unknown): number {
  process.stdout.write(visibleJson(JSON.stringify(x, null, 2)) + '\n');
  return EXIT.ok;
}

/** Each check on one line. The ping goes even when host.json says the host is down (anyone can write
 *  host.json; only the host can sign the answer), with a shorter wait then. */
async function doctor(v: Values): Promise<number> {
  let ok = true;
  const line = (pass: boolean | 'skip', what: string) => {
    ok &&= pass !== false;
    process.stdout.write(`${pass === 'skip' ? 'skip' : pass ? 'ok  ' : 'FAIL'}  ${what}\n`);
  };
  let c: SpoolClient;
  try {
    line(true, `spool ${spoolOf(v)}: reachable`);
  } catch (e) {
    line(false, (e as Error).message);
    return e instanceof SpoolPermissionError ? EXIT.noPerm : EXIT.unavailable;
  }
  const ignored: string[] = [];
  try {
    // The ping's client keeps its notices (files it ignored) for the "results signed" line.
    c = clientOf(v, (t) => ignored.push(t));
    line(true, `key file: key ${c.key!.key_id}`);
  } catch (e) {
    line(false, (e as Error).message);
    return EXIT.unavailable;
  }
  const host = c.hostState();
  const waitS = host.running ? 10 : 5;
  const sent = Date.now();
  const id = c.submit({ op: 'dumbwaiter.ping' });
  const s = await c.wait(id, { timeoutMs: waitS * 1000 });
  // An unanswered ping is taken back, so that a host that comes back later does not find it.
  if (s.state === 'unclaimed') c.withdraw(id);
  if (host.running || !isResult(s)) line(host.running && !host.held, host.text);
  else line(true, `the host is running: it answered the ping, signed for this key (host.json says otherwise: ${host.text})`);
  // Only the host can fix its mount: a degraded one (no file events, say) still works, more slowly.
  if (host.probe) line(host.probe.verdict !== 'unusable', `mount, as the host probed it: ${host.probe.verdict}: ${visible(host.probe.summary)}`);
  if (isResult(s)) {
    if (s.state === 'succeeded') {
      const pong = JSON.parse(s.stdout) as { time: string; scope: string };
      // The host answered between our write and our read: compare its clock with the middle of that span.
      const skew = (Date.parse(pong.time) - (sent + Date.now()) / 2) / 1000;
      line(Math.abs(skew) < 60, `clocks: the host is ${Math.abs(skew).toFixed(1)} s ${skew >= 0 ? 'ahead of' : 'behind'} this sandbox (requests more than 5 min ahead are refused)`);
      line(true, `key accepted (scope ${pong.scope})`);
    } else {
      line('skip', 'clocks: not checked (the ping did not succeed)');
      line(false, `key not accepted: ${s.error ? `${s.error.code}: ${s.error.message}` : s.state}`);
    }
    line(true, 'results signed: the answer to the ping is signed for this key');
  } else {
    line('skip', 'clocks: not checked (no signed answer to the ping)');
    if ('unsigned' in s) {
      line(false, `key not accepted: the host does not know this key / the key file is not the host's (an unsigned refusal: ${s.error.code}: ${s.error.message})`);
    } else {
      line(false, `key not accepted: no answer within ${waitS} s (${s.state === 'conflict' ? s.message : s.state})`);
    }
    line(false, `results signed: no answer to the ping signed for this key${ignored.length > 0 ? ` (${ignored.join('; ')})` : ''}`);
  }
  return ok ? EXIT.ok : EXIT.unavailable;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof Exit || e instanceof SpoolPermissionError) {
      process.stderr.write(`dw: ${e.message}\n`);
      process.exitCode = e instanceof Exit ? e.code : EXIT.noPerm;
    } else {
      process.stderr.write(`dw: ${(e as Error).stack ?? String(e)}\n`);
      process.exitCode = EXIT.unavailable; // as dw.py: 70 could be taken for the operation's own code
    }
  },
);
