// The allowlist `init` writes for this machine: list-documents is offered only where ~/Documents exists
// (where it does not, every call would fail "does not exist"): elsewhere it is there commented out, and
// the file's own instructions (create the folder, uncomment) give the operation back. On real folders.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EXAMPLE_ALLOWLIST, exampleAllowlistFor } from '../../../../main/core/allowlist/example';
import { parseAllowlist } from '../../../../main/core/allowlist/load';

const root = mkdtempSync(path.join(os.tmpdir(), 'dw-example-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const ctx = (home: string) => ({ spools: [{ name: 'default', dir: path.join(home, 'Dumbwaiter', 'spool') }], home: path.join(home, '.config', 'Dumbwaiter') });

describe('exampleAllowlistFor', () => {
  it('where ~/Documents exists: the example as it is, list-documents offered', () => {
    const home = path.join(root, 'with-documents');
    mkdirSync(path.join(home, 'Documents'), { recursive: true });
    expect(exampleAllowlistFor(home)).toBe(EXAMPLE_ALLOWLIST);
  });

  it('where it does not: list-documents commented out, saying why, and the file loads with echo alone', () => {
    const home = path.join(root, 'without-documents');
    mkdirSync(home);
    const text = exampleAllowlistFor(home);
    expect(text).toContain('  # This machine had no ~/Documents when this file was written');
    expect(text).toContain('  # - name: list-documents\n');
    expect(text).not.toMatch(/^ {2}- name: list-documents$/m);
    expect([...parseAllowlist(text, 'allowlist.yaml', ctx(home)).operations.keys()]).toEqual(['echo']);
  });

  it('following the file’s own words (uncomment the entry) gives the example’s operation back, line for line', () => {
    const text = exampleAllowlistFor(path.join(root, 'nowhere'));
    const lines = text.split('\n');
    const from = lines.findIndex((l) => l.startsWith('  # This machine had no ~/Documents'));
    const entry = lines.findIndex((l, i) => i > from && l === '  # - name: list-documents');
    const end = lines.findIndex((l, i) => i > entry && l === '');
    const restored = [...lines.slice(0, from), ...lines.slice(entry, end).map((l) => `  ${l.slice('  # '.length)}`), ...lines.slice(end)].join('\n');
    expect(restored).toBe(EXAMPLE_ALLOWLIST);
  });
});
