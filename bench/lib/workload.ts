// Realistic generated history: request lifecycles with the daemon's own audit kinds and message
// formats (see main/core/daemon/*.ts, decisions.ts, host/), seeded so every run gets the same data.
import { createHash } from 'node:crypto';
import type { AuditEntry } from '../../main/core/ledger/audit';
import { pick, rng, weighted } from './stats';

export const OPS = [
  { name: 'test', argv: ['npm', 'test', '--', '--grep={filter}'], args: () => ({ filter: '' }) },
  { name: 'lint', argv: ['npm', 'run', 'lint'], args: () => ({}) },
  { name: 'typecheck', argv: ['npx', 'tsc', '--noEmit'], args: () => ({}) },
  { name: 'build', argv: ['npm', 'run', 'build'], args: () => ({}) },
  { name: 'git.status', argv: ['git', 'status', '--porcelain'], args: () => ({}) },
  { name: 'git.log', argv: ['git', 'log', '-n', '{count}'], args: () => ({ count: 20 }) },
  { name: 'git.diff', argv: ['git', 'diff', '{path}'], args: () => ({ path: 'src/index.ts' }) },
  { name: 'deploy.staging', argv: ['./scripts/deploy.sh', 'staging', '{ref}'], args: () => ({ ref: 'main' }) },
  { name: 'db.migrate', argv: ['npm', 'run', 'migrate', '--', '{target}'], args: () => ({ target: 'latest' }) },
  { name: 'npm.install', argv: ['npm', 'ci'], args: () => ({}) },
] as const;

const INTENTS = [
  'run the unit tests after changing the parser',
  'check that the build still passes before opening the pull request',
  'look at recent commits to find where the regression came in',
  'deploy the fix for the login timeout to staging so QA can verify',
  'apply the new migration for the invoices table',
  'reinstall dependencies after the lockfile update',
  'format the files touched by the refactor',
  'see which files changed since the last release',
];

const USERS = ['cli:alice', 'cli:bob', 'app:alice'];
const CWD = '/home/alice/code/shop';

export interface Lifecycle {
  id: string;
  keyId: string;
  op: string;
  args: Record<string, unknown>;
  argv: string[];
  intent: string | undefined;
  pid: number;
  /** How long it ran, where it ran. */
  ms: number;
  /** Epoch ms when it was created. */
  at: number;
  entries: AuditEntry[];
}

function hex(r: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(r() * 16).toString(16);
  return s;
}

export function keyIds(seed = 7, n = 5): string[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => `k_${hex(r, 10)}`);
}

/** Makes request lifecycles spread evenly from `fromMs` to `toMs`, in order. */
export class HistoryGenerator {
  private readonly r: () => number;
  readonly keys: string[];
  private i = 0;

  constructor(
    seed: number,
    private readonly fromMs: number,
    private readonly toMs: number,
    private readonly total: number,
  ) {
    this.r = rng(seed);
    this.keys = keyIds(seed + 1);
  }

