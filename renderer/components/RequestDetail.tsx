// One request in full: what was asked, who decided what and when, what ran, its output and timings;
// and what can still be done about it (cancel; kill a run that outlived a host restart; check an
// uncertain run again or resolve it). A plan lists its steps and the requests that used them. What the
// sandbox wrote (intent, arguments, what the host's messages quote of it) is shown escaped (visible.ts).
import { useState } from 'react';
import { visible } from '../../shared/text/visible';
import { api, errorText } from '../api';
import { cancelRequest } from '../lib/cancelRequest';
import { confirmAction } from '../stores/confirm';
import { useKeyName } from '../stores/keys';
import { formatDuration, formatTime } from '../lib/format';
import { useLoad } from '../lib/useLoad';
import { useLiveOutput } from '../lib/useLiveOutput';
import { navigate } from '../stores/route';
import { toast } from '../stores/toasts';
import { useHostVersion, useStatus } from '../stores/status';
import { stepsUsed } from '../lib/plans';
import { ArgsTable } from './ArgsTable';
import { Argv } from './Argv';
import { PlanSteps } from './PlanSteps';
import { AttemptView, CheckAgain } from './ReconcileCheck';
import { StateBadge } from './StateBadge';
import { Time } from './Time';
import { EmptyState } from './EmptyState';
import { ORPHAN_ENDS_BY_ITSELF, OrphanBadge } from './OrphanBadge';

export function RequestDetail({ id }: { id: string }) {
  // Reload whenever the host's state changes, so the page follows the request through its life.
  const version = useHostVersion();
  const req = useLoad(() => api.requests.get({ id }), [id], version);
  const trail = useLoad(() => api.audit.search({ requestId: id, limit: 200 }), [id], version);
  const r = req.data;
  const keyName = useKeyName(r?.key_id ?? '');
  const live = useLiveOutput(id, r?.state === 'running');
  const reconcilable = useStatus((s) => s.uncertain.some((u) => u.id === id && u.reconcilable)) ?? false;
  if (req.error) return <p className="error-text">{req.error}</p>;
  if (r === undefined) return <p className="muted">Loading…</p>;
  if (r === null) return <EmptyState title={`No request ${id}`}>It may have been removed by retention, or the id is mistyped.</EmptyState>;

  const cancel = async () => {
    if (await cancelRequest(r)) req.reload();
  };
  const orphan = r.state === 'running' && r.orphaned;

  return (
    <div className="detail">
      <div className="detail-head">
        <h2>
          <code>{r.op}</code> <StateBadge state={r.state} />
        </h2>
        <div className="detail-actions">
          {r.state === 'awaiting_approval' ? (
            <button type="button" className="primary" onClick={() => navigate('approvals', id)}>
              Decide…
            </button>
          ) : null}
          {r.state === 'queued' || r.state === 'running' || r.state === 'awaiting_approval' ? (
            <button type="button" className="danger" onClick={() => void cancel()}>
              {orphan ? 'Kill' : 'Cancel'}
            </button>
          ) : null}
        </div>
      </div>
      <dl className="facts">
        <dt>Request</dt>
        <dd>
          <code>{r.id}</code>
          {r.wire_id ? (
            <>
              {' '}
              (its sandbox calls it <code>{r.wire_id}</code>)
            </>
          ) : null}
        </dd>
        <dt>Key</dt>
        <dd>
          {keyName} <code>{r.key_id}</code>
        </dd>
        {r.intent ? (
          <>
            <dt>Why (from the agent)</dt>
            <dd>{visible(r.intent)}</dd>
          </>
        ) : null}
        <dt>Created</dt>
        <dd>{formatTime(r.created_at)}</dd>
        <dt>Claimed</dt>
        <dd>{formatTime(r.claimed_at)}</dd>
        <dt>Started</dt>
        <dd>{formatTime(r.started_at)}</dd>
        <dt>Finished</dt>
        <dd>{formatTime(r.finished_at)}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(r.duration_ms)}</dd>
        {r.exit_code !== null ? (
          <>
            <dt>Exit code</dt>
            <dd>{r.exit_code}</dd>
          </>
        ) : null}
        {r.decided_by ? (
          <>
            <dt>Decided by</dt>
            <dd>{r.decided_by}</dd>
          </>
        ) : null}
        {r.plan_id ? (
          <>
            <dt>Step of plan</dt>
            <dd>
              <a href={`#/requests/${encodeURIComponent(r.plan_id)}`}>
                <code>{r.plan_id}</code>
              </a>
            </dd>
          </>
        ) : null}
        {r.resolved_by ? (
          <>
            <dt>Settled by</dt>
            <dd>{r.resolved_by === 'reconcile' ? 'its operation’s reconcile check' : 'a person'}</dd>
          </>
        ) : null}
      </dl>
      {orphan ? (
        <div className="callout callout-warn" role="note">
          <OrphanBadge />
          <p>
            The host that started this run stopped without ending it, and the host running now watches it; what the run wrote since then is
            not shown. Kill ends every process it started; {ORPHAN_ENDS_BY_ITSELF}.
          </p>
        </div>
      ) : null}
      {r.error && r.state !== 'uncertain' ? (
        <div className="callout callout-bad" role="alert">
          <strong>{r.error.code}</strong>: {visible(r.error.message)}
        </div>
      ) : null}
      {r.state === 'uncertain' ? <ResolveUncertain id={id} reconcilable={reconcilable} onDone={req.reload} /> : null}
      {r.reconcile ? (
        <>
          <h3>Reconcile check</h3>
          {r.resolved_by === 'reconcile' ? <p className="muted">Its verdict settled this run.</p> : null}
          <AttemptView attempt={r.reconcile} full />
        </>
      ) : null}
      {r.steps ? (
        <>
          <h3>Plan steps</h3>
          <p className="muted">
            {stepsUsed(r.steps)} of {r.steps.length} used. Each step runs once, without asking again, for a request of the same key with its exact
            operation and arguments{r.expires_at ? `, until ${formatTime(r.expires_at)}` : ''}.
          </p>
          <PlanSteps steps={r.steps} uses />
        </>
      ) : (
        <>
          <h3>Arguments</h3>
          <ArgsTable args={r.args} />
        </>
      )}
      {r.plan && r.plan.argv.length > 0 ? (
        <>
          <h3>Command</h3>
          <Argv argv={r.plan.argv} cwd={r.plan.cwd} />
        </>
      ) : null}
      <h3>Output</h3>
      {r.state === 'running' ? (
        <pre className="output" aria-label="Live output" aria-live="off">
          {live || 'Waiting for output…'}
        </pre>
      ) : (
        <Output stdout={r.stdout} stderr={r.stderr} />
      )}
      <h3>Decision trail</h3>
      {trail.data && trail.data.length > 0 ? (
        <ol className="trail">
          {[...trail.data].reverse().map((a) => (
            <li key={a.seq}>
              <Time iso={a.at} /> <span className="trail-kind">{a.kind.replaceAll('_', ' ')}</span> <span className="muted">by {a.actor}</span>
              <div>{visible(a.message)}</div>
            </li>
          ))}
        </ol>
      ) : (
        <p className="muted">No audit entries for this request.</p>
      )}
    </div>
  );
}

