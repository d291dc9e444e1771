// The schema's defaults and bounds are the loader's: an operation that leaves a field out gets the
// schema's default, and every whole number is accepted at its bounds and refused just outside them.
import { describe, expect, it } from 'vitest';
import { AllowlistError, parseAllowlist } from '../../../../main/core/allowlist/load';
import { ARG_TYPE_FIELDS, OPERATION_FIELDS, RECONCILE_FIELDS, approvalDefault, typeFieldNames, type FieldSpec } from '../../../../shared/allowlist/schema';

const op = (fields: string[]) => ['version: 1', 'operations:', '  - name: a', '    command: [/bin/echo, "{s}", "{n}"]', '    args:', '      s: {type: string}', '      n: {type: array, items: {type: integer}}', ...fields.map((f) => `    ${f}`), ''].join('\n');
const parsed = (fields: string[] = []) => parseAllowlist(op(fields)).operations.get('a')!;
function refusal(fields: string[]): string[] {
  try {
    parseAllowlist(op(fields));
  } catch (e) {
    if (e instanceof AllowlistError) return e.problems.map((p) => `${p.field}: ${p.message}`);
    throw e;
  }
  return [];
}
const wholeFields = (fields: Record<string, FieldSpec>) => Object.entries(fields).flatMap(([name, f]) => (f.type.kind === 'whole' ? [[name, f.type] as const] : []));

describe('the allowlist schema', () => {
  it("gives an operation that leaves them out the schema's defaults", () => {
    const a = parsed(['reconcile: {command: [/bin/true]}']);
    for (const [name, t] of [...wholeFields(OPERATION_FIELDS), ['scope', OPERATION_FIELDS.scope.type] as const, ['leaves_processes', OPERATION_FIELDS.leaves_processes.type] as const, ['cwd_shared_with_sandbox', OPERATION_FIELDS.cwd_shared_with_sandbox.type] as const]) {
      expect(a[name as keyof typeof a], name).toBe(t.default);
    }
    expect(a.approval).toBe(approvalDefault(a.scope));
    expect(a.reconcile!.timeout_s).toBe(RECONCILE_FIELDS.timeout_s.type.default);
    expect(a.args.s).toMatchObject({ max_length: ARG_TYPE_FIELDS.string.max_length.type.default, allow_dash: ARG_TYPE_FIELDS.string.allow_dash.type.default });
    expect(a.args.n).toMatchObject({ max_items: ARG_TYPE_FIELDS.array.max_items.type.default });
    expect(a.spools).toBeNull();
  });

  it("accepts each operation's whole number at its bounds and refuses it just outside, saying the bounds", () => {
    for (const [name, t] of wholeFields(OPERATION_FIELDS)) {
      expect(parsed([`${name}: ${t.min}`])[name as 'cost']).toBe(t.min);
      expect(parsed([`${name}: ${t.max}`])[name as 'cost']).toBe(t.max);
      for (const v of [t.min - 1, t.max + 1]) expect(refusal([`${name}: ${v}`])).toEqual([`operations[0].${name}: must be a whole number from ${t.min} to ${t.max}`]);
    }
    const r = RECONCILE_FIELDS.timeout_s.type;
    expect(refusal([`reconcile: {command: [/bin/true], timeout_s: ${r.max + 1}}`])).toEqual([`operations[0].reconcile.timeout_s: must be a whole number from ${r.min} to ${r.max}`]);
    const m = ARG_TYPE_FIELDS.string.max_length.type;
    expect(parseAllowlist(op([]).replace('{type: string}', `{type: string, max_length: ${m.max}}`)).operations.get('a')!.args.s).toMatchObject({ max_length: m.max });
    expect(() => parseAllowlist(op([]).replace('{type: string}', `{type: string, max_length: ${m.min - 1}}`))).toThrow(`must be a whole number from ${m.min} to ${m.max}`);
  });

  it("names the fields of each type only, not of Object.prototype's members", () => {
    expect(typeFieldNames('path')).toEqual(['within', 'must_exist', 'shared_with_sandbox']);
    expect(typeFieldNames('constructor')).toEqual([]);
    expect(typeFieldNames(5)).toEqual([]);
  });

  it('refuses an operation field the schema does not know, listing the ones it does', () => {
    expect(refusal(['timeout: 5'])).toEqual([`operations[0].timeout: unknown field (expected one of: ${Object.keys(OPERATION_FIELDS).join(', ')})`]);
  });
});