  next(): Lifecycle {
    const r = this.r;
    const at = this.fromMs + ((this.toMs - this.fromMs) * this.i++) / this.total;
    const id = `r-${Math.floor(at).toString(36).padStart(9, '0')}-${hex(r, 12)}`;
    const keyId = pick(r, this.keys);
    const op = pick(r, OPS);
    const args: Record<string, unknown> = op.args();
    const argv = op.argv.map((a) => a.replace(/\{(\w+)\}/g, (_m, k: string) => String(args[k] ?? '')));
    const intent = r() < 0.5 ? pick(r, INTENTS) : undefined;
    const base = { request_id: id, key_id: keyId, op: op.name };
    const pid = 10_000 + Math.floor(r() * 50_000);
    const ms = Math.floor(r() < 0.8 ? r() * 3000 : r() * 120_000);
    const claimed = (state = 'queued'): AuditEntry => ({
      ...base,
      kind: state === 'awaiting_approval' ? 'approval_requested' : 'claimed',
      message: `claimed ${id}: ${op.name} -> ${state}`,
      details: { state, argv, ...(intent ? { intent } : {}) },
    });
    const started: AuditEntry = {
      ...base,
      kind: 'started',
      message: `started ${op.name}: ${JSON.stringify(argv)} in ${CWD} (pid ${pid})`,
      details: { argv, cwd: CWD, pid },
    };
    const finished = (state: string, exit: number | null, signal: string | null, error?: { code: string; message: string }): AuditEntry => ({
      ...base,
      kind: 'finished',
      message: `${op.name} ${state} (${signal ? `signal ${signal}` : `exit code ${exit}`}, ${ms} ms)${error ? `: ${error.message}` : ''}`,
      details: { state, exit_code: exit, signal, duration_ms: ms, ...(error ? { code: error.code } : {}) },
    });
    const rejected = (kind: AuditEntry['kind'], code: string, message: string, keyKnown = true): AuditEntry => ({
      request_id: id,
      key_id: keyKnown ? keyId : `k_${hex(r, 10)}`,
      op: code === 'bad_envelope' ? null : op.name,
      kind,
      message: `${code}: ${message}`,
      details: { code, ...(kind === 'rejected' && !['bad_args', 'unknown_op', 'scope_denied'].includes(code) ? { bound: false } : { state: 'rejected' }) },
    });
    const who = pick(r, USERS);

    const entries: AuditEntry[] = weighted<() => AuditEntry[]>(r, [
      [80, () => [claimed(), started, finished('succeeded', 0, null)]],
      [7, () => [claimed(), started, finished('failed', 1, null)]],
      [1, () => [claimed(), started, finished('failed', null, 'SIGTERM', { code: 'timeout', message: "killed after the operation's timeout of 600 s" })]],
      [1.5, () => [rejected('rejected', 'bad_signature', 'the MAC does not match the payload and key')]],
      [0.5, () => [rejected('rejected', 'unknown_key', `no key k_${hex(r, 10)} on this host`, false)]],
      [0.5, () => [rejected('rejected', 'bad_envelope', 'the file is not valid JSON')]],
      [1, () => [rejected('rejected', 'bad_args', 'argument "count": must be an integer between 1 and 1000')]],
      [0.5, () => [rejected('rejected', 'unknown_op', `no operation "${op.name.replace('.', '_')}" in this host's allowlist`)]],
      [0.5, () => [rejected('rejected', 'scope_denied', `key ${keyId} has scope read; ${op.name} needs write`)]],
      [0.5, () => [rejected('ceiling_hit', 'spend_ceiling', 'hourly: 50 of 50 runs in 3600 s for this key')]],
      [2, () => [claimed('awaiting_approval'), { ...base, actor: who, kind: 'approved', message: `approved by ${who}` }, started, finished('succeeded', 0, null)]],
      [0.7, () => [claimed('awaiting_approval'), { ...base, actor: who, kind: 'denied', message: `denied by ${who}: not now, the release is frozen` }]],
      [0.3, () => [claimed('awaiting_approval'), { ...base, kind: 'approval_timeout', message: 'denied: no decision within the approval timeout of 3600 s' }]],
      [1.5, () => [claimed(), started, finished('succeeded', 0, null), { ...base, kind: 'replay', message: `replay of ${id}: nothing runs again; the existing result (succeeded) stands` }]],
      [0.2, () => [claimed(), started, finished('succeeded', 0, null), { ...base, kind: 'conflict', message: `conflict: ${id} is already bound to another request (op ${op.name}); nothing runs and its result is unchanged`, details: { bound_op: op.name, bound_key: keyId } }]],
      [0.3, () => [claimed(), started, { ...base, actor: who, kind: 'cancel_requested', message: `${who} asked to cancel the running ${op.name}; its process group will be terminated` }, finished('cancelled', null, 'SIGTERM')]],
      [0.05, () => [claimed(), started, { ...base, kind: 'uncertain', message: `the host stopped while this ran (process group ${pid}); it may or may not have taken effect and will not be re-run. Settle it with: dumbwaiter resolve ${id} --succeeded|--failed` }]],
      [0.1, () => [{ kind: 'daemon_started', message: `daemon started (pid ${pid}, version 0.1.0)`, details: { spool: '/home/alice/Dumbwaiter/spool' } }, claimed(), started, finished('succeeded', 0, null)]],
      [0.02, () => [{ kind: 'reaped', message: `retention removed ${Math.floor(r() * 900)} results, ${Math.floor(r() * 900)} ledger requests`, details: {} }]],
    ])();
    return { id, keyId, op: op.name, args, argv, intent, pid, ms, at, entries };
  }
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
