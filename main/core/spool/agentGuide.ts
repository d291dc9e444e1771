// The guide for the agent in the sandbox, generated from the catalog: bin/AGENTS.md, and bin/SKILL.md
// (the same text behind Agent Skills front matter). It tells the agent what the host offers, how to ask
// for it and how to read the answers. Descriptions, patterns and path roots come from the allowlist:
// the host's own words, but any of them could still break the Markdown (a newline starting a heading,
// a backtick opening a code span that swallows the rest), so each is kept on one line and escaped.
import { describeArgs } from '../../../shared/client/typedArgs';
import { visible } from '../../../shared/text/visible';
import type { CatalogDoc, CatalogOperation } from '../../../shared/protocol/types';
import { EXIT, EXIT_MEANINGS } from '../../../shared/client/exitCodes';
import { DEFAULT_WAIT_S } from '../../../shared/client/limits';

export interface AgentGuide {
  /** bin/AGENTS.md */
  agents: string;
  /** bin/SKILL.md */
  skill: string;
}

/** Agent Skills: a skill's name is lowercase letters, digits and hyphens; its description at most 1,024 characters. */
export const SKILL_NAME = 'dumbwaiter';
const DESCRIPTION_MAX = 1024;

/** One line: every run of white space (newlines, U+2028 included) is one space, and what would act
 *  instead of showing (controls, bidi overrides) is written as a visible escape. */
function oneLine(s: string): string {
  return visible(s.replace(/\s+/gu, ' ').trim());
}

/** Plain text inside a line of Markdown: what could open markup that swallows, hides or splits text
 *  (code spans, links, HTML and comments, table cells, entities) is escaped. Emphasis marks only change
 *  how words look, and are left as written so that `max_length` and `~/Documents` read as they are. */
