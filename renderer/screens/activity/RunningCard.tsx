// A run in progress: what it is, for how long it has run, the end of its output as it is written,
// and a way to stop it. An orphaned run (it outlived a host restart; the new host watches it) says so,
// and is killed rather than stopped.
import { SpoolBadge } from '../../components/SpoolSwitcher';
import { useEffect, useRef, useState } from 'react';
import type { RequestSummaryView } from '../../../shared/ipc/views';
import { visible } from '../../../shared/text/visible';
import { formatDuration, formatTime } from '../../lib/format';
import { useLiveOutput } from '../../lib/useLiveOutput';
import { ORPHAN_ENDS_BY_ITSELF, OrphanBadge } from '../../components/OrphanBadge';

/** Enough to see what it is doing; the detail shows the rest. */
const TAIL_LINES = 14;

export function RunningCard({
  run,
  orphaned,
  keyName,
  onCancel,
  cancelling,
}: {
  run: RequestSummaryView;
  orphaned: boolean;
  keyName: string | undefined;
  onCancel: () => void;
  cancelling: boolean;
}) {
  const live = useLiveOutput(run.id, true);
  const tail = live.split('\n').slice(-TAIL_LINES - 1).join('\n').replace(/\n$/, '');
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    if (pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [tail]);
  const titleId = `run-${run.id}`;
  return (
    <li className={orphaned ? 'run-card run-orphaned' : 'run-card'} aria-labelledby={titleId}>
      <div className="run-head">
        <div className="run-title" id={titleId}>
          <span className="run-spinner" aria-hidden="true" />
          <code className="run-op">{run.op}</code>
          <a href={`#/requests/${encodeURIComponent(run.id)}`} className="run-id">
            {run.id}
          </a>
        </div>
        <div className="run-meta muted">
          {keyName ?? run.key_id} <SpoolBadge spool={run.spool} /> · <span title={formatTime(run.started_at)}>for <Elapsed since={run.started_at} /></span>
        </div>
        {orphaned ? (
          <button type="button" className="danger" onClick={onCancel} disabled={cancelling} aria-label={`Kill ${run.id}`}>
            {cancelling ? 'Killing…' : 'Kill'}
          </button>
        ) : (
          <button type="button" className="danger" onClick={onCancel} disabled={cancelling} aria-label={`Cancel ${run.id}`}>
            {cancelling ? 'Cancelling…' : 'Cancel'}
          </button>
        )}
      </div>
      {orphaned ? (
        <div className="run-orphan-note">
          <OrphanBadge />{' '}
          <span className="muted">
            The host that started it stopped without ending it, and what it wrote since is not shown. Kill ends it; {ORPHAN_ENDS_BY_ITSELF}.
          </span>
        </div>
      ) : null}
      {run.intent ? <div className="run-intent muted">{visible(run.intent)}</div> : null}
      <pre ref={pre} className="output run-output" aria-label={`Live output of ${run.id}`}>
        {tail || <span className="muted">No output yet.</span>}
      </pre>
    </li>
  );
}

function Elapsed({ since }: { since: string | null }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  if (!since) return <>—</>;
  const ms = Math.max(0, now - Date.parse(since));
  // Whole seconds while it counts up: a ticking "3.4 s" would only flicker.
  return <>{ms < 60_000 ? `${Math.floor(ms / 1000)} s` : formatDuration(ms)}</>;
}
