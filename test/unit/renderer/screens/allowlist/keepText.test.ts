// Keeping untouched text (renderer/screens/allowlist/keepText.ts), in Node: after an edit, every line it
// did not change is the original's byte for byte, and a changed line's trailing comment keeps its column.
import { describe, expect, it } from 'vitest';
import { EXAMPLE_ALLOWLIST } from '../../../../../main/core/allowlist/example';
import { applyOperation } from '../../../../../renderer/screens/allowlist/edits';
import { readOperations } from '../../../../../renderer/screens/allowlist/readForm';
import { FILE, form, ops } from './allowlistFile';

describe('keeping the lines an edit did not change', () => {
  it('round trips: an unchanged form leaves the text byte for byte as it was', () => {
    for (const text of [FILE, EXAMPLE_ALLOWLIST]) {
      readOperations(text).ops.forEach((f, i) => expect(applyOperation(text, i, f!)).toBe(text));
    }
  });


  it('keeps a changed line\'s trailing comment at its column (or one space after a longer line)', () => {
    const shorter = applyOperation(FILE, 0, { ...form(FILE, 0), command: ['/bin/ls', '{msg}'] });
    expect(shorter).toContain('    command: [/bin/ls, "{msg}"]     # the program never comes from a request');
    const longer = applyOperation(FILE, 0, { ...form(FILE, 0), command: ['/bin/echo', '-n', '{msg}'] });
    expect(longer).toContain('    command: [/bin/echo, -n, "{msg}"] # the program never comes from a request');
    expect(ops(longer)[0]!.command).toEqual(['/bin/echo', '-n', '{msg}']);
  });
});
