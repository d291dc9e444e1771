// Reading allowlist.yaml into the editor's forms (renderer/screens/allowlist/readForm.ts), in Node: every
// field as the file has it, the example file, and syntax errors with their line.
import { describe, expect, it } from 'vitest';
import { EXAMPLE_ALLOWLIST } from '../../../../../main/core/allowlist/example';
import { readOperations } from '../../../../../renderer/screens/allowlist/readForm';
import { FILE, form } from './allowlistFile';

describe('reading operations into forms', () => {
  it('reads every field as text', () => {
    const f = form(FILE, 1);
    expect(f).toMatchObject({ name: 'count', description: 'Count to a number', command: ['/usr/bin/seq', '{n}'], scope: 'read', approval: '', timeout_s: '5', cwd: '' });
    expect(f.args).toHaveLength(1);
    expect(f.args[0]).toMatchObject({ key: 'n', name: 'n', type: 'integer', min: '1', max: '100', hasDefault: false, required: '' });
  });

  it('reads the example file, and reports syntax errors with their line', () => {
    const r = readOperations(EXAMPLE_ALLOWLIST);
    expect(r.ops.map((o) => o?.name)).toEqual(['echo', 'list-documents']);
    expect(r.ops[1]!.args[0]).toMatchObject({ type: 'path', within: '~/Documents', must_exist: true, hasDefault: true, default: '.' });
    const bad = readOperations('version: 1\noperations:\n  - name: [oops\n');
    expect(bad.syntaxErrors.length).toBeGreaterThan(0);
    expect(bad.syntaxErrors[0]!.line).toBeGreaterThanOrEqual(3);
  });

  it('reads spools: as the list of names, empty when the field is left out', () => {
    expect(form(FILE, 0).spools).toEqual([]);
    expect(form(FILE.replace('    timeout_s: 5', '    timeout_s: 5\n    spools: [ci, Nope]'), 1).spools).toEqual(['ci', 'Nope']);
  });
});
