// TailBuffer: the last `limit` bytes of a stream, whatever the chunking, and whether anything was dropped.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TailBuffer } from '../../../../main/core/exec/tailBuffer';

function fill(limit: number, chunks: (string | Buffer)[]): TailBuffer {
  const t = new TailBuffer(limit);
  for (const c of chunks) t.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return t;
}

describe('TailBuffer', () => {
  it('keeps everything up to the limit, not marked truncated', () => {
    const t = fill(10, ['abc', 'defg', 'hij']);
    expect(t.text()).toBe('abcdefghij');
    expect(t.truncated).toBe(false);
  });

  it('keeps the last bytes across chunks once past the limit, and marks it truncated', () => {
    const t = fill(5, ['abc', 'defg', 'hi']);
    expect(t.text()).toBe('efghi');
    expect(t.truncated).toBe(true);
  });

  it('keeps the tail of a single chunk larger than the limit', () => {
    expect(fill(4, ['0123456789']).text()).toBe('6789');
  });

  it('turns a character cut by the tail into U+FFFD instead of failing', () => {
    const t = fill(4, ['€€']); // 6 bytes: the tail starts inside the first €
    expect(t.text()).toBe('\ufffd€');
  });

  it('with a limit of 0 keeps nothing', () => {
    const t = fill(0, ['abc']);
    expect(t.text()).toBe('');
    expect(t.truncated).toBe(true);
  });

  it('equals the last `limit` bytes of everything pushed, for any chunking', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 64 }), fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 20 }), (limit, chunks) => {
        const all = Buffer.concat(chunks.map((c) => Buffer.from(c)));
        const t = fill(limit, chunks.map((c) => Buffer.from(c)));
        expect(t.text()).toBe(all.subarray(Math.max(0, all.length - limit)).toString('utf8'));
        expect(t.truncated).toBe(all.length > limit);
      }),
      { numRuns: 500 },
    );
  });
});
