// The daemon's heap keeps its size under a burst of allocation (as the first sweep over a large
// results/ folder makes), so that an idle host does not keep what the burst grew. V8's flags are the
// process's own: each case runs in a fresh node.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const MEMORY = path.resolve(import.meta.dirname, '../../../../main/core/daemon/memory.ts');

interface Sizes {
  /** The young generation's size (MiB) before and after the burst. */
  youngBefore: number;
  youngAfter: number;
  /** The old generation's largest size (MiB) during the burst. */
  oldPeak: number;
}

/** Sizes around ~200 MB of allocation, of which a rolling window of 100,000 objects lives long enough
 *  to reach the old generation (a sweep's page, a burst's requests) and then dies. */
function aroundBurst(setup: string): Sizes {
  const script = `
    import v8 from 'node:v8';
    import { keepHeapSmall } from ${JSON.stringify(MEMORY)};
    ${setup};
    const space = (name) => v8.getHeapSpaceStatistics().find((s) => s.space_name === name).space_size / 2 ** 20;
    const youngBefore = space('new_space');
    let oldPeak = 0;
    const window = new Array(100_000);
    for (let r = 0; r < 2_000_000; r++) {
      window[r % window.length] = { id: 'req-' + r, row: [r, 'x' + r] };
      if (r % 1000 === 0) oldPeak = Math.max(oldPeak, space('old_space'));
    }
    console.log(JSON.stringify({ youngBefore, youngAfter: space('new_space'), oldPeak, kept: window.length }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Sizes;
}

describe('keepHeapSmall', () => {
  const kept = aroundBurst('keepHeapSmall()');

  it('keeps the young generation at its size through a burst that grows it otherwise', () => {
    const grown = aroundBurst('');
    expect(grown.youngAfter).toBeGreaterThan(grown.youngBefore * 2);
    // Never larger; it may be smaller, when loading the test's own modules had grown it before the call
    // and V8 shrank it back to the size kept (the fresh-clone run saw 4 MiB before, 2 after).
    expect(kept.youngAfter).toBeLessThanOrEqual(kept.youngBefore);
  });

  it('keeps the old generation near what lives through a burst that grows it to several times that otherwise', () => {
    // A young generation kept small alone promotes more of the burst: what the old one must bear.
    const grown = aroundBurst("v8.setFlagsFromString('--semi-space-growth-factor=1')");
    expect(kept.oldPeak).toBeLessThan(grown.oldPeak / 2);
  });
});
