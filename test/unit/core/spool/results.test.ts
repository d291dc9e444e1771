// results.ts: the largest result a run can leave is one both clients read. Its output is at most
// OUTPUT_EXCERPT_BYTES per stream (the executor keeps no more), for the run and for its reconcile
// check, and JSON escapes each control byte as 6 characters: a result of NUL bytes everywhere the
// sandbox can steer is still under the clients' read limit, and opens as the host's.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { TestLedger } from '../../../helpers/ledger';
import { signedResultText } from '../../../../main/core/spool/results';
import { openHostDoc } from '../../../../shared/protocol/hostAuth';
import { MAX_INTENT_CHARS, MAX_REQUEST_BYTES, OUTPUT_EXCERPT_BYTES, type ReconcileAttempt } from '../../../../shared/protocol/types';
import { MAX_RESULT_BYTES } from '../../../../shared/client/spoolFiles';

let ledger: TestLedger;

beforeEach(() => {
  ledger = new TestLedger();
});

afterEach(() => {
  ledger.close();
});

/** dw.py's limit, as it says it (the shared client cases keep the two clients in step). */
function pythonResultLimit(): number {
  const m = /^RESULT_MAX_BYTES = (\d+) \* (\d+) \* (\d+)$/m.exec(readFileSync('shared/client/dw.py', 'utf8'));
  expect(m).not.toBeNull();
  return Number(m![1]) * Number(m![2]) * Number(m![3]);
}

describe('signedResultText', () => {
  it('keeps the largest result a run can make (NUL excerpts from the run and its reconcile check) under both clients\' read limit', () => {
    const key = ledger.keys.create('sandbox', 'write');
    const zeros = '\0'.repeat(OUTPUT_EXCERPT_BYTES);
    // Every argument the sandbox sent, in control bytes, in the argv shown.
    const argv = ['/bin/run', '\x01'.repeat(MAX_REQUEST_BYTES)];
    const attempt: ReconcileAttempt = { at: new Date().toISOString(), argv, exit_code: 0, signal: null, stdout: zeros, stderr: zeros, error: null, verdict: 'applied', by: 'daemon (restart)' };
    ledger.add('big', { key_id: key.key_id, state: 'running', approval: { ...ledger.approval(key.key_id), argv, intent: '\x02'.repeat(MAX_INTENT_CHARS) } });
    const row = ledger.requests.transition('big', ['running'], {
      state: 'succeeded',
      exit_code: 0,
      stdout: zeros,
      stderr: zeros,
      stdout_truncated: 1,
      stderr_truncated: 1,
      resolved_by: 'reconcile',
      reconcile_json: JSON.stringify(attempt),
      log_bytes: 2 * 64 * 1024 * 1024,
      log_sha256: '0'.repeat(64),
    })!;
    const text = signedResultText(row, ledger.keys.signer(key.key_id)!);
    const bytes = Buffer.byteLength(text);
    expect(bytes).toBeGreaterThan(4 * 6 * OUTPUT_EXCERPT_BYTES); // the escaping is as assumed
    expect(bytes).toBeLessThan(MAX_RESULT_BYTES);
    expect(bytes).toBeLessThan(pythonResultLimit());
    const opened = openHostDoc('result', text, ledger.keys.signer(key.key_id)!);
    expect(opened.ok && opened.doc.stdout).toBe(zeros);
  });
});
