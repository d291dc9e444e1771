// A list of requests as a table: which request (and why), operation, key (and spool, when the home
// has several), state, when, how long, and
// an action for each row. A row opens the request's detail (its id is the link, for the keyboard).
// A run settled by its operation's reconcile check says so.
import type { ReactNode } from 'react';
import type { RequestSummaryView } from '../../../shared/ipc/views';
import { verdictText } from '../../../shared/protocol/reconcileText';
import { visible } from '../../../shared/text/visible';
import { StateBadge } from '../../components/StateBadge';
import { Time } from '../../components/Time';
import { formatDuration } from '../../lib/format';
import { navigate } from '../../stores/route';
import { useSeveralSpools } from '../../stores/spool';

export function RequestTable({
  rows,
  label,
  keyName,
  when,
  action,
  detail,
  showError = false,
}: {
  rows: RequestSummaryView[];
  /** The table's accessible name. */
  label: string;
  keyName: (id: string) => string | undefined;
  when: { title: string; of: (r: RequestSummaryView) => string | null };
  action?: (r: RequestSummaryView) => ReactNode;
  /** More about a row, under its request. */
  detail?: (r: RequestSummaryView) => ReactNode;
  showError?: boolean;
}) {
  const several = useSeveralSpools();
  return (
    <table className="list act-table" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Request</th>
          <th scope="col">Operation</th>
          <th scope="col">Key</th>
          {several ? <th scope="col">Spool</th> : null}
          <th scope="col">State</th>
          <th scope="col">{when.title}</th>
          <th scope="col">Took</th>
          {action ? (
            <th scope="col">
              <span className="offscreen">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.id} className="clickable" onClick={() => navigate('requests', r.id)}>
            <td className="act-request">
              <a href={`#/requests/${encodeURIComponent(r.id)}`} onClick={(e) => e.stopPropagation()}>
                <code>{r.id}</code>
              </a>
              {r.intent ? <div className="act-intent muted">{visible(r.intent)}</div> : null}
              {showError && r.error_message ? <div className={r.state === 'uncertain' ? 'act-why muted' : 'act-error'}>{visible(r.error_message)}</div> : null}
              {detail?.(r)}
            </td>
            <td>
              <code>{r.op}</code>
            </td>
            <td>{keyName(r.key_id) ?? <code className="muted">{r.key_id}</code>}</td>
            {several ? <td>{r.spool}</td> : null}
            <td>
              <StateBadge state={r.state} />
              {r.resolved_by === 'reconcile' ? <span className="act-reconciled muted"> reconciled: {verdictText(r.state === 'succeeded' ? 'applied' : 'not_applied')}</span> : null}
              {r.exit_code !== null && r.exit_code !== 0 ? <span className="muted act-exit"> exit {r.exit_code}</span> : null}
            </td>
            <td>
              <Time iso={when.of(r)} />
            </td>
            <td className="act-num">{formatDuration(r.duration_ms)}</td>
            {action ? (
              <td className="act-actions" onClick={(e) => e.stopPropagation()}>
                {action(r)}
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
