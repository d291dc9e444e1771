// The editor's edits of allowlist.yaml (renderer/screens/allowlist/edits.ts and writeNodes.ts), in Node:
// writing a form back changes only the fields that changed, keeps comments and the other operations as
// they were, and what it writes is what the host's own validator reads.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseAllowlist } from '../../../../../main/core/allowlist/load';
import { addOperation, applyOperation, deleteOperation, freshName } from '../../../../../renderer/screens/allowlist/edits';
import { emptyArg, emptyOp, settled, type OpForm } from '../../../../../renderer/screens/allowlist/form';
import { mergeEdits } from '../../../../../renderer/screens/allowlist/merge';
import { opForm } from '../../../../../renderer/screens/allowlist/readForm';
import { FILE, form, lines, ops } from './allowlistFile';

describe('writing a form back', () => {
  it('changes only what changed: comments, alignment and the other operation stay', () => {
    const f = form(FILE, 0);
    const out = applyOperation(FILE, 0, { ...f, description: 'Say something', timeout_s: '30' });
    const changed = lines(out).filter((l) => !lines(FILE).includes(l));
    expect(changed).toEqual(['    description: Say something', '    timeout_s: 30']);
    for (const l of lines(FILE).filter((l) => !l.includes('Print a message'))) expect(out).toContain(l);
    expect(ops(out)[1]).toEqual(ops(FILE)[1]);
    expect(parseAllowlist(out).operations.get('say')!.timeout_s).toBe(30);
  });


  it('edits, renames and removes arguments in place', () => {
    const f = form(FILE, 0);
    const renamed = applyOperation(FILE, 0, { ...f, command: ['/bin/echo', '{text}'], args: [{ ...f.args[0]!, name: 'text', pattern: '[a-z ]*' }] });
    expect(renamed).toContain('      text: {type: string, max_length: 200, pattern: "[a-z ]*"} # short messages only');
    expect(parseAllowlist(renamed).operations.get('say')!.args.text).toMatchObject({ type: 'string', max_length: 200 });

    const g = form(renamed, 0);
    const typed = applyOperation(renamed, 0, { ...g, args: [{ ...g.args[0]!, type: 'integer', pattern: '', max_length: '', min: '0', max: '9', hasDefault: true, default: '3' }] });
    expect(ops(typed)[0]!.args).toEqual({ text: { type: 'integer', min: 0, max: 9, default: 3 } });

    const none = applyOperation(typed, 0, { ...form(typed, 0), command: ['/bin/echo'], args: [] });
    expect(ops(none)[0]!).not.toHaveProperty('args');
    expect(none).toContain('# Top comment: must survive.');
  });

  it('writes every kind of field the validator knows, and the validator accepts it', () => {
    const f: OpForm = {
      ...emptyOp('full'),
      description: 'All the fields',
      command: ['/usr/bin/env', '{flag}', '--name={who}', '{files}', '{n}', '{{literal}}'],
      cwd: '~/work',
      cwd_shared_with_sandbox: true,
      env: [{ name: 'CI', value: '1' }],
      args: [
        { ...emptyArg('flag'), type: 'boolean', flag: '--verbose' },
        { ...emptyArg('who'), enum: ['alice', 'bob'], hasDefault: true, default: 'alice', description: 'Who' },
        { ...emptyArg('files'), type: 'array', items: { ...emptyArg().items, type: 'path', within: '~/work\n/tmp', must_exist: false, shared_with_sandbox: true }, max_items: '3', hasDefault: true, default: '' },
        { ...emptyArg('n'), type: 'integer', min: '1', max: '5', required: 'required' },
      ],
      scope: 'write',
      approval: 'always',
      timeout_s: '60',
      max_output_bytes: '2048',
      concurrency: '2',
      cost: '3',
    };
    const { text, index } = addOperation(FILE, f);
    expect(index).toBe(2);
    const op = parseAllowlist(text).operations.get('full')!;
    expect(op).toMatchObject({ cwd: expect.stringMatching(/work$/), cwd_shared_with_sandbox: true, env: { CI: '1' }, scope: 'write', approval: 'always', timeout_s: 60, max_output_bytes: 2048, concurrency: 2, cost: 3 });
    expect(op.args.flag).toMatchObject({ type: 'boolean', flag: '--verbose' });
    expect(op.args.who).toMatchObject({ type: 'string', enum: ['alice', 'bob'], default: 'alice', description: 'Who' });
    expect(op.args.files).toMatchObject({ type: 'array', max_items: 3, default: [], items: { type: 'path', must_exist: false, shared_with_sandbox: true } });
    expect(op.args.n).toMatchObject({ type: 'integer', min: 1, max: 5, required: true });
    // Read back, the form is the same (the key of each argument is now its name).
    expect(form(text, 2)).toEqual({ ...f, args: f.args.map((a) => ({ ...a, key: a.name, items: { ...a.items, type: a.type === 'array' ? a.items.type : '' } })) });
    // The file it was added to is unchanged above it, and the new operation is written compactly.
    expect(text.startsWith(FILE)).toBe(true);
    expect(text).toContain('    command: [/usr/bin/env, "{flag}", "--name={who}", "{files}", "{n}", "{{literal}}"]');
  });

  it('keeps half-typed values as they are, so the validator can name the field', () => {
    const out = applyOperation(FILE, 0, { ...form(FILE, 0), timeout_s: '12x' });
    expect(ops(out)[0]!.timeout_s).toBe('12x');
    expect(() => parseAllowlist(out)).toThrow(/timeout_s/);
    expect(form(out, 0).timeout_s).toBe('12x');
  });

  it('a value that needed quotes loses them when it no longer does, chosen quotes stay', () => {
    const { text } = addOperation(FILE, { ...emptyOp('new-op'), command: [''] });
    expect(text).toContain('command: [""]');
    const out = applyOperation(text, 2, { ...form(text, 2), command: ['/bin/true'] });
    expect(out).toContain('command: [/bin/true]');
    const quoted = 'version: 1\noperations:\n  - name: q\n    description: "quoted by choice"\n    command: [x]\n';
    expect(applyOperation(quoted, 0, { ...form(quoted, 0), description: 'still quoted' })).toContain('description: "still quoted"');
  });

  it('a home folder written as "~" stays a string', () => {
    const out = applyOperation(FILE, 0, { ...form(FILE, 0), cwd: '~' });
    expect(ops(out)[0]!.cwd).toBe('~');
  });
});

