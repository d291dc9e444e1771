// For bench/profile.ts --mode fork: what one `child_process.spawn('/bin/true')` costs the calling
// process as its memory grows. Node 20's libuv starts children with a plain fork (clone without
// CLONE_VM), which copies the parent's page tables, so the synchronous spawn() call grows with RSS.
// Usage: node fork-cost.mjs EXTRA_MIB
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

const extra = Number(process.argv[2] ?? 0);
const keep = [];
for (let i = 0; i < extra; i++) keep.push(Buffer.alloc(1 << 20, 1)); // touched, so resident
const call = [];
const toClose = [];
for (let i = 0; i < 100; i++) {
  const t0 = performance.now();
  const child = spawn('/bin/true');
  call.push(performance.now() - t0);
  await new Promise((r) => child.on('close', r));
  toClose.push(performance.now() - t0);
}
const p50 = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(JSON.stringify({ rss_mib: process.memoryUsage().rss / 2 ** 20, spawn_call_p50_ms: p50(call), to_close_p50_ms: p50(toClose), kept: keep.length }));