function Output({ stdout, stderr }: { stdout: string; stderr: string }) {
  if (!stdout && !stderr) return <p className="muted">No output.</p>;
  return (
    <>
      {stdout ? (
        <pre className="output" aria-label="Standard output">
          {stdout}
        </pre>
      ) : null}
      {stderr ? (
        <pre className="output output-err" aria-label="Standard error">
          {stderr}
        </pre>
      ) : null}
    </>
  );
}

/** An `uncertain` run: the host crashed while it ran, and nothing could tell whether it took effect. */
function ResolveUncertain({ id, reconcilable, onDone }: { id: string; reconcilable: boolean; onDone: () => void }) {
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const resolve = async (outcome: 'succeeded' | 'failed') => {
    const sure = await confirmAction({
      title: `Record that it ${outcome}?`,
      body: `The agent is told that request ${id} ${outcome}. This cannot be changed afterwards.`,
      confirmLabel: outcome === 'succeeded' ? 'It succeeded' : 'It failed',
    });
    if (!sure) return;
    setBusy(true);
    try {
      await api.requests.resolve({ id, outcome, note });
      toast(`Marked as ${outcome}`);
      onDone();
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="callout callout-warn">
      <p>
        <strong>This run was cut short by a host crash.</strong> Dumbwaiter never re-runs it: check whether it took effect, then record what you
        found. The agent sees your verdict.
        {reconcilable ? ' Its operation can look the effect up: Check again runs that look-up once more.' : null}
      </p>
      {reconcilable ? (
        <div className="row">
          <CheckAgain id={id} onDone={onDone} />
        </div>
      ) : null}
      <label className="inline-field">
        Note <input value={note} onChange={(e) => setNote(e.target.value)} placeholder="What you checked (optional)" maxLength={2000} />
      </label>
      <div className="row">
        <button type="button" className="primary" disabled={busy} onClick={() => void resolve('succeeded')}>
          It succeeded
        </button>
        <button type="button" disabled={busy} onClick={() => void resolve('failed')}>
          It failed
        </button>
      </div>
    </div>
  );
}
