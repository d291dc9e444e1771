// Refusals of queue junk, on a real ledger and a real spool: the first ones of a pass told one by
// one, the rest counted per step, every one accounted for; result files for unbound ids up to the
// pass's budget; each step's entries in one commit.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Refusals, type Refusal } from '../../../../main/core/daemon/refusals';
import { ResultWriter, unboundRejection } from '../../../../main/core/spool/results';
import { createSpool, type SpoolPaths } from '../../../../main/core/spool/layout';
import { scopedLogger } from '../../../../main/core/log';
import { TestLedger } from '../../../helpers/ledger';

let l: TestLedger;
let spool: SpoolPaths;
let refusals: Refusals;

beforeEach(() => {
  l = new TestLedger();
  spool = createSpool(path.join(l.dir, 'spool'));
  refusals = new Refusals(l.audit, new ResultWriter('default', spool, l.requests, () => null), scopedLogger('test'), 'default');
});
afterEach(() => {
  l.close();
  rmSync(l.dir, { recursive: true, force: true });
});

/** A refusal like the daemon's for a badly named file, or (with an id) for a validly named one. */
function junk(i: number, id = false): Refusal {
  const name = id ? `j-${i}` : `junk ${i}`;
  return {
    entry: { kind: 'rejected', request_id: id ? name : null, message: `bad_envelope: queue entry ${JSON.stringify(name)} is junk`, details: { code: 'bad_envelope', file: name, reason: 'is junk' } },
    line: `queue entry ${name} is junk`,
    result: id ? unboundRejection(name, null, 'bad_envelope', 'the request file is junk') : null,
  };
}

const rejected = () => l.audit.search({ kind: 'rejected', limit: 10_000 });
const accounted = () => rejected().reduce((n, a) => n + (typeof a.details?.count === 'number' ? a.details.count : 1), 0);

describe('Refusals', () => {
  it('records nothing until the step ends, then the first 16 of the pass one by one and the rest in one counted entry', () => {
    for (let i = 0; i < 100; i++) refusals.add(junk(i));
    expect(rejected()).toEqual([]);
    refusals.flush();
    const entries = rejected();
    expect(entries).toHaveLength(17);
    const counted = entries.find((a) => a.details?.count !== undefined)!;
    expect(counted.details).toMatchObject({ code: 'bad_envelope', count: 84, codes: { bad_envelope: 84 }, reasons: { 'is junk': 84 } });
    expect(counted.message).toContain('"junk 16"');
    expect(accounted()).toBe(100);
  });

  it('counts every later step of a pass, and tells the first ones again in the next pass', () => {
    for (let step = 0; step < 3; step++) {
      for (let i = 0; i < 10; i++) refusals.add(junk(step * 10 + i));
      refusals.flush();
    }
    expect(rejected()).toHaveLength(16 + 2); // 16 told; the 4 rest of step 2 and the 10 of step 3 counted
    refusals.endPass();
    refusals.add(junk(99));
    refusals.flush();
    expect(rejected().filter((a) => a.details?.count === undefined)).toHaveLength(17);
    expect(accounted()).toBe(31);
  });

  it('labels a counted entry with the codes of what it counts: their common code, or each code with its count', () => {
    /** A refusal as intake makes it, after reading: a code and no reason. */
    const refused = (i: number, code: string): Refusal => ({
      entry: { kind: 'rejected', request_id: `r-${i}`, message: `${code}: ...`, details: { code } },
      line: `rejected r-${i}: ${code}`,
      result: null,
    });
    for (let i = 0; i < 20; i++) refusals.add(refused(i, 'bad_signature'));
    refusals.flush();
    expect(rejected().find((a) => a.details?.count !== undefined)!.details).toMatchObject({ code: 'bad_signature', count: 4, codes: { bad_signature: 4 } });
    refusals.add(refused(20, 'unknown_key'));
    refusals.add(refused(21, 'bad_signature'));
    refusals.add(junk(22));
    refusals.flush();
    const mixed = rejected().find((a) => a.details?.count === 3)!;
    expect(mixed.details).toEqual({ count: 3, codes: { unknown_key: 1, bad_signature: 1, bad_envelope: 1 }, reasons: { unknown_key: 1, bad_signature: 1, 'is junk': 1 } });
    expect(mixed.message).toContain('1 unknown_key; 1 bad_signature; 1 is junk');
  });

  it('writes result files for the first 64 unbound ids of a pass only', () => {
    for (let i = 0; i < 100; i++) refusals.add(junk(i, true));
    refusals.endPass();
    expect(readdirSync(spool.results).filter((n) => n.endsWith('.json'))).toHaveLength(64);
    refusals.add(junk(100, true));
    expect(readdirSync(spool.results)).toContain('j-100.json');
    expect(accounted()).toBe(100);
  });
});
