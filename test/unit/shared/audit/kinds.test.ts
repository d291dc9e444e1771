// The one list of audit kinds: the type makes every kind the host writes appear in it (tsc); what is
// left to check is that each appears once and says what it records.
import { describe, expect, it } from 'vitest';
import { AUDIT_KINDS } from '../../../../shared/audit/kinds';

describe('AUDIT_KINDS', () => {
  it('lists each kind once, each with what it records', () => {
    const kinds = AUDIT_KINDS.map((k) => k.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    for (const { kind, about } of AUDIT_KINDS) {
      expect(kind).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(about.length).toBeGreaterThan(10);
    }
  });
});