export function mdText(s: string): string {
  return oneLine(s).replace(/[\\`[\]<>|]|&(?=#?\w+;)/g, '\\$&');
}

/** A code span that holds `s` whatever backticks it contains (its fence is longer than any run inside). */
export function mdCode(s: string): string {
  const text = oneLine(s);
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

const DW = 'node "$DUMBWAITER_SPOOL/bin/dw.cjs"';

function operation(op: CatalogOperation): string {
  const approval = op.approval === 'always' ? 'a human approves each run' : 'runs without asking';
  const description = op.description.trim() ? `: ${mdText(op.description)}` : '';
  const args = describeArgs(op.args_schema);
  const lines = args.length ? args.map((a) => `  - ${mdCode(a)}`) : ['  - no arguments'];
  const reconcile = op.reconcile ? ', the host can check whether an interrupted run took effect' : '';
  return [`- ${mdCode(op.name)} (${op.scope}, ${approval}, timeout ${op.timeout_s} s${reconcile})${description}`, ...lines].join('\n');
}

function operations(catalog: CatalogDoc): string {
  if (catalog.operations.length === 0) return 'The host offers no operations right now (its allowlist is empty).';
  return catalog.operations.map(operation).join('\n');
}

function body(catalog: CatalogDoc): string {
  return `# Dumbwaiter: operations the host runs for you

<!-- Written by the Dumbwaiter host from its catalog, and rewritten whenever its allowlist changes: edits here are lost. -->

You work in a sandbox. Dumbwaiter is a program on the host (the machine outside the sandbox) that runs
a fixed list of operations for you: its allowlist, chosen by a human. Nothing outside that list can be
run through it, arguments are checked against their types, and some operations wait for a human to
approve them. You reach it through the spool folder \`$DUMBWAITER_SPOOL\` with your key file
\`$DUMBWAITER_KEY_FILE\`, using the client in the spool: \`${DW}\` (Node 18+) or
\`python3 "$DUMBWAITER_SPOOL/bin/dw.py"\` (Python 3.8+, every command but \`mcp\`).

## Commands

\`\`\`sh
${DW} doctor                       # is the spool there, the key valid, the host running?
${DW} ops                          # the operations and their arguments, as the host offers them now
${DW} run OP name=value ... --intent "why"     # submit, stream the output, exit with the result's code
${DW} submit OP name=value ... --id ID --intent "why"   # write the request, print its id, return at once
${DW} wait ID --timeout 600        # wait for a request's result and exit with its code
${DW} status ID                    # its state now, without waiting
${DW} cancel ID                    # ask the host to cancel it
${DW} inbox                        # messages from the host (conflicts, a revoked key, notices)
\`\`\`

Arguments are typed by the catalog: \`count=5\` is an integer where the operation says so, a list takes the
argument several times (\`files=a.ts files=b.ts\`); \`--args-json '{"count": 5}'\` gives them all at once.
Add \`--json\` to \`ops\`, \`status\` and \`wait\` for the exact state.
\`--time-limit S\` and \`--max-output BYTES\` on \`run\` or \`submit\` tighten one request's limits (at most the
operation's: more is rejected, \`bad_args\`); \`--timeout S\` bounds how long \`wait\`, \`run\` or \`plan\` waits (exit 85 after).

## Operations

As the catalog said when this file was written (\`dw ops\` shows the current list). A read operation
can be run with a read or a write key, a write operation only with a write key.

${operations(catalog)}

## Exit codes

| code | meaning |
| --- | --- |
${EXIT_MEANINGS.map(({ code, meaning }) => `| ${code} | ${meaning} |`).join('\n')}

An operation may itself exit with one of ${EXIT.usage}-${EXIT.conflict}; \`--json\` gives the exact state when that matters.

## Retrying safely

Give a request your own id with \`--id\` (letters, digits, \`.\`, \`_\`, \`-\`) when you may need to retry it:
the same id with the same operation and arguments is a replay, answered with the first run's result and
never run twice. The same id with other arguments is a conflict (exit 87), and nothing runs: use a new id
for a different request. After exit 85 (still pending) or a lost connection, \`dw wait ID\` again rather
than submitting anew.

## Plans

When a task needs several operations a human must approve, propose them at once:
\`${DW} plan plan.json --intent "why"\`, where \`plan.json\` (or \`-\` for stdin) holds
\`{"steps": [{"op": "OP", "args": {...}}, ...]}\` (at most 50 steps, \`--expires 2h\` for how long it may be
used: 1 h by default, 24 h at most). The human sees every step's exact command before approving;
\`dw plan\` waits for the decision and prints the plan id (exit 0 approved, 81 denied). Then run each step
with \`${DW} run OP name=value ... --plan PLAN_ID\` and exactly the step's arguments: it runs without
asking again, each step once. Anything else (other arguments, a step used twice, a denied or expired
plan) goes through the usual approval. Over MCP: the tool \`dumbwaiter_plan\`, then \`dumbwaiter_plan_id\` on each call.

## Intent

\`--intent "..."\` says in a sentence why you ask. It is shown to the human who approves or reviews the
request, and recorded with it: say what you are trying to do, plainly.

## Results are signed

The host signs every result of a request it could authenticate, and every inbox message, for your key.
A refusal of a request it could not authenticate (an unknown key, a bad signature) cannot be signed:
the clients say so when they report one. They believe only what the host signed for your key and for
the request you asked about, and say on stderr when they ignore a file
(\`dw: ignored results/ID.json: ...\`): anyone who can write the spool could have put it there.
Trust the exit code and output \`dw\` gives you, not files you read from the spool yourself. If \`dw\` says
the host is not running, the request waits in \`queue/\` until it is back: wait, do not resubmit.

## MCP

\`${DW} mcp\` is a stdio MCP server (with the same two environment variables). Each operation is a tool
whose input is its arguments, plus an optional \`dumbwaiter_intent\` (the intent, as above). A call
without a progress token waits for the result up to ${DEFAULT_WAIT_S} s (unless \`dw mcp --wait-s S\` says otherwise);
past that it returns the request's id and state: call \`dumbwaiter_wait\` with that id (again, as often
as needed), \`dumbwaiter_status\` to check without waiting, or \`dumbwaiter_cancel\` to cancel. Never call
the operation again to get the result. A call with a progress token waits until the request is settled
and sends progress notifications meanwhile (its state and live output), so a client that resets its timeout on progress never loses it.
`;
}

/** The skill's description: what it is for and when to use it, naming the operations while they fit. */
function skillDescription(catalog: CatalogDoc): string {
  const base =
    'Run operations on the host outside this sandbox through Dumbwaiter, which runs only the allowlisted operations a human chose ' +
    '(some after a human approves them). Use it when a task needs one of them: to list them, submit a request, wait for its result, ' +
    'read its exit code and retry it safely.';
  const names = catalog.operations.map((o) => o.name);
  if (names.length === 0) return base;
  for (let n = names.length; n > 0; n--) {
    const more = names.length - n;
    const text = `${base} Operations: ${names.slice(0, n).join(', ')}${more ? ` and ${more} more` : ''}.`;
    if (text.length <= DESCRIPTION_MAX) return text;
  }
  return base;
}

export function agentGuide(catalog: CatalogDoc): AgentGuide {
  const text = body(catalog);
  // A JSON string is a YAML double-quoted scalar: no name or character can break the front matter.
  const front = `---\nname: ${SKILL_NAME}\ndescription: ${JSON.stringify(skillDescription(catalog))}\n---\n\n`;
  return { agents: text, skill: front + text };
}
