// An interrupted run's reconcile check: the last look-up of whether it took effect (verdict, how it
// ended, when and by whom; its output, in full or a few lines), and Check again, which runs it once
// more and says what it found.
import { useState } from 'react';
import { attemptEnd } from '../../shared/protocol/reconcileText';
import type { ReconcileAttempt } from '../../shared/protocol/types';
import { api, errorText } from '../api';
import { VERDICTS, outputExcerpt } from '../lib/reconcile';
import { toast } from '../stores/toasts';
import { Argv } from './Argv';
import { stateLabel } from './StateBadge';
import { Time } from './Time';

export function AttemptView({ attempt, full = false }: { attempt: ReconcileAttempt; full?: boolean }) {
  const v = VERDICTS[attempt.verdict];
  const out = full ? outputExcerpt(attempt, Infinity, Infinity) : outputExcerpt(attempt);
  return (
    <div className="reconcile-attempt" role="group" aria-label="Last reconcile check">
      <div className="reconcile-line">
        <span className={`badge badge-${v.tone}`} data-verdict={attempt.verdict}>
          {v.label}
        </span>{' '}
        <span className="muted">
          {attemptEnd(attempt)} · checked <Time iso={attempt.at} /> by {attempt.by}
        </span>
      </div>
      {full ? <Argv argv={attempt.argv} /> : null}
      {out.text ? (
        <pre className="output reconcile-output" aria-label="Reconcile check output">
          {out.text}
          {out.cut ? <span className="muted">{'\n'}…</span> : null}
        </pre>
      ) : null}
    </div>
  );
}

/** Runs the reconcile check again; the button says it is checking until the host answers. */
export function CheckAgain({ id, onDone }: { id: string; onDone?: () => void }) {
  const [busy, setBusy] = useState(false);
  const [found, setFound] = useState<string | null>(null);
  const check = async () => {
    if (busy) return;
    setBusy(true);
    setFound(null);
    try {
      const out = await api.requests.checkReconcile({ id });
      const what = out.reconcile ? `${VERDICTS[out.reconcile.verdict].label} (${attemptEnd(out.reconcile)})` : 'No verdict';
      const said = `${what}: ${id} is ${stateLabel(out.state).toLowerCase()}`;
      setFound(said);
      toast(`Checked again. ${said}`);
      onDone?.();
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  const words = busy ? 'Checking…' : 'Check again';
  return (
    <span className="check-again">
      {/* Named by its visible words first (what a voice user says), then which run. */}
      <button type="button" disabled={busy} aria-busy={busy ? true : undefined} onClick={() => void check()} aria-label={`${words}: ${id}`}>
        {words}
      </button>
      <span role="status" className="muted check-again-found">
        {busy ? 'Running the reconcile check…' : found}
      </span>
    </span>
  );
}
