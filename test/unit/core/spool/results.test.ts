// results.ts: the largest result a run can leave is one both clients read. Its output is at most
// OUTPUT_EXCERPT_BYTES per stream, for the run and for its reconcile check, whatever the ledger row
// holds (one written before the executor kept no more may hold 64 MiB), and JSON escapes each control
// byte as 6 characters: a result of NUL bytes everywhere the sandbox can steer is still under the
// clients' read limit, and opens as the host's.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { TestLedger } from '../../../helpers/ledger';
import { resultDocOf, signedResultText } from '../../../../main/core/spool/results';
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
  it('keeps the largest result a run can make (NUL output from the run and its reconcile check) under both clients\' read limit', () => {
    const key = ledger.keys.create('sandbox', 'write');
    const excerpt = '\0'.repeat(OUTPUT_EXCERPT_BYTES);
    const zeros = excerpt.repeat(8);
    // Every argument the sandbox sent, in control bytes, in the argv shown.
    const argv = ['/bin/run', '\x01'.repeat(MAX_REQUEST_BYTES)];
    const attempt: ReconcileAttempt = { at: new Date().toISOString(), argv, exit_code: 0, signal: null, stdout: zeros, stderr: zeros, error: null, verdict: 'applied', by: 'daemon (restart)' };
    ledger.add('big', { key_id: key.key_id, state: 'running', approval: { ...ledger.approval(key.key_id), argv, intent: '\x02'.repeat(MAX_INTENT_CHARS) } });
    const row = ledger.move('big', 'succeeded', {
      exit_code: 0,
      stdout: zeros,
      stderr: zeros,
      stdout_truncated: 1,
      stderr_truncated: 1,
      resolved_by: 'reconcile',
      reconcile_json: JSON.stringify(attempt),
      log_bytes: 2 * 64 * 1024 * 1024,
      log_sha256: '0'.repeat(64),
    });
    const text = signedResultText(row, ledger.keys.signer(key.key_id)!);
    const bytes = Buffer.byteLength(text);
    expect(bytes).toBeGreaterThan(4 * 6 * OUTPUT_EXCERPT_BYTES); // the escaping is as assumed
    expect(bytes).toBeLessThan(MAX_RESULT_BYTES);
    expect(bytes).toBeLessThan(pythonResultLimit());
    const opened = openHostDoc('result', text, ledger.keys.signer(key.key_id)!);
    expect(opened.ok && opened.doc.stdout).toBe(excerpt);
  });

  it('carries only the tail of an output a ledger row written before the excerpt holds in full, and says it was cut', () => {
    const key = ledger.keys.create('sandbox', 'write');
    const big = '\0'.repeat(2 * OUTPUT_EXCERPT_BYTES) + 'é'.repeat(OUTPUT_EXCERPT_BYTES / 2) + 'end';
    const attempt: ReconcileAttempt = { at: new Date().toISOString(), argv: ['check'], exit_code: 0, signal: null, stdout: big, stderr: 'short', error: null, verdict: 'applied', by: 'daemon (restart)' };
    ledger.add('old', { key_id: key.key_id, state: 'running' });
    const row = ledger.move('old', 'succeeded', { exit_code: 0, stdout: big, stderr: 'fine', resolved_by: 'reconcile', reconcile_json: JSON.stringify(attempt) });
    const doc = resultDocOf(row);
    // The last OUTPUT_EXCERPT_BYTES: 'end', whole é's, and the second byte of one more (U+FFFD).
    const tail = '\ufffd' + 'é'.repeat(OUTPUT_EXCERPT_BYTES / 2 - 2) + 'end';
    expect(doc).toMatchObject({ stdout: tail, stdout_truncated: true, stderr: 'fine', stderr_truncated: false });
    expect(doc.reconcile).toMatchObject({ stdout: tail, stderr: 'short', verdict: 'applied' });
  });
});