describe('an edit writes only the fields that changed', () => {
  // Values the form cannot show as they are (an enum value with a comma or a leading space, a typo in
  // a select, a fraction where a whole number belongs): an edit elsewhere must leave them exactly so.
  const ODD = `version: 1
operations:
  - name: pick
    description: Pick one
    command: [/bin/echo, "{v}"]
    args:
      v: {type: string, enum: ["a, b", " c"], max_length: 2.5}   # odd on purpose
      w: {type: string, required: "yes", default: x}
    scope: raed
    approval: nevr
    timeout_s: 1.5
`;
  const edited = applyOperation(ODD, 0, { ...form(ODD, 0), description: 'Pick one value' });

  it('only the edited line changes', () => {
    expect(lines(edited).filter((l) => !lines(ODD).includes(l))).toEqual(['    description: Pick one value']);
    expect(lines(ODD).filter((l) => !lines(edited).includes(l))).toEqual(['    description: Pick one']);
  });

  it('enum values with commas and spaces stay the allowed values', () => {
    expect(form(ODD, 0).args[0]!.enum).toEqual(['a, b', ' c']);
    expect(ops(edited)[0]!.args).toMatchObject({ v: { enum: ['a, b', ' c'] } });
    // Editing the list writes each value as typed, one per entry.
    const f = form(ODD, 0);
    const more = applyOperation(ODD, 0, { ...f, args: [{ ...f.args[0]!, enum: ['a, b', ' c', 'd e,f'] }, f.args[1]!] });
    expect(ops(more)[0]!.args).toMatchObject({ v: { enum: ['a, b', ' c', 'd e,f'] } });
    expect(more).toContain('# odd on purpose');
  });

  it('an invalid scope or approval is kept (shown as it is), never turned into the default', () => {
    const f = form(ODD, 0);
    expect([f.scope, f.approval]).toEqual(['raed', 'nevr']);
    expect(ops(edited)[0]).toMatchObject({ scope: 'raed', approval: 'nevr' });
    expect(() => parseAllowlist(edited)).toThrow(/scope/);
    // Picking a value writes it.
    const picked = applyOperation(edited, 0, { ...form(edited, 0), scope: 'read' });
    expect(ops(picked)[0]).toMatchObject({ scope: 'read', approval: 'nevr' });
    // Other values that are not text are shown as JSON and kept too.
    const odd2 = ODD.replace('scope: raed', 'scope:').replace('approval: nevr', 'approval: 7');
    expect([form(odd2, 0).scope, form(odd2, 0).approval]).toEqual(['null', '7']);
    const out2 = applyOperation(odd2, 0, { ...form(odd2, 0), description: 'x' });
    expect(ops(out2)[0]).toMatchObject({ scope: null, approval: 7 });
  });

  it('numbers stay numbers, and a typed fraction is written as a number', () => {
    expect(ops(edited)[0]!.timeout_s).toBe(1.5);
    expect(ops(edited)[0]!.args).toMatchObject({ v: { max_length: 2.5 } });
    const typed = applyOperation(ODD, 0, { ...form(ODD, 0), timeout_s: '2.5', concurrency: '3' });
    expect(ops(typed)[0]).toMatchObject({ timeout_s: 2.5, concurrency: 3 });
  });

  it('an argument edit leaves its other fields and the other arguments as they are', () => {
    const f = form(ODD, 0);
    const out = applyOperation(ODD, 0, { ...f, args: [f.args[0]!, { ...f.args[1]!, description: 'Second' }] });
    expect(ops(out)[0]!.args).toEqual({ v: { type: 'string', enum: ['a, b', ' c'], max_length: 2.5 }, w: { type: 'string', required: 'yes', default: 'x', description: 'Second' } });
    expect(f.args[1]!.required).toBe('"yes"');
  });

  it('compares with the previous form: a field that only the text has is not written over', () => {
    // The form before the edit (as the editor holds it) says timeout 1.5; the edit changes the cost only.
    const prev = form(ODD, 0);
    const out = applyOperation(ODD, 0, { ...prev, cost: '2' }, prev);
    expect(ops(out)[0]).toMatchObject({ timeout_s: 1.5, scope: 'raed', cost: 2 });
  });

  it('renames an argument keystroke by keystroke through its previous forms, in place', () => {
    let text = FILE;
    let prev = settled(form(FILE, 0));
    for (const name of ['m', 'me', 'mes', 'message']) {
      const next = { ...prev, command: ['/bin/echo', `{${name}}`], args: [{ ...prev.args[0]!, name }] };
      text = applyOperation(text, 0, next, prev);
      prev = settled(next);
    }
    expect(lines(text)).toContain('      message: {type: string, max_length: 200} # short messages only');
    expect(lines(text).filter((l) => !lines(FILE).includes(l))).toHaveLength(2); // the argument and the command
    expect(parseAllowlist(text).operations.get('say')!.args.message).toMatchObject({ type: 'string', max_length: 200 });
  });

  it('refuses a form where two arguments share a name (the file would silently lose one)', () => {
    const f = form(FILE, 1);
    expect(() => applyOperation(FILE, 1, { ...f, args: [f.args[0]!, { ...emptyArg('n'), key: null }] })).toThrow(/Two arguments are named “n”/);
    expect(() => applyOperation(FILE, 1, { ...f, env: [{ name: 'A', value: '1' }, { name: 'A', value: '2' }] })).toThrow(/Two environment variables/);
  });
});

