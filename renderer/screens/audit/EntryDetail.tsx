// One audit entry in the side panel: its own fields and details as a table; and for an entry about a
// request, the request in full (arguments, command, output, timings, decision trail). The message and
// details may quote the sandbox: shown escaped (visible.ts).
import { useEffect, useRef } from 'react';
import type { AuditView } from '../../../shared/ipc/views';
import { visible, visibleLines } from '../../../shared/text/visible';
import { Argv } from '../../components/Argv';
import { CopyButton } from '../../components/CopyButton';
import { RequestDetail } from '../../components/RequestDetail';
import { formatTime } from '../../lib/format';
import { GRID_ID } from './AuditTable';
import { kindLabel } from './query';
import { openEntry, setFilters } from './store';

/** A detail's value as text, escaped (it may quote the sandbox); a list as JSON, its elements' bounds kept. */
function value(v: unknown): string {
  if (v === null || v === undefined) return '—';
  return visible(typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v));
}

/** Closes the panel and puts the focus back on the list (else it would fall to the page). */
function close(): void {
  openEntry(null);
  document.getElementById(GRID_ID)?.focus({ preventScroll: true });
}

export function EntryDetail({ entry }: { entry: AuditView }) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    ref.current?.scrollTo({ top: 0 });
  }, [entry.seq]);
  const details = entry.details ? Object.entries(entry.details) : [];
  return (
    <aside className="audit-detail card" aria-labelledby="audit-detail-title" ref={ref} onKeyDown={(e) => e.key === 'Escape' && close()}>
      <div className="detail-head">
        <h2 id="audit-detail-title">
          {kindLabel(entry.kind)} <span className="muted">#{entry.seq}</span>
        </h2>
        <button type="button" className="icon-button" aria-label="Close detail" title="Close (Esc)" onClick={close}>
          ×
        </button>
      </div>
      <p className="audit-message">{visibleLines(entry.message)}</p>
      <dl className="facts">
        <dt>Time</dt>
        <dd>
          <time dateTime={entry.at}>{formatTime(entry.at)}</time>
        </dd>
        <dt>Actor</dt>
        <dd>{entry.actor}</dd>
        {entry.op ? (
          <>
            <dt>Operation</dt>
            <dd>
              <code>{entry.op}</code>
            </dd>
          </>
        ) : null}
        {entry.key_id ? (
          <>
            <dt>Key</dt>
            <dd>
              <code>{entry.key_id}</code>
            </dd>
          </>
        ) : null}
        {entry.spool ? (
          <>
            <dt>Spool</dt>
            <dd>
              <code>{entry.spool}</code>
            </dd>
          </>
        ) : null}
        {entry.request_id ? (
          <>
            <dt>Request</dt>
            <dd>
              <code>{entry.request_id}</code>
            </dd>
          </>
        ) : null}
      </dl>
      <div className="row">
        {entry.request_id ? (
          <>
            <button type="button" onClick={() => setFilters({ text: entry.request_id! })}>
              Search this request
            </button>
            <a className="button" href={`#/requests/${encodeURIComponent(entry.request_id)}`}>
              Open request page
            </a>
          </>
        ) : null}
        <CopyButton text={entry.message} label="Copy message" what="Message" />
      </div>
      {details.length > 0 ? (
        <>
          <h3>Details</h3>
          <table className="kv" aria-label="Entry details">
            <tbody>
              {details.map(([k, v]) => (
                <tr key={k}>
                  <th scope="row">{k.replaceAll('_', ' ')}</th>
                  <td>{Array.isArray(v) && v.every((x) => typeof x === 'string') && k === 'argv' ? <Argv argv={v} /> : <code>{value(v)}</code>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      {entry.request_id ? (
        <section className="audit-request" aria-label={`Request ${entry.request_id}`}>
          <RequestDetail key={entry.request_id} id={entry.request_id} />
        </section>
      ) : null}
    </aside>
  );
}
