// catalog.json: each spool's lists only the operations that spool sees, and what the catalog says about
// reconcile survives the round trip.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllowlist } from '../../../../main/core/allowlist/load';
import { catalogOf, readCatalog, writeCatalog } from '../../../../main/core/spool/hostFiles';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-catalog-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('catalog.json', () => {
  it('keeps reconcile: true on the operations that declare one when read back', () => {
    const allowlist = parseAllowlist(
      ['version: 1', 'operations:', '  - name: tag', '    command: [/usr/bin/git, tag, v1]', '    reconcile: {command: [/usr/bin/git, rev-parse, v1]}', '  - name: plain', '    command: [/bin/true]', ''].join('\n'),
    );
    const file = path.join(dir, 'catalog.json');
    writeCatalog(file, catalogOf(allowlist, 'default'));
    expect(readCatalog(file)?.operations.map((o) => [o.name, o.reconcile])).toEqual([
      ['tag', true],
      ['plain', undefined],
    ]);
  });

  it("lists, for each spool, the operations without spools: and those naming it, and none of another spool's", () => {
    const allowlist = parseAllowlist(
      [
        'version: 1',
        'operations:',
        '  - name: everywhere',
        '    command: [/bin/true]',
        '  - name: ci-only',
        '    command: [/bin/true]',
        '    spools: [ci]',
        '  - name: both',
        '    command: [/bin/true]',
        '    spools: [default, ci]',
        '',
      ].join('\n'),
    );
    const names = (spool: string) => {
      const file = path.join(dir, `${spool}.json`);
      writeCatalog(file, catalogOf(allowlist, spool));
      return readCatalog(file)?.operations.map((o) => o.name);
    };
    expect(names('default')).toEqual(['everywhere', 'both']);
    expect(names('ci')).toEqual(['everywhere', 'ci-only', 'both']);
    expect(names('other')).toEqual(['everywhere']);
  });
});