describe('adding, deleting and renaming operations', () => {
  it('adds to an empty file and to a file without operations', () => {
    const a = addOperation('', { ...emptyOp('first'), command: ['/bin/true'] });
    expect(parse(a.text)).toEqual({ version: 1, operations: [{ name: 'first', command: ['/bin/true'] }] });
    const b = addOperation('# only a comment\nversion: 1\n', { ...emptyOp('first'), command: ['/bin/true'] });
    expect(b.text).toContain('# only a comment');
    expect(parseAllowlist(b.text).operations.has('first')).toBe(true);
  });

  it('deletes one operation and keeps the rest, comments included', () => {
    const out = deleteOperation(FILE, 0);
    expect(ops(out).map((o) => o.name)).toEqual(['count']);
    expect(out).toContain('# Top comment: must survive.');
    expect(out).toContain('# The second operation.');
    for (const l of lines(FILE).slice(11)) expect(out).toContain(l);
    const out2 = deleteOperation(FILE, 1);
    expect(ops(out2).map((o) => o.name)).toEqual(['say']);
    expect(out2).toContain('scope: read                 # read | write');
  });

  it('renames in place (only the name line changes)', () => {
    const out = applyOperation(FILE, 1, { ...form(FILE, 1), name: 'count-up' });
    expect(lines(out).filter((l) => !lines(FILE).includes(l))).toEqual(['  - name: count-up']);
  });

  it('finds an unused name', () => {
    expect(freshName(FILE)).toBe('new-operation');
    const { text } = addOperation(FILE, emptyOp('new-operation'));
    expect(freshName(text)).toBe('new-operation-2');
  });

  it('refuses to edit text with syntax errors', () => {
    expect(() => applyOperation('operations: [\n', 0, emptyOp('x'))).toThrow(/syntax/);
    expect(opForm(null)).toEqual({ ...emptyOp(''), command: [] });
  });
});

