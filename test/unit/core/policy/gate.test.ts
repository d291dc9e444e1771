// The gate with a request's own limits: tighter ones reach the plan, larger ones are bad_args, and a
// human's approval of the argv holds whatever the limits. A grant covers a call by the arguments that
// decide its run: defaults filled in and paths resolved, on the approved request as on the call.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gate, type GateInput } from '../../../../main/core/policy/gate';
import { parseAllowlist } from '../../../../main/core/allowlist/load';
import { openLedger, type Db } from '../../../../main/core/ledger/db';
import { Grants } from '../../../../main/core/ledger/grants';
import { Requests } from '../../../../main/core/ledger/requests';
import { settingsSchema } from '../../../../main/core/settings';
import { grantRules } from '../../../../main/core/policy/grantRules';
import type { KeyInfo } from '../../../../main/core/keys/keyStore';

const allowlist = parseAllowlist(
  ['version: 1', 'operations:', '  - name: build', '    command: [/bin/echo, build]', '    timeout_s: 60', '    max_output_bytes: 8192', '    approval: always', ''].join('\n'),
);
const key: KeyInfo = { key_id: 'k_gate', name: 'gate', scope: 'write', ops: null, created_at: new Date().toISOString(), revoked_at: null, rotated_to: null, last_used_at: null, spool: 'default' };

let dir: string;
let db: Db;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-gate-'));
  db = openLedger(path.join(dir, 'ledger.sqlite'));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function input(extra: Partial<GateInput>): GateInput {
  return { allowlist, settings: settingsSchema.parse({}), requests: new Requests(db), grants: new Grants(db), key, op: 'build', args: {}, intent: null, ...extra };
}

describe('gate with per-request limits', () => {
  it('a tighter timeout and output cap are the plan the human is asked about', () => {
    const r = gate(input({ limits: { timeout_s: 5, max_output_bytes: 100 } }));
    expect(r).toMatchObject({ kind: 'ask', plan: { timeout_s: 5, max_output_bytes: 100 } });
  });

  it('a limit larger than the operation\'s is refused as bad_args, before anyone is asked', () => {
    expect(gate(input({ limits: { timeout_s: 61 } }))).toMatchObject({ kind: 'refuse', code: 'bad_args', message: expect.stringMatching(/timeout_s 61 .*timeout_s 60/) });
  });

  it('an approval of the argv holds with the request\'s limits: they are not part of what was approved', () => {
    const asked = gate(input({}));
    expect(asked.kind).toBe('ask');
    const approved = { plan: asked.kind === 'ask' ? asked.plan : null, ceilingOverride: false };
    expect(gate(input({ approved, limits: { timeout_s: 1 } }))).toMatchObject({ kind: 'go', plan: { timeout_s: 1, max_output_bytes: 8192 } });
  });
});

describe('gate with a grant', () => {
  /** `remove` of a path in `root`, with a `mode` whose default is "safe". */
  const removing = (root: string) =>
    parseAllowlist(
      [
        'version: 1',
        'operations:',
        '  - name: remove',
        '    command: [/bin/rm, "--mode={mode}", --, "{path}"]',
        `    cwd: ${JSON.stringify(root)}`,
        '    args:',
        `      path: {type: path, within: [${JSON.stringify(root)}], must_exist: false}`,
        '      mode: {type: string, default: safe}',
        '    approval: always',
        '',
      ].join('\n'),
    );

  it('covers a call whose checked arguments meet its rules: a default left out, a path spelled another way; not another path', () => {
    const root = path.join(dir, 'work');
    mkdirSync(path.join(root, 'sub'), { recursive: true });
    const list = removing(root);
    const shown = gate(input({ allowlist: list, op: 'remove', args: { path: 'a.txt', mode: 'safe' } }));
    expect(shown).toMatchObject({ kind: 'ask', plan: { args: { path: path.join(root, 'a.txt'), mode: 'safe' } } });
    const grants = new Grants(db);
    const g = grants.create(key.key_id, 'remove', grantRules(shown.kind === 'ask' ? shown.plan.args! : {}), 600, 'app');
    const call = (args: Record<string, unknown>) => gate(input({ allowlist: list, grants, op: 'remove', args }));
    expect(call({ path: 'a.txt' })).toMatchObject({ kind: 'go', grant: { id: g.id } });
    expect(call({ path: 'sub/../a.txt', mode: 'safe' })).toMatchObject({ kind: 'go', grant: { id: g.id } });
    expect(call({ path: 'b.txt' }).kind).toBe('ask');
    expect(call({ path: 'a.txt', mode: 'force' }).kind).toBe('ask');
  });
});
