// Reads a V8 .cpuprofile (node --cpu-prof) of the daemon and splits its main thread's time into what
// it was doing. V8 samples the JavaScript stack in wall time, so a synchronous system call (an fsync,
// an SQLite commit, a fork) shows up as time in the JavaScript function that made it.
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export const CATEGORIES = [
  'idle',
  'ledger (SQLite statements and commits, with their fsyncs)',
  'fsync of result files and folders',
  'other file system calls (open, rename, readdir, lstat...)',
  'spawn (fork/exec of the child)',
  'logging',
  'chokidar (file events)',
  'garbage collection',
  'other JavaScript',
] as const;
export type Category = (typeof CATEGORIES)[number];

const FS_CALLS = new Set(['open', 'close', 'rename', 'readdir', 'lstat', 'stat', 'fstat', 'unlink', 'rmSync', 'read', 'access', 'existsSync', 'writeUtf8String', 'writeBuffer', 'writeString', 'writeFileUtf8', 'readFileUtf8', 'realpath', 'mkdir', 'chmod']);

function categorize(stack: CallFrame[]): Category {
  const leaf = stack[0]!;
  if (leaf.functionName === '(idle)') return 'idle';
  if (leaf.functionName === '(garbage collector)') return 'garbage collection';
  if (stack.some((f) => f.functionName === 'logLine')) return 'logging';
  if (leaf.functionName === 'fsync') return 'fsync of result files and folders';
  if (FS_CALLS.has(leaf.functionName) && leaf.url === '') return 'other file system calls (open, rename, readdir, lstat...)';
  if (leaf.url.includes('better-sqlite3') || leaf.url.includes('/main/core/ledger/') || leaf.url.includes('/main/core/keys/')) {
    return 'ledger (SQLite statements and commits, with their fsyncs)';
  }
  if (leaf.functionName === 'ChildProcess.spawn' || leaf.functionName === 'spawn') return 'spawn (fork/exec of the child)';
  if (stack.some((f) => f.url.includes('chokidar') || f.url.includes('readdirp')) && leaf.url.includes('node_modules')) return 'chokidar (file events)';
  return 'other JavaScript';
}

/** Milliseconds per category, counting only samples taken `skipMs` or more after the profile started. */
export function profileBreakdown(file: string, skipMs: number): { totalMs: number; byCategory: Record<Category, number> } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackCache = new Map<number, Category>();
  const byCategory = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
  let t = 0;
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (t / 1000 < skipMs) continue;
    const id = p.samples[i]!;
    let cat = stackCache.get(id);
    if (cat === undefined) {
      const stack: CallFrame[] = [];
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) stack.push(byId.get(cur)!.callFrame);
      cat = categorize(stack);
      stackCache.set(id, cat);
    }
    byCategory[cat] += dt / 1000;
    total += dt / 1000;
  }
  return { totalMs: total, byCategory };
}

/**
 * A daemon start's profile split into: everything before Daemon.start (node, the loader, every
 * module), and the steps of Daemon.start and its boot(), by the function boot (or start) called.
 */
export function profileSteps(file: string): { beforeStart: number; inStart: [string, number][] } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const isDaemon = (f: CallFrame) => f.url.includes('daemon/daemon.ts') || f.url.endsWith('.cjs');
  let t = 0;
  let firstStart: number | null = null;
  const steps = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    t += dt;
    const stack: CallFrame[] = [];
    for (let cur: number | undefined = p.samples[i]; cur !== undefined; cur = parent.get(cur)) stack.unshift(byId.get(cur)!.callFrame);
    let at = stack.findIndex((f) => f.functionName === 'boot' && isDaemon(f));
    if (at < 0) at = stack.findIndex((f) => f.functionName === 'start' && isDaemon(f));
    if (at < 0) continue;
    firstStart ??= t - dt;
    const step = stack.slice(at + 1).find((f) => f.functionName !== 'safely' && f.functionName !== '' && f.functionName !== 'boot');
    const name = step ? step.functionName : stack[at]!.functionName === 'boot' ? 'boot (itself)' : 'start (itself)';
    steps.set(name, (steps.get(name) ?? 0) + dt);
  }
  return { beforeStart: firstStart ?? t, inStart: [...steps].sort((a, b) => b[1] - a[1]).slice(0, 14) };
}
