// The daemon's young generation stays at its first size under a burst of allocation (as the first
// sweep over a large results/ folder makes), so that an idle host does not keep it resident. V8's
// flags are the process's own: each case runs in a fresh node.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const MEMORY = path.resolve(import.meta.dirname, '../../../../main/core/daemon/memory.ts');

/** The young generation's size (MiB) before and after allocating ~100 MB of short-lived objects. */
function youngAroundBurst(small: boolean): { before: number; after: number } {
  const script = `
    import v8 from 'node:v8';
    import { keepYoungGenerationSmall } from ${JSON.stringify(MEMORY)};
    if (${small}) keepYoungGenerationSmall();
    const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 2 ** 20;
    const before = young();
    let kept = 0;
    for (let r = 0; r < 100; r++) { const a = []; for (let i = 0; i < 20000; i++) a.push({ s: 'x' + i + r, n: i }); kept += a.length; }
    console.log(JSON.stringify({ before, after: young(), kept }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { before: number; after: number };
}

describe('keepYoungGenerationSmall', () => {
  it('keeps the young generation at its size through a burst of allocation that grows it otherwise', () => {
    const grown = youngAroundBurst(false);
    expect(grown.after).toBeGreaterThan(grown.before * 2);
    const kept = youngAroundBurst(true);
    expect(kept.after).toBe(kept.before);
  });
});
