// The allowlist as one spool sees it: what a request of that spool meets (the gate, plans, the catalog).
import { describe, expect, it } from 'vitest';
import { parseAllowlist } from '../../../../main/core/allowlist/load';
import { allowlistFor } from '../../../../main/core/allowlist/forSpool';

const allowlist = parseAllowlist(
  ['version: 1', 'operations:', '  - {name: everywhere, command: [/bin/echo, a]}', '  - {name: work-only, command: [/bin/echo, b], spools: [work]}', '  - {name: two, command: [/bin/echo, c], spools: [work, lab]}', ''].join('\n'),
);

describe('allowlistFor', () => {
  it("holds the operations for every spool and those listing this one, and no other spool's", () => {
    expect([...allowlistFor(allowlist, 'work').operations.keys()]).toEqual(['everywhere', 'work-only', 'two']);
    expect([...allowlistFor(allowlist, 'lab').operations.keys()]).toEqual(['everywhere', 'two']);
    expect([...allowlistFor(allowlist, 'default').operations.keys()]).toEqual(['everywhere']);
    expect(allowlistFor(allowlist, 'default').operations.get('work-only')).toBeUndefined();
  });

  it('is made once per allowlist and spool (the gate asks at every request), and a new allowlist gets its own', () => {
    expect(allowlistFor(allowlist, 'work')).toBe(allowlistFor(allowlist, 'work'));
    const reloaded = parseAllowlist('version: 1\noperations:\n  - {name: everywhere, command: [/bin/echo, a]}\n');
    expect([...allowlistFor(reloaded, 'work').operations.keys()]).toEqual(['everywhere']);
    expect(allowlist.operations.size).toBe(3); // the whole allowlist is left as it is
  });
});
