// Merging unsaved edits into a version of allowlist.yaml changed on disk
// (renderer/screens/allowlist/merge.ts), in Node: operation by operation, refused on a conflict.
import { describe, expect, it } from 'vitest';
import { addOperation, applyOperation, deleteOperation } from '../../../../../renderer/screens/allowlist/edits';
import { emptyOp } from '../../../../../renderer/screens/allowlist/form';
import { mergeEdits } from '../../../../../renderer/screens/allowlist/merge';
import { FILE, form, ops } from './allowlistFile';

describe('merging unsaved edits into a version changed on disk', () => {
  const mine = applyOperation(FILE, 0, { ...form(FILE, 0), description: 'Mine' });
  it('applies changed, added and deleted operations to the disk version, keeping its comments', () => {
    const disk = applyOperation(FILE, 1, { ...form(FILE, 1), timeout_s: '9' }).replace('# Top comment: must survive.', '# Top comment, edited on disk.');
    const added = addOperation(mine, { ...emptyOp('extra'), command: ['/bin/true'] }).text;
    const r = mergeEdits(FILE, added, disk);
    expect(r.conflicts).toEqual([]);
    expect(r.text).toContain('# Top comment, edited on disk.');
    expect(ops(r.text).map((o) => [o.name, o.description, o.timeout_s])).toEqual([
      ['say', 'Mine', undefined],
      ['count', 'Count to a number', 9],
      ['extra', undefined, undefined],
    ]);
    const deleted = mergeEdits(FILE, deleteOperation(FILE, 0), disk);
    expect(ops(deleted.text).map((o) => o.name)).toEqual(['count']);
  });

  it('refuses when the same operation changed on both sides', () => {
    const disk = applyOperation(FILE, 0, { ...form(FILE, 0), description: 'Theirs' });
    expect(mergeEdits(FILE, mine, disk).conflicts).toEqual(['say']);
    expect(mergeEdits(FILE, mine, deleteOperation(FILE, 0)).conflicts).toEqual(['say']);
  });
});