describe('the reconcile block', () => {
  const WITH = `version: 1
operations:
  - name: tag
    command: [/usr/bin/git, tag, "v{version}"]
    args:
      version: {type: string, pattern: "[0-9.]+"}
    # Did a lost run make the tag?
    reconcile:
      command: [/usr/bin/git, rev-parse, --verify, --quiet, "refs/tags/v{version}"]   # 0 yes, 1 no
      timeout_s: 10
`;

  it('is read into the form, and is null when the operation declares none', () => {
    expect(form(WITH, 0).reconcile).toEqual({ command: ['/usr/bin/git', 'rev-parse', '--verify', '--quiet', 'refs/tags/v{version}'], timeout_s: '10' });
    expect(form(FILE, 0).reconcile).toBeNull();
  });

  it('survives an edit of the operation\'s other fields byte for byte, comments included', () => {
    const out = applyOperation(WITH, 0, { ...form(WITH, 0), description: 'Tag a release', timeout_s: '60' });
    const reconcileLines = lines(WITH).slice(6, 10);
    for (const l of reconcileLines) expect(out).toContain(l);
    expect(applyOperation(WITH, 0, form(WITH, 0))).toBe(WITH);
  });

  it('an edit of its timeout changes that line only; its command keeps its comment', () => {
    const f = form(WITH, 0);
    const out = applyOperation(WITH, 0, { ...f, reconcile: { ...f.reconcile!, timeout_s: '20' } });
    expect(lines(out).filter((l) => !lines(WITH).includes(l))).toEqual(['      timeout_s: 20']);
    expect(parseAllowlist(out).operations.get('tag')!.reconcile!.timeout_s).toBe(20);
  });

  it('a key the form does not know stays in the block for the validator to name', () => {
    const odd = WITH.replace('      timeout_s: 10', '      timeout_s: 10\n      timeuot: 5');
    const f = form(odd, 0);
    const out = applyOperation(odd, 0, { ...f, reconcile: { ...f.reconcile!, command: ['/usr/bin/git', 'tag', '--list', 'v{version}'] } });
    expect(out).toContain('      timeuot: 5');
    expect(ops(out)[0]!.reconcile).toEqual({ command: ['/usr/bin/git', 'tag', '--list', 'v{version}'], timeout_s: 10, timeuot: 5 });
  });

  it('is added as a block with its command on one line, which the validator accepts, and removed', () => {
    const added = applyOperation(FILE, 1, { ...form(FILE, 1), reconcile: { command: ['/usr/bin/test', '-e', '/tmp/counted-{n}', '{request_id}'], timeout_s: '' } });
    expect(added).toContain('    reconcile:\n      command: [/usr/bin/test, -e, "/tmp/counted-{n}", "{request_id}"]\n');
    expect(parseAllowlist(added).operations.get('count')!.reconcile).toMatchObject({ timeout_s: 30 });
    expect(applyOperation(added, 1, { ...form(added, 1), reconcile: null })).toBe(FILE);
    const fresh = addOperation(FILE, { ...emptyOp('new'), command: ['/bin/true'], reconcile: { command: ['/bin/false'], timeout_s: '5' } }).text;
    expect(fresh).toContain('    reconcile:\n      command: [/bin/false]\n      timeout_s: 5\n');
    expect(parseAllowlist(fresh).operations.get('new')!.reconcile).toMatchObject({ command: ['/bin/false'], timeout_s: 5 });
  });

  it('an edit made only to it is merged into a version changed on disk, and conflicts like any field', () => {
    const f = form(WITH, 0);
    const mine = applyOperation(WITH, 0, { ...f, reconcile: { ...f.reconcile!, timeout_s: '20' } });
    const disk = WITH.replace('version: 1', '# edited on disk\nversion: 1');
    const merged = mergeEdits(WITH, mine, disk);
    expect(merged.conflicts).toEqual([]);
    expect(merged.text).toContain('# edited on disk');
    expect(ops(merged.text)[0]!.reconcile).toMatchObject({ timeout_s: 20 });
    const theirs = applyOperation(WITH, 0, { ...f, reconcile: null });
    expect(mergeEdits(WITH, mine, theirs).conflicts).toEqual(['tag']);
  });
});


describe('the spools field', () => {
  it('ticking spools writes them on one line that the validator reads; none ticked removes the line', () => {
    const picked = applyOperation(FILE, 1, { ...form(FILE, 1), spools: ['ci', 'default'] });
    expect(lines(picked).filter((l) => !lines(FILE).includes(l))).toEqual(['    spools: [ci, default]']);
    expect(parseAllowlist(picked).operations.get('count')!.spools).toEqual(['ci', 'default']);
    expect(form(picked, 1).spools).toEqual(['ci', 'default']);
    expect(applyOperation(picked, 1, { ...form(picked, 1), spools: [] })).toBe(FILE);
  });
});
