// merged(): a copy of an object with more fields, whose copies of one shape share one hidden class
// (a spread in Node 20's V8 makes a new one for each copy once optimized: docs/BENCHMARKS.md).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { merged } from '../../../main/core/merged';

const MERGED = path.resolve(import.meta.dirname, '../../../main/core/merged.ts');

describe('merged', () => {
  it('has the fields of both, the later one winning, and leaves the base as it was', () => {
    const base = { id: 'r1', state: 'queued', note: null };
    expect(merged(base, { state: 'running', pid: 7 })).toEqual({ id: 'r1', state: 'running', note: null, pid: 7 });
    expect(base).toEqual({ id: 'r1', state: 'queued', note: null });
  });

  it('gives copies of one shape one hidden class, also once its caller is optimized', () => {
    // V8's own view, in a node that allows its natives: two copies made after 100,000 others.
    const script = `
      import { merged } from ${JSON.stringify(MERGED)};
      const row = (i) => ({ id: 'r' + i, state: 'queued', note: null });
      const copy = (i) => merged(row(i), { state: 'running', pid: i });
      const parsed = (i) => merged(JSON.parse('{"operation":"build","argv":["make"],"cwd":"/w"}'), { decided_by: 'cli:' + i });
      for (let i = 0; i < 100_000; i++) { copy(i); parsed(i); }
      console.log(JSON.stringify([%HaveSameMap(copy(1), copy(2)), %HaveSameMap(parsed(1), parsed(2))]));`;
    const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([true, true]);
  });
});
